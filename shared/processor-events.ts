/**
 * The processor's events a pos server handles, and so the events its webhook endpoints subscribe
 * to: the server registers them on the embedded simulator, `pos simulator env` on a standalone one,
 * and an operator on Stripe's dashboard (docs/processor.md). Any other event would only be sent,
 * verified and acknowledged: on the simulator, a round trip per payment for nothing.
 */

/** The platform's events: everything the server learns about outcomes arrives as one of these. */
export const PROCESSOR_EVENTS = [
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
  'payment_intent.processing',
  'payment_intent.requires_action',
  'payment_intent.amount_capturable_updated',
  'charge.refunded',
  'charge.succeeded',
  'charge.dispute.created',
  'charge.dispute.updated',
  'charge.dispute.closed',
  'charge.dispute.funds_withdrawn',
  'charge.dispute.funds_reinstated',
  'refund.created',
  'refund.updated',
  'refund.failed',
  'terminal.reader.action_succeeded',
  'terminal.reader.action_failed',
  'terminal.reader.action_updated',
  'capability.updated',
  'account.updated',
] as const;

/**
 * Events of the merchants' connected accounts (Stripe Connect): their onboarding and their payouts
 * happen there, so these reach a Connect endpoint, whose events name the account they happened on.
 */
export const PROCESSOR_CONNECT_EVENTS = ['account.updated', 'payout.created', 'payout.updated', 'payout.paid', 'payout.failed', 'payout.canceled'] as const;
