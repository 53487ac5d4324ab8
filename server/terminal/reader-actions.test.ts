import { describe, expect, it } from 'vitest';
import { decide, type ActionUpdate } from './reader-actions.js';

const T = 1_700_000_000_000;

type Stored = Parameters<typeof decide>[0];

const stored = (patch: Partial<Stored> = {}): Stored => ({
  action_type: 'process_payment_intent',
  action_status: 'in_progress',
  action_payment_intent_id: 'pi_B',
  action_previous_payment_intent_id: 'pi_A',
  action_card_presented: 0,
  action_failure_code: null,
  action_failure_message: null,
  action_processor_at: T,
  action_updated_at: T,
  ...patch,
});

const event = (patch: Partial<ActionUpdate>, at: number): ActionUpdate => ({
  type: 'process_payment_intent',
  status: 'in_progress',
  paymentIntentId: 'pi_B',
  cardPresented: false,
  failureCode: null,
  failureMessage: null,
  source: { kind: 'event', at },
  ...patch,
});

describe('decide: which news about a reader’s action counts', () => {
  it('moves one payment forward only, and ignores what it already knows', () => {
    expect(decide(stored(), event({ cardPresented: true }, T))).toBe('apply');
    expect(decide(stored(), event({ status: 'succeeded' }, T))).toBe('apply');
    expect(decide(stored({ action_status: 'succeeded' }), event({ cardPresented: true }, T))).toBe('ignore');
    expect(decide(stored(), event({}, T + 5_000))).toBe('ignore');
  });

  it('drops an outcome of an earlier attempt of the same payment', () => {
    expect(decide(stored({ action_processor_at: T + 5_000 }), event({ status: 'failed', failureCode: 'card_declined' }, T))).toBe('ignore');
  });

  it('drops late news of the previous payment, takes clearly newer news of another, and reads when the second is the same', () => {
    expect(decide(stored({ action_status: 'succeeded' }), event({ paymentIntentId: 'pi_A', status: 'succeeded' }, T))).toBe('ignore');
    expect(decide(stored(), event({ paymentIntentId: 'pi_C' }, T + 5_000))).toBe('apply');
    expect(decide(stored(), event({ paymentIntentId: 'pi_C', status: 'succeeded' }, T - 5_000))).toBe('ignore');
    expect(decide(stored(), event({ paymentIntentId: 'pi_C', status: 'succeeded' }, T))).toBe('read');
  });

  it('takes our own reads unless they would step back past news that came while they were in flight', () => {
    const read = (startedAt: number): ActionUpdate => ({ ...event({}, 0), source: { kind: 'read', startedAt } });
    expect(decide(stored({ action_status: 'succeeded', action_updated_at: T }), read(T - 100))).toBe('ignore');
    expect(decide(stored({ action_status: 'failed', action_failure_code: 'card_declined', action_updated_at: T }), read(T + 100))).toBe('apply');
  });
});
