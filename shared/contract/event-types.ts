/**
 * Event kinds pos emits: spec §6.2's payment events and its `payout.*`, `customer.*` and `dispute.*`
 * families (their names follow Stripe's), plus the refund family. Every event's data carries
 * `is_test`. `payment.authorized` marks a manual-capture payment ready to capture.
 */
export const EVENT_TYPES = [
  'payment.created',
  'payment.authorized',
  'payment.succeeded',
  'payment.failed',
  'payment.canceled',
  'payment.refunded',
  'payment.partially_refunded',
  'refund.created',
  'refund.succeeded',
  'refund.failed',
  'dispute.created',
  'dispute.updated',
  'dispute.closed',
  'dispute.funds_withdrawn',
  'dispute.funds_reinstated',
  'payout.created',
  'payout.updated',
  'payout.paid',
  'payout.failed',
  'payout.canceled',
  'customer.created',
  'customer.updated',
  'customer.deleted',
  // The merchant's connected account changed what it can do or needs (server/accounts/onboarding.ts).
  'merchant.updated',
  // Reader presence as the on-premise agent reports it (docs/agent-protocol.md).
  'terminal.reader.online',
  'terminal.reader.offline',
  // An endpoint disabled for failing, told to the merchant's other endpoints (server/webhooks/queue.ts).
  'webhook_endpoint.disabled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Whether an endpoint's filter names something pos sends: `*`, an event type, or a family of them
 * (`payment.*`, `terminal.*`, `terminal.reader.*`: a prefix ending at a dot of some type). A filter
 * that could never match is refused, so an endpoint cannot silently never fire.
 */
export function isEventFilter(filter: string): boolean {
  if (filter === '*') return true;
  if (filter.endsWith('.*')) {
    const prefix = filter.slice(0, -1);
    return EVENT_TYPES.some((type) => type.startsWith(prefix));
  }
  return (EVENT_TYPES as readonly string[]).includes(filter);
}
