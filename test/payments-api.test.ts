import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateTransactionResponseSchema, RefundSchema, TransactionListSchema, TransactionSchema } from '../shared/contract/transactions.js';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client, type Json } from './helpers/api.js';
import { eventsOf, simulatorSdk } from './helpers/payments.js';
import { openTestDb } from './helpers/db.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  t = await startTestServer({ reconcileIntervalMs: 200, simulateLive: true }, { simulator: { achSettlementDelayMs: 300 } });
  m = await t.merchant('Payments Shop');
  api = client(t.url, m.keys.sk_test);
});
afterAll(() => t.stop());

type Txn = Record<string, unknown> & { id: string; reference: string; status: string; amount: number; amount_refunded: number };
type Created = { data: Txn; client_secret: string; message?: string };

const SPEC_FIELDS = [
  'id', 'reference', 'type', 'status', 'amount', 'amount_refunded', 'currency', 'payment_method_type', 'description', 'receipt_email', 'source',
  'is_test', 'metadata', 'created_at', 'updated_at', 'status_badge', 'card_brand', 'card_last_four', 'captured_at', 'failed_at', 'refunded_at',
  'disputed_at', 'platform_fee_cents', 'failure_code', 'receipt_url', 'tip_amount',
];
const OFFSET_TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$/;

