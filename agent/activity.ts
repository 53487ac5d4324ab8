import type { ReaderActivity } from '../shared/agent-protocol.js';
import type { ReaderStatePush } from '../shared/agent-upstream.js';

export interface Observation {
  activity: ReaderActivity;
  transaction_id: string | null;
  failure_code: string | null;
  /** Identifies one outcome of one action, so an outcome already shown and cleared is not shown again. */
  outcome_key: string | null;
}

export const IDLE: Observation = { activity: 'idle', transaction_id: null, failure_code: null, outcome_key: null };

/**
 * A reader's action as the server pushes it (docs/agent-protocol.md, `reader_state`), as what the
 * reader is doing. An outcome older than `holdMs` at `now` is over: a reconnect's snapshot does not
 * bring back a result the counter showed long ago.
 */
export function observationOf(state: Pick<ReaderStatePush, 'activity' | 'action'>, now: number, holdMs: number): Observation {
  const action = state.action;
  if (!action || state.activity === 'idle') return IDLE;
  const base = { activity: state.activity, transaction_id: action.transaction_id, failure_code: action.failure_code };
  if (!isOutcome(state.activity)) return { ...base, outcome_key: null };
  if (Date.parse(action.updated_at) + holdMs < now) return IDLE;
  return { ...base, outcome_key: `${action.payment_intent_id ?? ''}:${action.status}:${action.failure_code ?? ''}` };
}

export function isBusy(activity: ReaderActivity): boolean {
  return activity === 'waiting_for_card' || activity === 'processing';
}

export function isOutcome(activity: ReaderActivity): boolean {
  return activity === 'approved' || activity === 'declined' || activity === 'canceled_on_reader';
}
