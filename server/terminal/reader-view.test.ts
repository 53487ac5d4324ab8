import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ReaderStatePush } from '../../shared/agent-upstream.js';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { eventually } from '../../test/helpers/tmp.js';
import type { Scope } from '../accounts/scope.js';
import { activityOf, outcomeOf, ReaderViews } from './reader-view.js';

describe('a reader’s view', () => {
  it('says what the counter shows', () => {
    expect(activityOf({ action_status: null, action_card_presented: 0, action_failure_code: null })).toBe('idle');
    expect(activityOf({ action_status: 'in_progress', action_card_presented: 0, action_failure_code: null })).toBe('waiting_for_card');
    expect(activityOf({ action_status: 'in_progress', action_card_presented: 1, action_failure_code: null })).toBe('processing');
    expect(activityOf({ action_status: 'succeeded', action_card_presented: 0, action_failure_code: null })).toBe('approved');
    expect(activityOf({ action_status: 'failed', action_card_presented: 0, action_failure_code: 'generic_decline' })).toBe('declined');
    expect(activityOf({ action_status: 'failed', action_card_presented: 0, action_failure_code: 'customer_canceled' })).toBe('canceled_on_reader');
    expect(activityOf({ action_status: 'canceled', action_card_presented: 0, action_failure_code: null })).toBe('idle');
  });

  it('says how a payment ended, and nothing while it has not', () => {
    expect(outcomeOf('pending')).toBeNull();
    expect(outcomeOf('requires_capture')).toBeNull();
    expect(outcomeOf('succeeded')).toBe('approved');
    expect(outcomeOf('partially_refunded')).toBe('approved');
    expect(outcomeOf('failed')).toBe('declined');
    expect(outcomeOf('canceled')).toBe('canceled');
  });
});

describe('following reader views on the in-memory processor', () => {
  let d: Domain;
  let reader: string;
  let snapshot: ReaderStatePush[] | undefined;
  let changes: ReaderStatePush[];
  let stop: () => void;
  beforeEach(async () => {
    d = await openDomain();
    await d.services.terminal.createLocation(d.scope, { display_name: 'Till', address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'US' } });
    reader = (await d.services.terminal.registerReader(d.scope, { name: 'Counter', registration_code: 'simulated-wpe' })).processor_terminal_id;
    snapshot = undefined;
    changes = [];
    stop = d.services.readerViews.follow(
      d.scope,
      (readers) => (snapshot = readers),
      (r) => changes.push(r),
      (err) => {
        throw err;
      },
    );
    await eventually(() => snapshot);
  });
  afterEach(async () => {
    stop();
    await d.close();
  });

  async function pending(amount: number): Promise<{ id: string; intent: string }> {
    const result = await d.services.terminal.createPayment(d.scope, { amount }, undefined);
    const row = await d.services.transactions.getRow(d.scope, result.state.transactionId ?? '');
    return { id: row.id, intent: row.processor_payment_intent_id ?? '' };
  }

  it('starts with every reader, idle and with no payment', () => {
    expect(snapshot).toEqual([expect.objectContaining({ processor_terminal_id: reader, activity: 'idle', action: null, payment: null, status: 'online' })]);
  });

  it('pushes the reader with its payment as the action moves and again as the payment ends', async () => {
    const { id, intent } = await pending(1_800);
    await d.services.terminal.processPayment(d.scope, intent, reader);
    const waiting = await eventually(() => changes.find((c) => c.activity === 'waiting_for_card'));
    expect(waiting.payment).toEqual({ id, amount: 1_800, currency: 'usd', status: 'pending', failure_code: null, decline_code: null, failure_message: null, cancellation_reason: null, outcome: null });
    await d.services.terminal.simulatePayment(d.scope, reader, {});
    const paid = await eventually(() => changes.find((c) => c.payment?.outcome === 'approved'));
    expect(paid).toMatchObject({ activity: 'approved', payment: { id, status: 'succeeded' }, action: { transaction_id: id, status: 'succeeded' } });
  });

  it('pushes a reader whose payment was canceled from elsewhere, though its action did not move', async () => {
    const { id, intent } = await pending(2_000);
    await d.services.terminal.processPayment(d.scope, intent, reader);
    await eventually(() => changes.find((c) => c.activity === 'waiting_for_card'));
    await d.services.transactions.cancel(d.scope, id, undefined);
    const canceled = await eventually(() => changes.find((c) => c.payment?.outcome === 'canceled'));
    expect(canceled.payment).toMatchObject({ id, status: 'canceled' });
  });

  it('pushes a reader again when its payment moves while the pass that sends the reader is reading it', async () => {
    stop();
    // The payment is canceled elsewhere right after the pass has read the moved reader, before it
    // reads the payment events: that reader went out with its payment still pending.
    let between: (() => Promise<void>) | undefined;
    class Interleaved extends ReaderViews {
      override async statesAfter(scope: Scope, seq: number): Promise<ReaderStatePush[]> {
        const states = await super.statesAfter(scope, seq);
        const run = between;
        between = undefined;
        await run?.();
        return states;
      }
    }
    changes = [];
    snapshot = undefined;
    stop = new Interleaved(d.store).follow(d.scope, (readers) => (snapshot = readers), (r) => changes.push(r), (err) => {
      throw err;
    });
    await eventually(() => snapshot);
    const { id, intent } = await pending(2_200);
    between = async () => {
      await d.services.transactions.cancel(d.scope, id, undefined);
    };
    await d.services.terminal.processPayment(d.scope, intent, reader);
    await eventually(() => (between === undefined ? true : undefined));
    const canceled = await eventually(() => changes.find((c) => c.payment?.outcome === 'canceled'));
    expect(canceled.payment).toMatchObject({ id, status: 'canceled' });
  });
});
