import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { ApiError } from '../errors.js';
import { EventNotYetApplicable, ProcessorFailure } from '../processor/errors.js';
import type { Scope } from '../accounts/scope.js';
import type { CreatePaymentState } from './transactions.js';
import { migrationProvider } from '../db/migration-provider.js';
import type { TransactionsTable } from '../db/schema.js';
import { PaymentState } from './payment-state.js';
import { presentTransaction } from './present.js';
import { eventData } from '../webhooks/outbox.js';

function payment(input: Partial<CreatePaymentState['input']> = {}): CreatePaymentState {
  return { input: { amount: 1500, payment_method_type: 'card', confirm: true, payment_method: 'pm_card_visa', capture_method: 'automatic', ...input }, source: 'api', terminalId: null, response: 'transaction' };
}

async function eventTypes(d: Domain): Promise<string[]> {
  const rows = await d.store.db.selectFrom('events').select('type').where('merchant_id', '=', d.scope.merchantId).orderBy('seq').execute();
  return rows.map((r) => r.type);
}

describe('payments on the in-memory processor', () => {
  let d: Domain;
  beforeEach(async () => {
    d = await openDomain();
  });
  afterEach(async () => {
    await d.close();
  });

  it('creates a confirmed card payment as a destination charge with our fee, and records its events', async () => {
    const result = await d.services.transactions.create(d.scope, payment(), 'key-1');
    expect(result.response.status).toBe(201);
    const row = await d.services.transactions.getRow(d.scope, result.state.transactionId ?? '');
    expect(row).toMatchObject({ status: 'succeeded', amount_captured: 1500, card_brand: 'visa', card_last_four: '4242' });
    expect(row.processor_payment_intent_id).toMatch(/^pi_fake/);
    expect(d.processor.count('createIntent')).toBe(1);
    expect(await eventTypes(d)).toEqual(['payment.created', 'payment.succeeded']);
  });

  it('answers a reused key with the first result and calls the processor once', async () => {
    const first = await d.services.transactions.create(d.scope, payment(), 'same');
    const second = await d.services.transactions.create(d.scope, payment({ amount: 9999 }), 'same');
    expect(second.replayed).toBe(true);
    expect(second.state.transactionId).toBe(first.state.transactionId);
    expect(second.response.text).toBe(JSON.stringify(first.response.body));
    expect(d.processor.count('createIntent')).toBe(1);
  });

  it('runs one create for racing requests with one key', async () => {
    const results = await Promise.all([1, 2, 3].map(() => d.services.transactions.create(d.scope, payment(), 'race')));
    expect(new Set(results.map((r) => r.state.transactionId)).size).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    expect(d.processor.count('createIntent')).toBe(1);
  });

  it('fails a declined payment with the decline code, and the answer carries the failed transaction', async () => {
    const result = await d.services.transactions.create(d.scope, payment({ payment_method: 'pm_card_chargeDeclinedInsufficientFunds' }), undefined);
    expect(result).toMatchObject({ ending: { outcome: { kind: 'declined', error: { status: 402, code: 'card_declined', declineCode: 'insufficient_funds' } } } });
    expect(result.response).toMatchObject({ status: 402, body: { error: { type: 'card_error', code: 'card_declined', decline_code: 'insufficient_funds' } } });
    expect((result.response.body as { error: { transaction: { status: string } } }).error.transaction.status).toBe('failed');
    const row = await d.services.transactions.getRow(d.scope, result.state.transactionId ?? '');
    expect(row).toMatchObject({ status: 'failed', failure_code: 'card_declined', decline_code: 'insufficient_funds' });
    expect(await eventTypes(d)).toEqual(['payment.created', 'payment.failed']);
  });

  it('keeps a processor refusal as the final answer and fails the payment', async () => {
    d.processor.failNext('createIntent', new ProcessorFailure('invalid_request', 'No such PaymentMethod', { status: 400, code: 'resource_missing', param: 'payment_method' }));
    const result = await d.services.transactions.create(d.scope, payment({ payment_method: 'pm_nosuch' }), 'refused');
    expect(result.response).toMatchObject({ status: 400, body: { error: { code: 'resource_missing' } } });
    const again = await d.services.transactions.create(d.scope, payment(), 'refused');
    expect(again.replayed).toBe(true);
    expect(again.response.body).toMatchObject({ error: { code: 'resource_missing' } });
    expect(d.processor.count('createIntent')).toBe(1);
    const row = await d.services.transactions.getRow(d.scope, result.state.transactionId ?? '');
    expect(row.status).toBe('failed');
  });

  it('resumes a create whose processor call failed in passing, without a second payment row', async () => {
    d.processor.failNext('createIntent', new ProcessorFailure('connection', 'socket hang up'));
    await expect(d.services.transactions.create(d.scope, payment(), 'flaky')).rejects.toMatchObject({ status: 502, code: 'processor_unavailable' });
    const retried = await d.services.transactions.create(d.scope, payment(), 'flaky');
    expect(retried.replayed).toBe(false);
    expect(retried.response.status).toBe(201);
    const rows = await d.store.db.selectFrom('transactions').select(['status']).where('merchant_id', '=', d.scope.merchantId).execute();
    expect(rows).toEqual([{ status: 'succeeded' }]);
  });

  it('gives a create up after its retries: processing_error, the key keeps a 402', async () => {
    d = (await d.close(), await openDomain({ recoveryRetryScale: 0.000_001 }));
    d.processor.failNext('createIntent', new ProcessorFailure('api', 'processor down', { status: 500 }), 100);
    await expect(d.services.transactions.create(d.scope, payment(), 'doomed')).rejects.toBeInstanceOf(ApiError);
    for (let i = 0; i < 20; i += 1) {
      d.clock.advance(60 * 60 * 1000);
      await d.services.idempotency.recover();
    }
    const answer = await d.services.transactions.create(d.scope, payment(), 'doomed');
    expect(answer.replayed).toBe(true);
    expect(answer.response).toMatchObject({ status: 402, body: { error: { code: 'processing_error' } } });
    const row = await d.services.transactions.getRow(d.scope, answer.state.transactionId ?? '');
    expect(row).toMatchObject({ status: 'failed', failure_code: 'processing_error' });
  });

  it('captures part of an authorisation once, however often it is asked', async () => {
    const created = await d.services.transactions.create(d.scope, payment({ capture_method: 'manual' }), undefined);
    const id = created.state.transactionId ?? '';
    expect((await d.services.transactions.getRow(d.scope, id)).status).toBe('requires_capture');
    await expect(d.services.transactions.capture(d.scope, id, 2000)).rejects.toMatchObject({ status: 400, param: 'amount_to_capture' });
    const captured = await d.services.transactions.capture(d.scope, id, 1000);
    expect(captured).toMatchObject({ status: 'succeeded', amount_captured: 1000 });
    await d.services.transactions.capture(d.scope, id, 1000);
    expect(d.processor.count('captureIntent')).toBe(1);
  });

  it('refuses to capture a payment that was never authorised for manual capture', async () => {
    const created = await d.services.transactions.create(d.scope, payment({ confirm: false, payment_method: undefined }), undefined);
    await expect(d.services.transactions.capture(d.scope, created.state.transactionId ?? '', undefined)).rejects.toMatchObject({ status: 409, code: 'transaction_not_capturable' });
  });

  it('cancels an unpaid payment with its reason, and refuses to cancel a paid one', async () => {
    const open = await d.services.transactions.create(d.scope, payment({ confirm: false, payment_method: undefined }), undefined);
    const { row } = await d.services.transactions.cancel(d.scope, open.state.transactionId ?? '', 'requested_by_customer');
    expect(row).toMatchObject({ status: 'canceled', cancellation_reason: 'requested_by_customer' });
    const again = await d.services.transactions.cancel(d.scope, row.id, undefined);
    expect(again.row.status).toBe('canceled');
    expect(d.processor.count('cancelIntent')).toBe(1);
    const paid = await d.services.transactions.create(d.scope, payment(), undefined);
    await expect(d.services.transactions.cancel(d.scope, paid.state.transactionId ?? '', undefined)).rejects.toMatchObject({ status: 409, code: 'already_captured' });
  });

  it('keeps our own cancel reason when the processor\'s event of the cancel is applied before its answer', async () => {
    const open = await d.services.transactions.create(d.scope, payment({ confirm: false, payment_method: undefined }), undefined);
    const id = open.state.transactionId ?? '';
    const processor = d.processor;
    const cancelIntent = processor.cancelIntent.bind(processor);
    // As Stripe may: the event lands, and is applied, before the answer to the cancel does.
    processor.cancelIntent = async (scope, intentId, reason, key) => {
      const canceled = await cancelIntent(scope, intentId, reason, key);
      await d.services.transactions.onIntentEvent(intentId, id, 'test', canceled);
      return canceled;
    };
    const { row } = await d.services.transactions.cancel(d.scope, id, 'canceled_by_staff');
    expect(row).toMatchObject({ status: 'canceled', cancellation_reason: 'canceled_by_staff' });
    const events = await d.store.db.selectFrom('events').select(['id', 'type', 'data']).where('object_id', '=', id).orderBy('seq').execute();
    expect(events.map((e) => [e.type, eventData(d.cipher, e).cancellation_reason])).toEqual([
      ['payment.created', null],
      ['payment.canceled', 'canceled_by_staff'],
    ]);
  });

  it('shows no cancel reason on a payment a cancel was asked of and refused', async () => {
    const paid = await d.services.transactions.create(d.scope, payment(), undefined);
    const id = paid.state.transactionId ?? '';
    const row = await d.services.transactions.getRow(d.scope, id);
    // Paid between our read and the cancel's call: the processor refuses it.
    d.processor.settle(row.processor_payment_intent_id ?? '', 'succeeded');
    await d.store.db.updateTable('transactions').set({ status: 'pending' }).where('id', '=', id).execute();
    await expect(d.services.transactions.cancel(d.scope, id, 'canceled_by_staff')).rejects.toMatchObject({ status: 409 });
    const after = await d.services.transactions.getRow(d.scope, id);
    expect(after.status).toBe('succeeded');
    expect(presentTransaction(after, d.cipher).cancellation_reason).toBeNull();
  });

  it('answers 409 authorization_in_progress when the processor is authorising the payment being canceled', async () => {
    const open = await d.services.transactions.create(d.scope, payment({ confirm: false, payment_method: undefined }), undefined);
    const row = await d.services.transactions.getRow(d.scope, open.state.transactionId ?? '');
    d.processor.settle(row.processor_payment_intent_id ?? '', 'processing');
    await expect(d.services.transactions.cancel(d.scope, row.id, undefined)).rejects.toMatchObject({ status: 409, code: 'authorization_in_progress' });
  });

  it('moves a payment on the processor’s news and never backwards', async () => {
    const open = await d.services.transactions.create(d.scope, payment({ confirm: false, payment_method: undefined }), undefined);
    const row = await d.services.transactions.getRow(d.scope, open.state.transactionId ?? '');
    const intent = row.processor_payment_intent_id ?? '';
    d.processor.settle(intent, 'succeeded');
    await d.services.transactions.onIntentEvent(intent, undefined, 'test');
    expect((await d.services.transactions.getRow(d.scope, row.id)).status).toBe('succeeded');
    d.processor.settle(intent, 'canceled');
    await d.services.transactions.onIntentEvent(intent, undefined, 'test');
    expect((await d.services.transactions.getRow(d.scope, row.id)).status).toBe('succeeded');
  });

  it('trusts an intent event for what it carries, and asks again for one that races its own create', async () => {
    const open = await d.services.transactions.create(d.scope, payment({ confirm: false, payment_method: undefined }), undefined);
    const row = await d.services.transactions.getRow(d.scope, open.state.transactionId ?? '');
    const intent = row.processor_payment_intent_id ?? '';
    d.processor.settle(intent, 'succeeded');
    // As an event carries it: the charge not expanded, so no card.
    const carried = { ...(await d.processor.retrieveIntent({ mode: 'test' }, intent)), card: null };
    const reads = d.processor.count('retrieveIntent');
    // The create has not yet committed the processor's answer: the row names no intent.
    await d.store.db.updateTable('transactions').set({ processor_payment_intent_id: null }).where('id', '=', row.id).execute();
    await expect(d.services.transactions.onIntentEvent(intent, row.id, 'test', carried)).rejects.toBeInstanceOf(EventNotYetApplicable);
    expect((await d.services.transactions.getRow(d.scope, row.id)).status).toBe('pending');
    // A create that gave up (failed, no intent known) is corrected by the event, read for its card.
    await d.store.db.updateTable('transactions').set({ status: 'failed' }).where('id', '=', row.id).execute();
    await d.services.transactions.onIntentEvent(intent, row.id, 'test', carried);
    expect(await d.services.transactions.getRow(d.scope, row.id)).toMatchObject({ status: 'succeeded', processor_payment_intent_id: intent });
    expect(d.processor.count('retrieveIntent')).toBe(reads + 1);
    // The same event again moves nothing and reads nothing.
    await d.services.transactions.onIntentEvent(intent, row.id, 'test', carried);
    expect(d.processor.count('retrieveIntent')).toBe(reads + 1);
  });

  it('refuses live ACH while the connected account lacks the ACH capability', async () => {
    const live: Scope = { ...d.scope, mode: 'live' };
    const account = await d.services.connectedAccounts.accountOf(live.merchantId, 'live');
    d.processor.capabilities.set(`${account}:us_bank_account_ach_payments`, 'inactive');
    const result = await d.services.transactions.create(live, payment({ payment_method_type: 'ach', payment_method: 'pm_usBankAccount_success' }), undefined);
    expect(result.response).toMatchObject({ status: 400, body: { error: { code: 'ach_not_enabled' } } });
    expect(d.processor.count('createIntent')).toBe(0);
    const rows = await d.store.db.selectFrom('transactions').select('id').where('merchant_id', '=', d.scope.merchantId).execute();
    expect(rows).toHaveLength(0);
  });

  it('writes a move on a row read before its transaction only while the row is still that version', async () => {
    const created = await d.services.transactions.create(d.scope, payment({ confirm: false, payment_method: undefined, description: 'orig' }), undefined);
    const id = created.state.transactionId!;
    const seen = await d.services.transactions.getRow(d.scope, id);
    const moves = new PaymentState([]);
    const update = (patchOf: (row: TransactionsTable) => Partial<TransactionsTable> | null, hint: TransactionsTable) =>
      d.store.transaction((trx) => moves.update(trx, id, patchOf, d.clock.now(), hint));
    const appended = (row: TransactionsTable) => ({ description: `${row.description}+` });

    // Still that version: the patch is derived from it and lands.
    const first = await update(appended, seen);
    expect(first.description).toBe('orig+');
    // Now out of date: the patch derived from it does not land; the row is read again.
    const second = await update(appended, seen);
    expect(second.description).toBe('orig++');
    // An out-of-date row that asks for nothing is not taken at its word either.
    const third = await update((row) => (row.description === 'orig' ? null : { description: 'read again' }), seen);
    expect(third.description).toBe('read again');
    expect((await d.services.transactions.getRow(d.scope, id)).description).toBe('read again');
  });
});

describe('the channel counts of GET /v1/transactions', () => {
  let d: Domain;
  beforeEach(async () => {
    d = await openDomain();
  });
  afterEach(async () => {
    await d.close();
  });

  it('are kept at creation, and migration 0022 counts the payments made before it', async () => {
    await d.services.transactions.create(d.scope, payment({ payment_method_type: 'cash', confirm: false, payment_method: undefined }), 'cash-1');
    await d.services.transactions.create(d.scope, payment(), 'card-1');
    await d.services.transactions.create(d.scope, payment(), 'card-2');
    const counts = async () => {
      const list = (channel: 'counter' | 'online') => d.services.transactions.list(d.scope, { page: 1, size: 10 }, { channel });
      return [(await list('counter')).totalCount, (await list('online')).totalCount];
    };
    expect(await counts()).toEqual([1, 2]);
    // A database from before the counter: the migration finds the till's payments among them.
    await d.store.db.deleteFrom('counters').where('name', '=', 'transactions:counter').execute();
    expect(await counts()).toEqual([0, 3]);
    const migration = (await migrationProvider.getMigrations())['0022_transactions_channel_counter'];
    await migration?.up(d.store.db);
    expect(await counts()).toEqual([1, 2]);
  });
});
