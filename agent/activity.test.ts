import { describe, expect, it } from 'vitest';
import { activityOf, type ProcessorAction } from './activity.js';

const action = (patch: Partial<ProcessorAction>): ProcessorAction => ({
  type: 'process_payment_intent',
  status: 'in_progress',
  failure_code: null,
  failure_message: null,
  payment_intent_id: 'pi_1',
  transaction_id: 't1',
  payment_intent_status: 'requires_payment_method',
  ...patch,
});

describe('activityOf', () => {
  it('maps the processor action to what the reader is doing', () => {
    expect(activityOf(null).activity).toBe('idle');
    expect(activityOf(action({})).activity).toBe('waiting_for_card');
    expect(activityOf(action({ payment_intent_status: 'processing' })).activity).toBe('processing');
    expect(activityOf(action({ status: 'succeeded' }))).toMatchObject({ activity: 'approved', transaction_id: 't1' });
    expect(activityOf(action({ status: 'failed', failure_code: 'card_declined' }))).toMatchObject({ activity: 'declined', failure_code: 'card_declined' });
    expect(activityOf(action({ status: 'failed', failure_code: 'customer_canceled' })).activity).toBe('canceled_on_reader');
  });

  it('keys each outcome so a cleared one is recognised', () => {
    expect(activityOf(action({ status: 'succeeded' })).outcome_key).toBe(activityOf(action({ status: 'succeeded' })).outcome_key);
    expect(activityOf(action({ status: 'succeeded' })).outcome_key).not.toBe(activityOf(action({ status: 'failed', failure_code: 'x' })).outcome_key);
    expect(activityOf(action({})).outcome_key).toBeNull();
  });
});
