import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type Stripe from 'stripe';
import { startSimulator, type RunningSimulator } from '../simulator/index.js';
import { keySourceOf } from '../shared/crypto/key-source.js';
import { Keyring } from '../shared/crypto/keyring.js';
import type { CreateTransactionResponse, Transaction } from '../shared/api/types.js';
import type { ApiResponse } from './helpers/api.js';
import { expectErrorBody, intentsByTransaction, openPosDb, paymentsApi, stripeAt } from './helpers/races.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * Races on the Payments API (spec §3, §4.1–4.3, §8), all for real: an in-process server on a real
 * port, the simulator reached through the official SDK, SQLite on disk. Counts are exact.
 */

let t: TestServer;
let processor: { test: Stripe; live: Stripe };

beforeAll(async () => {
  t = await startTestServer({ simulateLive: true });
  const sim = t.stack.simulator as RunningSimulator;
  processor = { test: stripeAt(sim.url, sim.keys.secretTest), live: stripeAt(sim.url, sim.keys.secretLive) };
});
afterAll(async () => {
  await t.stop();
});

function statuses(responses: ApiResponse<unknown>[]): Record<number, number> {
  const out: Record<number, number> = {};
  for (const r of responses) out[r.status] = (out[r.status] ?? 0) + 1;
  return out;
}

async function countRows(table: 'transactions' | 'refunds' | 'idempotency_keys', merchantId: string, mode = 'test'): Promise<number> {
  const db = (await openPosDb(t.dataDir));
  try {
    return (await db.count(`select count(*) from ${table} where merchant_id = ? and mode = ?`, merchantId, mode));
  } finally {
    await db.close();
  }
}

describe('concurrent creates with one idempotency key', () => {
  async function burst(key: string, send: (i: number) => Promise<ApiResponse<CreateTransactionResponse>>, n = 25) {
    const responses = await Promise.all(Array.from({ length: n }, (_, i) => send(i)));
    expect(statuses(responses)).toEqual({ 201: 1, 200: n - 1 });
    const ids = new Set(responses.map((r) => r.body.data.id));
    expect(ids.size).toBe(1);
    for (const r of responses) {
      expect(r.headers.get('idempotency-key')).toBe(key);
      expect(r.headers.get('idempotent-replayed')).toBe(r.status === 200 ? 'true' : null);
      expect(r.body.data).toMatchObject({ status: 'succeeded', amount: 4_750 });
      expect(r.body.client_secret).toMatch(/^pi_.+_secret_/);
    }
    return [...ids][0] as string;
  }

  it('25 racing creates with the same Idempotency-Key make one transaction and one PaymentIntent', async () => {
    const m = await t.merchant('Header Key Shop');
    const api = paymentsApi(t.url, m.keys.sk_test);
    const key = `order-${randomUUID()}`;
    const body = { amount: 4_750, payment_method: 'pm_card_visa', confirm: true };
    const id = await burst(key, () => api.post<CreateTransactionResponse>('/v1/transactions', body, { 'Idempotency-Key': key }));

    expect(await countRows('transactions', m.merchant.id)).toBe(1);
    expect(await countRows('idempotency_keys', m.merchant.id)).toBe(1);
    // The processor's own events about the payment race our commit; still one event per move.
    await (t.stack.simulator as RunningSimulator).control.webhooksIdle();
    const db = (await openPosDb(t.dataDir));
    try {
      expect((await db.all<{ type: string }>('select type from events where object_id = ? order by seq', id)).map((e) => e.type)).toEqual(['payment.created', 'payment.succeeded']);
    } finally {
      await db.close();
    }
    const intents = await intentsByTransaction(processor.test);
    expect(intents.get(id)).toHaveLength(1);
    expect(intents.get(id)?.[0]).toMatchObject({ status: 'succeeded', amount: 4_750 });
  });

  it('the legacy idempotency_key body field deduplicates the same way', async () => {
    const m = await t.merchant('Body Key Shop');
    const api = paymentsApi(t.url, m.keys.sk_test);
    const key = `order-${randomUUID()}`;
    const body = { amount: 4_750, payment_method: 'pm_card_visa', confirm: true, idempotency_key: key };
    // Half of them through the alias route: "identical behaviour" (spec §4.1).
    const id = await burst(key, (i) => api.post<CreateTransactionResponse>(i % 2 ? '/v1/payment-intents' : '/v1/transactions', body));

    expect(await countRows('transactions', m.merchant.id)).toBe(1);
    const intents = await intentsByTransaction(processor.test);
    expect(intents.get(id)).toHaveLength(1);
  });

  it('the same key under two merchants, or two modes, names two different payments', async () => {
    const [a, b] = [await t.merchant('Key Owner A'), await t.merchant('Key Owner B')];
    const key = `shared-${randomUUID()}`;
    const body = { amount: 4_750, payment_method: 'pm_card_visa', confirm: true };
    const send = (sk: string) => paymentsApi(t.url, sk).post<CreateTransactionResponse>('/v1/transactions', body, { 'Idempotency-Key': key });
    const keys = [a.keys.sk_test, b.keys.sk_test, a.keys.sk_live, b.keys.sk_live];
    // Five racing requests per (merchant, mode): exactly one 201 in each group.
    const responses = await Promise.all(keys.flatMap((sk) => Array.from({ length: 5 }, () => send(sk))));
    const groups = keys.map((_, g) => responses.slice(g * 5, g * 5 + 5));
    const ids = groups.map((group) => {
      expect(statuses(group)).toEqual({ 201: 1, 200: 4 });
      expect(new Set(group.map((r) => r.body.data.id)).size).toBe(1);
      return group[0]?.body.data.id as string;
    });
    expect(new Set(ids).size).toBe(4);
    expect(groups.map((g) => g[0]?.body.data.is_test)).toEqual([true, true, false, false]);
    for (const m of [a, b]) {
      expect(await countRows('transactions', m.merchant.id, 'test')).toBe(1);
      expect(await countRows('transactions', m.merchant.id, 'live')).toBe(1);
    }
    const [testIntents, liveIntents] = [await intentsByTransaction(processor.test), await intentsByTransaction(processor.live)];
    for (const id of ids.slice(0, 2)) expect(testIntents.get(id)).toHaveLength(1);
    for (const id of ids.slice(2)) expect(liveIntents.get(id)).toHaveLength(1);
    // And a merchant never reads another's payment through the shared key.
    expect((await paymentsApi(t.url, a.keys.sk_test).get(`/v1/transactions/${ids[1]}`)).status).toBe(404);
  });
});

