import { describe, expect, it } from 'vitest';
import type { ReaderActionState, ReaderStatePush } from '../shared/agent-upstream.js';
import { observationOf } from './activity.js';

const NOW = Date.parse('2026-11-25T12:00:00Z');
const HOLD = 10_000;

const state = (activity: ReaderStatePush['activity'], patch: Partial<ReaderActionState> = {}): Pick<ReaderStatePush, 'activity' | 'action'> => ({
  activity,
  action:
    activity === 'idle'
      ? null
      : {
          type: 'process_payment_intent',
          status: 'in_progress',
          payment_intent_id: 'pi_1',
          transaction_id: 't1',
          amount: 500,
          currency: 'usd',
          card_presented: false,
          failure_code: null,
          failure_message: null,
          updated_at: new Date(NOW - 1_000).toISOString(),
          ...patch,
        },
});

describe('observationOf', () => {
  it('takes what the server says the reader is doing', () => {
    expect(observationOf(state('idle'), NOW, HOLD).activity).toBe('idle');
    expect(observationOf(state('waiting_for_card'), NOW, HOLD)).toMatchObject({ activity: 'waiting_for_card', transaction_id: 't1', outcome_key: null });
    expect(observationOf(state('approved', { status: 'succeeded' }), NOW, HOLD)).toMatchObject({ activity: 'approved', transaction_id: 't1' });
    expect(observationOf(state('canceled_on_reader', { status: 'failed', failure_code: 'customer_canceled' }), NOW, HOLD)).toMatchObject({ failure_code: 'customer_canceled' });
  });

  it('keys each outcome so a cleared one is recognised, and drops outcomes older than the hold', () => {
    const approved = observationOf(state('approved', { status: 'succeeded' }), NOW, HOLD);
    expect(approved.outcome_key).toBe(observationOf(state('approved', { status: 'succeeded' }), NOW, HOLD).outcome_key);
    expect(approved.outcome_key).not.toBe(observationOf(state('declined', { status: 'failed', failure_code: 'x' }), NOW, HOLD).outcome_key);
    expect(observationOf(state('approved', { status: 'succeeded', updated_at: new Date(NOW - HOLD - 1).toISOString() }), NOW, HOLD).activity).toBe('idle');
  });
});
