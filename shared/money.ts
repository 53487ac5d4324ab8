/**
 * Money is integer minor units plus a lowercase ISO 4217 code, end to end. These are the currencies
 * the platform accepts: Stripe's most used settlement currencies. Zero-decimal ones are marked so
 * amounts are formatted (and parsed by the CLI) correctly.
 */
export const CURRENCIES = {
  usd: 2, eur: 2, gbp: 2, cad: 2, aud: 2, nzd: 2, chf: 2, sek: 2, nok: 2, dkk: 2, pln: 2, czk: 2,
  huf: 2, ron: 2, bgn: 2, mxn: 2, brl: 2, sgd: 2, hkd: 2, inr: 2, myr: 2, thb: 2, zar: 2, aed: 2,
  ils: 2, try: 2, php: 2, idr: 2, jpy: 0, krw: 0, vnd: 0, clp: 0, isk: 0, ugx: 0,
} as const satisfies Record<string, number>;

export type Currency = keyof typeof CURRENCIES;

export function isCurrency(code: string): code is Currency {
  return Object.hasOwn(CURRENCIES, code);
}

export function currencyDecimals(code: string): number {
  return isCurrency(code) ? CURRENCIES[code] : 2;
}

/** 4750 usd → "$47.50"; for people, never for computation. */
export function formatAmount(amount: number, currency: string, locale = 'en-US'): string {
  const decimals = currencyDecimals(currency);
  return new Intl.NumberFormat(locale, { style: 'currency', currency: currency.toUpperCase(), minimumFractionDigits: decimals, maximumFractionDigits: decimals }).format(
    amount / 10 ** decimals,
  );
}