describe('concurrent refunds', () => {
  async function refundBurst(amount: number | undefined, n = 12) {
    const m = await t.merchant('Refund Race');
    const api = paymentsApi(t.url, m.keys.sk_test);
    const txn = await api.paid(1_000);
    const responses = await Promise.all(Array.from({ length: n }, () => api.post(`/v1/transactions/${txn.id}/refunds`, amount === undefined ? {} : { amount })));
    return { m, api, txn, responses };
  }

  async function chargeOf(txn: Transaction): Promise<Stripe.Charge> {
    const intent = (await intentsByTransaction(processor.test)).get(txn.id)?.[0];
    const charge = intent?.latest_charge;
    return processor.test.charges.retrieve(typeof charge === 'string' ? charge : (charge?.id ?? ''));
  }

  it('12 racing refunds of 100 on a 1000 payment: exactly 10 succeed, 2 are refused, never more than was paid', async () => {
    const { m, api, txn, responses } = await refundBurst(100);
    expect(statuses(responses)).toEqual({ 201: 10, 409: 2 });
    for (const r of responses.filter((r) => r.status === 409)) expectErrorBody(r, 409, 'already_refunded');
    for (const r of responses.filter((r) => r.status === 201)) expect((r.body as { data: { amount: number } }).data.amount).toBe(100);

    const after = await api.transaction(txn.id);
    expect(after).toMatchObject({ status: 'refunded', amount_refunded: 1_000 });
    expect(after.refunded_at).toEqual(expect.any(String));
    const db = (await openPosDb(t.dataDir));
    try {
      expect((await db.count("select count(*) from refunds where transaction_id = ? and status = 'succeeded' and amount = 100", txn.id))).toBe(10);
      expect((await db.count('select count(*) from refunds where transaction_id = ?', txn.id))).toBe(10);
      expect((await db.count('select amount_refund_pending from transactions where id = ?', txn.id))).toBe(0);
      expect((await db.count("select count(*) from events where object_id = ? and type = 'payment.refunded'", txn.id))).toBe(1);
      expect((await db.count("select count(*) from events where merchant_id = ? and type = 'refund.succeeded'", m.merchant.id))).toBe(10);
    } finally {
      await db.close();
    }
    expect((await chargeOf(txn)).amount_refunded).toBe(1_000);
    const list = await api.get<{ data: unknown[]; totalCount: number }>(`/v1/transactions/${txn.id}/refunds?size=100`);
    expect(list.body.totalCount).toBe(10);
  });

  it('12 racing refunds with one Idempotency-Key: one refund, the rest replay it', async () => {
    const m = await t.merchant('Keyed Refunds');
    const api = paymentsApi(t.url, m.keys.sk_test);
    const txn = await api.paid(1_000);
    const key = `refund-${randomUUID()}`;
    const responses = await Promise.all(Array.from({ length: 12 }, () => api.post<{ data: { id: string } }>(`/v1/transactions/${txn.id}/refunds`, { amount: 100 }, { 'Idempotency-Key': key })));
    expect(statuses(responses)).toEqual({ 201: 1, 200: 11 });
    expect(new Set(responses.map((r) => r.body.data.id)).size).toBe(1);
    expect(responses.every((r) => r.headers.get('idempotency-key') === key)).toBe(true);
    expect(await api.transaction(txn.id)).toMatchObject({ status: 'partially_refunded', amount_refunded: 100 });
    expect(await countRows('refunds', m.merchant.id)).toBe(1);
    expect((await chargeOf(txn)).amount_refunded).toBe(100);
  });

  it('12 racing full refunds: exactly one succeeds', async () => {
    const { m, api, txn, responses } = await refundBurst(undefined);
    expect(statuses(responses)).toEqual({ 201: 1, 409: 11 });
    for (const r of responses.filter((r) => r.status === 409)) expectErrorBody(r, 409, 'already_refunded');
    expect(await api.transaction(txn.id)).toMatchObject({ status: 'refunded', amount_refunded: 1_000 });
    expect(await countRows('refunds', m.merchant.id)).toBe(1);
    expect((await chargeOf(txn)).amount_refunded).toBe(1_000);
  });
});

