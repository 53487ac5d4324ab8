/**
 * Counter payments are taken at the till, on a reader or in cash; everything else (payment links,
 * hosted pages, the API) is online. The list API's `channel` filter and the counter's History draw
 * the line here; a payment's method never changes, so neither does its channel.
 */
export const COUNTER_PAYMENT_METHODS = ['terminal', 'cash'] as const;

export function isCounterMethod(paymentMethodType: string): boolean {
  return (COUNTER_PAYMENT_METHODS as readonly string[]).includes(paymentMethodType);
}