async function pay(body: Json = {}, key?: string): Promise<Txn> {
  const res = await api.post<Created>('/v1/transactions', { amount: 1000, payment_method: 'pm_card_visa', confirm: true, ...body }, key ? { 'Idempotency-Key': key } : undefined);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

describe('POST /v1/transactions (spec §4.1)', () => {
  it('creates a pending payment with every field of spec §2.1 and a client_secret', async () => {
    const res = await api.post<Created>('/v1/transactions', { amount: 4750, description: 'Flat white', receipt_email: 'a@b.co', metadata: { order_id: 'A-17' } });
    expect(res.status).toBe(201);
    expect(CreateTransactionResponseSchema.parse(res.body)).toBeTruthy();
    const txn = res.body.data;
    for (const field of SPEC_FIELDS) expect(txn, field).toHaveProperty(field);
    expect(txn).toMatchObject({
      type: 'payment', status: 'pending', status_badge: 'Pending', amount: 4750, amount_refunded: 0, currency: 'usd', payment_method_type: 'card',
      description: 'Flat white', receipt_email: 'a@b.co', source: 'api', is_test: true, metadata: { order_id: 'A-17' }, platform_fee_cents: 143, tip_amount: 0,
    });
    expect(txn.reference).toMatch(/^txn_/);
    expect(txn.created_at).toMatch(OFFSET_TS);
    expect(res.body.client_secret).toMatch(/^pi_.+_secret_/);
    expect((await eventsOf(t.dataDir, txn.id)).map((e) => e.type)).toEqual(['payment.created']);
  });

  it('behaves identically on the /v1/payment-intents alias', async () => {
    const res = await api.post<Created>('/v1/payment-intents', { amount: 500, currency: 'EUR' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ amount: 500, currency: 'eur', status: 'pending' });
    expect((await api.get<{ data: Txn }>(`/v1/transactions/${res.body.data.reference}`)).body.data.id).toBe(res.body.data.id);
  });

  it('validates every field with a 400 naming the param', async () => {
    const other = await t.merchant('Other');
    const foreignCustomer = await client(t.url, other.keys.sk_test).post<{ data: { id: string } }>('/v1/customers', { name: 'x' });
    const liveCustomer = await client(t.url, m.keys.sk_live).post<{ data: { id: string } }>('/v1/customers', { name: 'x' });
    const cases: [Json, string][] = [
      [{}, 'amount'],
      [{ amount: 49 }, 'amount'],
      [{ amount: 50.5 }, 'amount'],
      [{ amount: '500' }, 'amount'],
      [{ amount: 100_000_000 }, 'amount'],
      [{ amount: 500, currency: 'us' }, 'currency'],
      [{ amount: 500, currency: 'xyz' }, 'currency'],
      [{ amount: 500, payment_method_type: 'cheque' }, 'payment_method_type'],
      [{ amount: 500, confirm: true }, 'payment_method'],
      [{ amount: 500, confirm: 'yes' }, 'confirm'],
      [{ amount: 500, capture_method: 'later' }, 'capture_method'],
      [{ amount: 500, customer_id: 'nope' }, 'customer_id'],
      [{ amount: 500, customer_id: foreignCustomer.body.data.id }, 'customer_id'],
      [{ amount: 500, customer_id: liveCustomer.body.data.id }, 'customer_id'],
      [{ amount: 500, receipt_email: 'not-mail' }, 'receipt_email'],
      [{ amount: 500, return_url: 'javascript:alert(1)' }, 'return_url'],
      [{ amount: 500, metadata: { k: 5 } }, 'metadata[k]'],
      [{ amount: 500, status: 'succeeded' }, 'status'],
      [{ amount: 500, amount_refunded: 0 }, 'amount_refunded'],
      [{ amount: 500, is_test: false }, 'is_test'],
      [{ amount: 500, platform_fee_cents: 0 }, 'platform_fee_cents'],
      [{ amount: 500, payment_method_type: 'ach', currency: 'eur' }, 'currency'],
      [{ amount: 500, idempotency_key: '' }, 'idempotency_key'],
    ];
    const before = (await api.get<{ totalCount: number }>('/v1/transactions')).body.totalCount;
    for (const [body, param] of cases) {
      const res = await api.post<{ error: Json }>('/v1/transactions', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
    }
    // No refused request left anything behind.
    expect((await api.get<{ totalCount: number }>('/v1/transactions')).body.totalCount).toBe(before);
  });

  it('accepts a customer of the same merchant and mode', async () => {
    const customer = await api.post<{ data: { id: string } }>('/v1/customers', { name: 'Regular' });
    const res = await api.post<Created>('/v1/transactions', { amount: 500, customer_id: customer.body.data.id });
    expect(res.status).toBe(201);
    expect(res.body.data.customer_id).toBe(customer.body.data.id);
  });
});

describe('state transitions (spec §3)', () => {
  it('pending → succeeded on confirmation, with card details, captured_at and payment.succeeded', async () => {
    const txn = await pay({ amount: 2000, metadata: { order: '9' } });
    expect(txn).toMatchObject({ status: 'succeeded', card_brand: 'visa', card_last_four: '4242', amount_captured: 2000, platform_fee_cents: 60 });
    expect(txn.captured_at).toMatch(OFFSET_TS);
    const events = (await eventsOf(t.dataDir, txn.id));
    expect(events.map((e) => e.type)).toEqual(['payment.created', 'payment.succeeded']);
    expect(events[1]?.data).toMatchObject({ reference: txn.reference, amount: 2000, is_test: true, metadata: { order: '9' }, platform_fee_cents: 60, card_brand: 'visa', card_last_four: '4242' });
  });

  it('pending → failed on a decline: 402 card_error with the code, failure_code and failed_at set, payment.failed', async () => {
    const cases: [string, string, string | undefined][] = [
      ['pm_card_chargeDeclined', 'card_declined', 'generic_decline'],
      ['pm_card_visa_chargeDeclinedInsufficientFunds', 'card_declined', 'insufficient_funds'],
      ['pm_card_chargeDeclinedExpiredCard', 'expired_card', 'expired_card'],
    ];
    for (const [pm, code, decline] of cases) {
      const res = await api.post<{ error: Json }>('/v1/transactions', { amount: 700, payment_method: pm, confirm: true, metadata: { pm } });
      expect(res.status, pm).toBe(402);
      expect(res.body.error).toMatchObject({ type: 'card_error', code });
      if (decline) expect(res.body.error.decline_code).toBe(decline);
      const list = await api.get<{ data: Txn[] }>('/v1/transactions?status=failed&size=100');
      const failed = list.body.data.find((x) => (x.metadata as Json).pm === pm);
      expect(failed).toMatchObject({ status: 'failed', failure_code: code, decline_code: decline ?? null });
      expect(failed?.failed_at).toMatch(OFFSET_TS);
      expect((await eventsOf(t.dataDir, failed?.id ?? '')).map((e) => e.type)).toEqual(['payment.created', 'payment.failed']);
    }
  });

  it('a replayed create answers the first response byte for byte, with only the replay note added, after the payment moved on', async () => {
    const key = `replay-bytes-${Date.now()}`;
    const post = () =>
      fetch(`${t.url}/v1/transactions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${m.keys.sk_test}`, 'Content-Type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify({ amount: 1_980, payment_method: 'pm_card_visa', confirm: true, description: 'Crème brûlée ×2', metadata: { order: 'Ä-1' } }),
      });
    const first = await post();
    expect(first.status).toBe(201);
    const firstText = await first.text();
    const created = JSON.parse(firstText) as Created;
    expect(created.data).toMatchObject({ status: 'succeeded', amount_refunded: 0 });
    // The payment changes after the first answer: the replay still answers what was sent then.
    expect((await api.post(`/v1/transactions/${created.data.id}/refunds`, { amount: 500 })).status).toBe(201);

    const replay = await post();
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('idempotency-key')).toBe(key);
    const replayText = await replay.text();
    const note = (JSON.parse(replayText) as Created).message ?? '';
    expect(note).toMatch(/^Idempotent replay/);
    expect(replayText).toBe(`${firstText.slice(0, -1)},"message":${JSON.stringify(note)}}`);

    // The answer was kept packed, not as a second plain copy of the payment.
    const db = await openTestDb(t.dataDir);
    try {
      const [row] = await db.all<{ response_body: string; origin: string | null; request_id: string | null }>('select response_body, origin, request_id from idempotency_keys where key = ?', key);
      expect(row?.response_body.startsWith('z2:')).toBe(true);
      // What only an unfinished request needs is not kept once it has its answer.
      expect(row?.origin).toBeNull();
      expect(row?.request_id).toBeNull();
    } finally {
      await db.close();
    }
  });

  it('a decline names its payment: error.transaction is the GET object, the replay is identical, payment.failed names it', async () => {
    for (const path of ['/v1/transactions', '/v1/payment-intents']) {
      const key = `decline-${path}-${Date.now()}`;
      const body = { amount: 1_250, payment_method: 'pm_card_visa_chargeDeclined', confirm: true, metadata: { order: key } };
      const res = await api.post<{ error: Json & { transaction?: Txn } }>(path, body, { 'Idempotency-Key': key });
      expect(res.status, path).toBe(402);
      expect(res.body.error).toMatchObject({ type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' });
      const failed = res.body.error.transaction;
      expect(failed, path).toMatchObject({ status: 'failed', failure_code: 'card_declined', amount: 1_250, metadata: { order: key } });
      expect(TransactionSchema.parse(failed)).toBeTruthy();
      const read = await api.get<{ data: Txn }>(`/v1/transactions/${failed?.id}`);
      // The same object; only updated_at may have moved, when the processor's own event re-synced it.
      expect({ ...read.body.data, updated_at: failed?.updated_at }).toEqual(failed);

      const replay = await api.post<{ error: Json }>(path, body, { 'Idempotency-Key': key });
      expect(replay.status).toBe(402);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toEqual(res.body);

      const events = await api.get<{ data: { type: string; data: Json }[] }>('/v1/events?type=payment.failed&size=100');
      const named = events.body.data.filter((e) => e.data.reference === failed?.reference);
      expect(named).toHaveLength(1);
      expect(named[0]?.data).toMatchObject({ id: failed?.id, reference: failed?.reference, status: 'failed', failure_code: 'card_declined' });
    }
  });

  it('pending → canceled with reason; a repeat is 200; a captured payment answers 409 already_captured', async () => {
    const created = await api.post<Created>('/v1/transactions', { amount: 900 });
    const cancel = await api.post<{ data: Txn }>(`/v1/transactions/${created.body.data.id}/cancel`, { reason: 'customer left' });
    expect(cancel.status).toBe(200);
    expect(cancel.body.data).toMatchObject({ status: 'canceled', cancellation_reason: 'customer left' });
    expect(cancel.body.data.canceled_at).toMatch(OFFSET_TS);
    const again = await api.post<{ data: Txn }>(`/v1/transactions/${created.body.data.reference}/cancel`, {});
    expect(again.status).toBe(200);
    expect(again.body.data.status).toBe('canceled');
    expect((await eventsOf(t.dataDir, created.body.data.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.canceled']);
    const paid = await pay();
    const late = await api.post<{ error: Json }>(`/v1/transactions/${paid.id}/cancel`, {});
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'already_captured' });
    expect((await api.get<{ data: Txn }>(`/v1/transactions/${paid.id}`)).body.data.status).toBe('succeeded');
  });

  it('manual capture: requires_capture, then capture (full or partial), safe to repeat', async () => {
    const held = await pay({ amount: 3000, capture_method: 'manual' });
    expect(held).toMatchObject({ status: 'requires_capture', status_badge: 'Uncaptured', amount_captured: 0 });
    expect((await eventsOf(t.dataDir, held.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.authorized']);
    const tooMuch = await api.post<{ error: Json }>(`/v1/transactions/${held.id}/capture`, { amount_to_capture: 3001 });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error.param).toBe('amount_to_capture');
    const captured = await api.post<{ data: Txn }>(`/v1/transactions/${held.id}/capture`, { amount_to_capture: 2500 });
    expect(captured.status).toBe(200);
    expect(captured.body.data).toMatchObject({ status: 'succeeded', amount: 3000, amount_captured: 2500 });
    expect((await api.post<{ data: Txn }>(`/v1/transactions/${held.id}/capture`, {})).body.data.status).toBe('succeeded');
    const pending = await api.post<Created>('/v1/transactions', { amount: 600 });
    const notYet = await api.post<{ error: Json }>(`/v1/transactions/${pending.body.data.id}/capture`, {});
    expect(notYet.status).toBe(409);
    expect(notYet.body.error.code).toBe('transaction_not_capturable');
  });

  it('refunds: partial → partially_refunded, the rest → refunded with refunded_at; never more than paid', async () => {
    const txn = await pay({ amount: 1000 });
    const partial = await api.post<{ data: Json }>(`/v1/transactions/${txn.id}/refunds`, { amount: 250, reason: 'requested_by_customer' });
    expect(partial.status).toBe(201);
    expect(RefundSchema.parse(partial.body.data)).toMatchObject({ amount: 250, status: 'succeeded', reason: 'requested_by_customer', transaction_id: txn.id, is_test: true });
    expect(partial.body.data.reference).toMatch(/^re_/);
    let now = (await api.get<{ data: Txn }>(`/v1/transactions/${txn.id}`)).body.data;
    expect(now).toMatchObject({ status: 'partially_refunded', amount_refunded: 250, refunded_at: null });
    const over = await api.post<{ error: Json }>(`/v1/transactions/${txn.id}/refunds`, { amount: 751 });
    expect(over.status).toBe(400);
    expect(over.body.error).toMatchObject({ param: 'amount' });
    const rest = await api.post<{ data: Json }>(`/v1/transactions/${txn.id}/refunds`, {});
    expect(rest.body.data.amount).toBe(750);
    now = (await api.get<{ data: Txn }>(`/v1/transactions/${txn.id}`)).body.data;
    expect(now).toMatchObject({ status: 'refunded', amount_refunded: 1000 });
    expect(now.refunded_at).toMatch(OFFSET_TS);
    const more = await api.post<{ error: Json }>(`/v1/transactions/${txn.id}/refunds`, { amount: 1 });
    expect(more.status).toBe(409);
    const list = await api.get<{ data: Json[]; totalCount: number }>(`/v1/transactions/${txn.id}/refunds`);
    expect(list.body.totalCount).toBe(2);
    expect(list.body.data.map((r) => r.amount).sort()).toEqual([250, 750]);
    // The processor reversed the transfer and the application fee with the money.
    const charge = await simulatorSdk(t).charges.retrieve(String((await simulatorSdk(t).paymentIntents.retrieve(String(now.payment_intent_id))).latest_charge));
    expect(charge.amount_refunded).toBe(1000);
    const types = (await eventsOf(t.dataDir, txn.id)).map((e) => e.type);
    expect(types).toEqual(['payment.created', 'payment.succeeded', 'payment.partially_refunded', 'payment.refunded']);
  });

  it('refuses to refund a payment that was not paid', async () => {
    const pending = await api.post<Created>('/v1/transactions', { amount: 600 });
    const res = await api.post<{ error: Json }>(`/v1/transactions/${pending.body.data.id}/refunds`, {});
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('transaction_not_refundable');
    const missing = await api.post<{ error: Json }>('/v1/transactions/txn_nope/refunds', {});
    expect(missing.status).toBe(404);
  });
});

describe('idempotency (spec §8)', () => {
  it('replays the original with 200, a note, and the echoed key; the body key works too', async () => {
    const first = await api.post<Created>('/v1/transactions', { amount: 1234 }, { 'Idempotency-Key': 'order-1' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotency-key')).toBe('order-1');
    const second = await api.post<Created>('/v1/transactions', { amount: 1234 }, { 'Idempotency-Key': 'order-1' });
    expect(second.status).toBe(200);
    expect(second.headers.get('idempotency-key')).toBe('order-1');
    expect(second.body.data.id).toBe(first.body.data.id);
    expect(second.body.client_secret).toBe(first.body.client_secret);
    expect(second.body.message).toMatch(/replay/i);
    const viaBody = await api.post<Created>('/v1/transactions', { amount: 1234, idempotency_key: 'order-2' });
    const viaBodyAgain = await api.post<Created>('/v1/transactions', { amount: 1234, idempotency_key: 'order-2' });
    expect([viaBody.status, viaBodyAgain.status]).toEqual([201, 200]);
    expect(viaBodyAgain.body.data.id).toBe(viaBody.body.data.id);
  });

  it('returns the first result when a key is reused for another operation', async () => {
    const first = await api.post<Created>('/v1/transactions', { amount: 777 }, { 'Idempotency-Key': 'reused' });
    const paid = await pay();
    const reuse = await api.post<Created>(`/v1/transactions/${paid.id}/refunds`, { amount: 100 }, { 'Idempotency-Key': 'reused' });
    expect(reuse.status).toBe(200);
    expect(reuse.body.data.id).toBe(first.body.data.id);
    expect((await api.get<{ data: Txn }>(`/v1/transactions/${paid.id}`)).body.data.amount_refunded).toBe(0);
  });

  it('dedupes refunds with a key and not without one', async () => {
    const paid = await pay({ amount: 1000 });
    const a = await api.post<{ data: Json }>(`/v1/transactions/${paid.id}/refunds`, { amount: 100 }, { 'Idempotency-Key': 'refund-1' });
    const b = await api.post<{ data: Json }>(`/v1/transactions/${paid.id}/refunds`, { amount: 100 }, { 'Idempotency-Key': 'refund-1' });
    expect([a.status, b.status]).toEqual([201, 200]);
    expect(b.body.data.id).toBe(a.body.data.id);
    await api.post(`/v1/transactions/${paid.id}/refunds`, { amount: 100 });
    await api.post(`/v1/transactions/${paid.id}/refunds`, { amount: 100 });
    expect((await api.get<{ data: Txn }>(`/v1/transactions/${paid.id}`)).body.data.amount_refunded).toBe(300);
  });

  it('echoes the key only on the four idempotent endpoints, and refuses malformed keys', async () => {
    const paid = await pay();
    for (const res of [
      await api.get(`/v1/transactions/${paid.id}`, { 'Idempotency-Key': 'x1' }),
      await api.post(`/v1/transactions/${paid.id}/cancel`, {}, { 'Idempotency-Key': 'x2' }),
      await api.post(`/v1/transactions/${paid.id}/capture`, {}, { 'Idempotency-Key': 'x3' }),
      await api.post('/v1/customers', {}, { 'Idempotency-Key': 'x4' }),
    ]) {
      expect(res.headers.get('idempotency-key')).toBeNull();
    }
    for (const bad of ['k'.repeat(256), 'caf\u00e9']) {
      const res = await api.post<{ error: Json }>('/v1/transactions', { amount: 500 }, { 'Idempotency-Key': bad });
      expect(res.status, bad).toBe(400);
      expect(res.body.error.param).toBe('Idempotency-Key');
    }
    const control = await api.post<{ error: Json }>('/v1/transactions', { amount: 500, idempotency_key: 'bell\u0007' });
    expect(control.status).toBe(400);
    expect(control.body.error.param).toBe('idempotency_key');
    const longest = await api.post('/v1/transactions', { amount: 500 }, { 'Idempotency-Key': 'k'.repeat(255) });
    expect(longest.status).toBe(201);
  });

  it('scopes keys to the merchant and the mode', async () => {
    const other = await t.merchant('Neighbour');
    const mine = await api.post<Created>('/v1/transactions', { amount: 800 }, { 'Idempotency-Key': 'shared' });
    const theirs = await client(t.url, other.keys.sk_test).post<Created>('/v1/transactions', { amount: 800 }, { 'Idempotency-Key': 'shared' });
    const live = await client(t.url, m.keys.sk_live).post<Created>('/v1/transactions', { amount: 800 }, { 'Idempotency-Key': 'shared' });
    expect([mine.status, theirs.status, live.status]).toEqual([201, 201, 201]);
    expect(new Set([mine.body.data.id, theirs.body.data.id, live.body.data.id]).size).toBe(3);
    expect(live.body.data.is_test).toBe(false);
  });
});

describe('ACH (spec §8)', () => {
  it('settles a test ACH payment later, at 1 % capped at 700', async () => {
    const res = await api.post<Created>('/v1/transactions', { amount: 100_000, payment_method_type: 'ach', payment_method: 'pm_usBankAccount_success', confirm: true });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'pending', payment_method_type: 'ach', platform_fee_cents: 700 });
    const settled = await eventually(async () => {
      const now = await api.get<{ data: Txn }>(`/v1/transactions/${res.body.data.id}`);
      return now.body.data.status === 'succeeded' ? now.body.data : undefined;
    });
    expect(settled.card_last_four).toBeTruthy();
  });

  it('needs the ACH capability in live mode and says so; test mode never checks', async () => {
    const shop = await t.merchant('Live ACH');
    const live = client(t.url, shop.keys.sk_live);
    const refused = await live.post<{ error: Json }>('/v1/transactions', { amount: 5000, payment_method_type: 'ach' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'ach_not_enabled', param: 'payment_method_type' });
    expect(String(refused.body.error.message)).toMatch(/ACH is not enabled/);
    expect((await live.get<{ totalCount: number }>('/v1/transactions')).body.totalCount).toBe(0);
    const merchant = await live.get<{ data: { processor: { connected_account_id: string } } }>('/v1/merchant');
    await t.stack.simulator?.control.setCapability(merchant.body.data.processor.connected_account_id, 'us_bank_account_ach_payments', 'active');
    const accepted = await live.post<Created>('/v1/transactions', { amount: 5000, payment_method_type: 'ach' });
    expect(accepted.status).toBe(201);
    expect(accepted.body.data).toMatchObject({ is_test: false, platform_fee_cents: 50 });
    const test = await client(t.url, shop.keys.sk_test).post<Created>('/v1/transactions', { amount: 5000, payment_method_type: 'ach' });
    expect(test.status).toBe(201);
  });
});

describe('GET /v1/transactions', () => {
  it('lists newest first with status, page, size and the per_page alias', async () => {
    const shop = await t.merchant('Lister');
    const own = client(t.url, shop.keys.sk_test);
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await own.post<Created>('/v1/transactions', { amount: 100 + i, ...(i % 2 ? { payment_method: 'pm_card_visa', confirm: true } : {}) });
      made.push(res.body.data.id);
    }
    const page = await own.get<{ data: Txn[] }>('/v1/transactions?per_page=3&page=2');
    expect(TransactionListSchema.parse(page.body)).toMatchObject({ totalCount: 7, page: 2, size: 3, lastPage: 3 });
    expect(page.body.data.map((x) => x.id)).toEqual(made.slice().reverse().slice(3, 6));
    const ok = await own.get<{ data: Txn[]; totalCount: number }>('/v1/transactions?status=succeeded');
    expect(ok.body.totalCount).toBe(3);
    expect(ok.body.data.every((x) => x.status === 'succeeded')).toBe(true);
    const pending = await own.get<{ totalCount: number }>('/v1/transactions?status=pending');
    expect(pending.body.totalCount).toBe(4);
    expect((await own.get('/v1/transactions?status=lost')).status).toBe(400);
    expect(TransactionSchema.parse((await own.get<{ data: Txn }>(`/v1/transactions/${made[0]}`)).body.data)).toBeTruthy();
  });

  it('keeps test and live apart', async () => {
    const shop = await t.merchant('Modes');
    const test = client(t.url, shop.keys.sk_test);
    const live = client(t.url, shop.keys.sk_live);
    const made = await test.post<Created>('/v1/transactions', { amount: 5000 });
    expect((await live.get(`/v1/transactions/${made.body.data.id}`)).status).toBe(404);
    expect((await live.post(`/v1/transactions/${made.body.data.id}/cancel`, {})).status).toBe(404);
    expect((await live.post(`/v1/transactions/${made.body.data.id}/refunds`, {})).status).toBe(404);
    expect((await live.get<{ totalCount: number }>('/v1/transactions')).body.totalCount).toBe(0);
  });
});
