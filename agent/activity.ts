import type { ReaderActivity } from '../shared/agent-protocol.js';
import type { ReaderActionState } from '../shared/api/types.js';

/** A reader's action as the server's agent-facing state endpoint reports it from the processor. */
export type ProcessorAction = ReaderActionState;

export interface Observation {
  activity: ReaderActivity;
  transaction_id: string | null;
  failure_code: string | null;
  /** Identifies one outcome of one action, so an outcome already shown and cleared is not shown again. */
  outcome_key: string | null;
}

export const IDLE: Observation = { activity: 'idle', transaction_id: null, failure_code: null, outcome_key: null };

/**
 * The processor's reader action, as what the reader is doing: no action is idle; an action in
 * progress waits for a card until its intent is `processing` (a card was presented); a finished
 * action is approved, or canceled on the reader (`customer_canceled`), or declined.
 */
export function activityOf(action: ProcessorAction | null): Observation {
  if (!action) return IDLE;
  const base = { transaction_id: action.transaction_id, outcome_key: null };
  if (action.status === 'in_progress') {
    return { ...base, activity: action.payment_intent_status === 'processing' ? 'processing' : 'waiting_for_card', failure_code: null };
  }
  const outcome_key = `${action.payment_intent_id ?? ''}:${action.status}:${action.failure_code ?? ''}`;
  if (action.status === 'succeeded') return { ...base, activity: 'approved', failure_code: null, outcome_key };
  const canceled = action.failure_code === 'customer_canceled';
  return { ...base, activity: canceled ? 'canceled_on_reader' : 'declined', failure_code: action.failure_code, outcome_key };
}

export function isBusy(activity: ReaderActivity): boolean {
  return activity === 'waiting_for_card' || activity === 'processing';
}

export function isOutcome(activity: ReaderActivity): boolean {
  return activity === 'approved' || activity === 'declined' || activity === 'canceled_on_reader';
}