describe('cancel racing capture', () => {
  it('exactly one wins every time; the loser gets the matching 409, and we agree with the processor', async () => {
    const m = await t.merchant('Capture Race');
    const api = paymentsApi(t.url, m.keys.sk_test);
    const winners = { captured: 0, canceled: 0 };
    for (let round = 0; round < 10; round++) {
      const txn = await api.authorised(2_000);
      // Alternate who is sent first, and double up some rounds so safe repeats are exercised too.
      const ops = round % 2 ? ['cancel', 'capture'] : ['capture', 'cancel'];
      if (round % 3 === 2) ops.push(ops[0] as string);
      const responses = await Promise.all(ops.map((op) => api.post<{ data?: Transaction } & Partial<{ error: { code: string } }>>(`/v1/transactions/${txn.id}/${op}`, {})));
      const final = await api.transaction(txn.id);
      expect(['succeeded', 'canceled']).toContain(final.status);
      const intent = (await intentsByTransaction(processor.test)).get(txn.id)?.[0];
      expect(intent?.status).toBe(final.status);
      const won = final.status === 'succeeded' ? 'capture' : 'cancel';
      winners[final.status === 'succeeded' ? 'captured' : 'canceled'] += 1;
      responses.forEach((r, i) => {
        expect(r.status, JSON.stringify(r.body)).toBeLessThan(500);
        if (ops[i] === won) {
          // The winner, or a safe repeat of it, answers 200 with the final state.
          expect(r.status).toBe(200);
          expect(r.body.data?.status).toBe(final.status);
        } else {
          expectErrorBody(r, 409, won === 'capture' ? 'already_captured' : 'transaction_not_capturable');
        }
      });
      const db = (await openPosDb(t.dataDir));
      try {
        const events = (await db.all<{ type: string }>("select type from events where object_id = ? and type like 'payment.%' order by seq", txn.id)).map((e) => e.type);
        expect(events).toEqual(['payment.created', 'payment.authorized', won === 'capture' ? 'payment.succeeded' : 'payment.canceled']);
      } finally {
        await db.close();
      }
    }
    expect(winners.captured + winners.canceled).toBe(10);
  });
});

