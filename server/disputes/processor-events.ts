import type { Mode } from '../db/schema.js';
import type { ProcessorEventHandler } from '../processor/events-route.js';
import type { DisputeService } from './disputes.js';

/**
 * Applies the processor's `charge.dispute.*` events. The dispute is re-read from the processor
 * rather than taken from the event: events may arrive late, twice or out of order, and a dispute
 * only moves to what the processor says now.
 */
export function disputeEventHandler(disputes: DisputeService): ProcessorEventHandler {
  return async (event, mode: Mode) => {
    if (!event.type.startsWith('charge.dispute.') || event.subject.kind !== 'dispute') return;
    await disputes.onDisputeEvent(event.subject.id, mode, event.type);
  };
}
