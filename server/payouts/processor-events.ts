import type { Mode } from '../db/schema.js';
import type { ProcessorEventHandler } from '../processor/events-route.js';
import type { PayoutService } from './payouts.js';

/**
 * Applies the processor's `payout.*` events, which come from the merchants' connected accounts
 * (Connect events name the account). The payout is re-read from that account rather than taken
 * from the event, so late or repeated events never move it backwards.
 */
export function payoutEventHandler(payouts: PayoutService): ProcessorEventHandler {
  return async (event, mode: Mode) => {
    if (!event.type.startsWith('payout.') || !event.account || event.subject.kind !== 'payout') return;
    await payouts.onPayoutEvent(event.subject.id, event.account, mode);
  };
}