describe('cancel during an ACH settlement window', () => {
  it('answers 409 authorization_in_progress while the processor holds the debit, then the payment settles', async () => {
    const sim = t.stack.simulator as RunningSimulator;
    // Long enough that the window cannot close by itself during the test; advanceTimers closes it.
    await sim.control.setAchSettlementDelay(60_000);
    const m = await t.merchant('ACH Shop');
    const api = paymentsApi(t.url, m.keys.sk_test);
    const created = await api.post<CreateTransactionResponse>('/v1/transactions', {
      amount: 25_000,
      payment_method_type: 'ach',
      payment_method: 'pm_usBankAccount_success',
      confirm: true,
    });
    expect(created.status).toBe(201);
    expect(created.body.data.status).toBe('pending');
    const id = created.body.data.id;
    const intentStatus = async () => (await intentsByTransaction(processor.test)).get(id)?.[0]?.status;
    expect(await intentStatus()).toBe('processing');

    for (let i = 0; i < 2; i++) {
      const cancel = await api.post(`/v1/transactions/${id}/cancel`, { reason: 'requested_by_customer' });
      expectErrorBody(cancel, 409, 'authorization_in_progress');
    }
    expect((await api.transaction(id)).status).toBe('pending');
    expect(await intentStatus()).toBe('processing');

    await sim.control.setAchSettlementDelay(2_000);
    await sim.control.advanceTimers();
    const settled = await eventually(async () => {
      const txn = await api.transaction(id);
      return txn.status === 'succeeded' ? txn : undefined;
    });
    expect(settled.captured_at).toEqual(expect.any(String));
    // Too late to cancel now.
    expectErrorBody(await api.post(`/v1/transactions/${id}/cancel`, {}), 409, 'already_captured');
  });
});

describe('a processor outage', () => {
  let s: TestServer;
  let restarted: RunningSimulator | undefined;
  beforeAll(async () => {
    // No background passes: a reconciler pass resuming the failed create between the simulator's
    // restart and our retry would turn the retry's 201 into a replayed 200.
    s = await startTestServer({ reconcileIntervalMs: 600_000 });
  });
  afterAll(async () => {
    await restarted?.close();
    await s.stop();
  });

  it('a 5xx is not remembered: the retry with the same key creates the payment once', async () => {
    // One merchant fails at its first processor call (making its connected account), the other,
    // which has paid before, after its transaction row is written (creating the PaymentIntent).
    const fresh = await s.merchant('Outage Newcomer');
    const regular = await s.merchant('Outage Regular');
    await paymentsApi(s.url, regular.keys.sk_test).paid(500);
    const old = s.stack.simulator as RunningSimulator;
    const port = old.port;
    await old.close();

    const body = { amount: 1_500, payment_method: 'pm_card_visa', confirm: true };
    const cases = [fresh, regular].map((m) => ({ m, api: paymentsApi(s.url, m.keys.sk_test), key: `outage-${randomUUID()}` }));
    for (const { api, key } of cases) {
      expectErrorBody(await api.post('/v1/transactions', body, { 'Idempotency-Key': key }), 502, 'processor_unavailable');
      // The same answer again while the processor is still down: retried, not replayed.
      const again = await api.post('/v1/transactions', body, { 'Idempotency-Key': key });
      expectErrorBody(again, 502, 'processor_unavailable');
      expect(again.headers.get('idempotent-replayed')).toBeNull();
    }

    // The embedded simulator's secrets are under the server's main key, in the server's data dir.
    restarted = await startSimulator({ dataDir: join(s.dataDir, 'simulator'), port, keyring: new Keyring(keySourceOf({ dataDir: s.dataDir })) });
    const intentsNow = () => intentsByTransaction(stripeAt((restarted as RunningSimulator).url, (restarted as RunningSimulator).keys.secretTest));
    for (const { m, api, key } of cases) {
      const retried = await api.post<CreateTransactionResponse>('/v1/transactions', body, { 'Idempotency-Key': key });
      expect(retried.status, JSON.stringify(retried.body)).toBe(201);
      expect(retried.body.data).toMatchObject({ status: 'succeeded', amount: 1_500 });
      const replay = await api.post<CreateTransactionResponse>('/v1/transactions', body, { 'Idempotency-Key': key });
      expect(replay.status).toBe(200);
      expect(replay.body.data.id).toBe(retried.body.data.id);

      const db = (await openPosDb(s.dataDir));
      try {
        expect((await db.count("select count(*) from transactions where merchant_id = ? and amount = 1500", m.merchant.id))).toBe(1);
        expect((await db.count("select count(*) from events where object_id = ? and type = 'payment.created'", retried.body.data.id))).toBe(1);
        expect((await db.count("select count(*) from events where object_id = ? and type = 'payment.succeeded'", retried.body.data.id))).toBe(1);
      } finally {
        await db.close();
      }
      expect((await intentsNow()).get(retried.body.data.id)).toHaveLength(1);
    }
  });
});
