import type { DisputeStatus } from '../db/schema.js';

/** Where a dispute ends: Stripe's final statuses. Nothing moves a dispute out of one. */
const CLOSED: ReadonlySet<string> = new Set(['won', 'lost', 'warning_closed', 'prevented']);

export function isClosed(status: string): boolean {
  return CLOSED.has(status);
}

/**
 * A payment may not be refunded while a formal dispute of it is open (its money is already held for
 * the cardholder: a refund would return it twice) or once that dispute is lost (it went back with
 * the chargeback), as Stripe refuses (`charge_disputed`). An inquiry (`warning_*`) takes no money,
 * and refunding it is how a merchant may settle it; after a won dispute the money is the merchant's
 * again.
 */
export function refusesRefund(status: string | null): boolean {
  return status !== null && !status.startsWith('warning_') && status !== 'won' && status !== 'prevented';
}

/** Stripe's statuses as ours; a status Stripe adds later is kept as the nearest we know. */
export function disputeStatusOf(status: string): DisputeStatus {
  switch (status) {
    case 'warning_needs_response':
    case 'warning_under_review':
    case 'warning_closed':
    case 'needs_response':
    case 'under_review':
    case 'appeal_needs_response':
    case 'appeal_under_review':
    case 'won':
    case 'lost':
    case 'prevented':
      return status;
    default:
      return status.startsWith('warning_') ? 'warning_under_review' : 'under_review';
  }
}

/** Whether evidence may still be staged or submitted, and the dispute accepted. */
export function awaitsResponse(status: string): boolean {
  return status === 'needs_response' || status === 'warning_needs_response' || status === 'appeal_needs_response';
}
