import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { createMerchant } from '../server/accounts/merchants.js';
import type { RateLimitReport } from '../simulator/index.js';
import { systemClock } from '../shared/time.js';
import { client, type Json } from './helpers/api.js';
import { eventsOf } from './helpers/payments.js';
import { startTestServer, type TestServer } from './helpers/server.js';

/** Cash sales (payment_method_type `cash`, our extension: docs/api-choices.md), on a server whose live mode is unavailable. */

let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Cash Shop');
  api = client(t.url, m.keys.sk_test);
});
afterAll(() => t.stop());

type Txn = Record<string, unknown> & { id: string; status: string; amount: number };
type ErrorBody = { error: { type: string; code?: string; param?: string; message: string } };

/** Every request the simulator has answered so far: a cash sale must add none. */
/**
 * Requests the processor served about money: everything but reads of connected accounts, which the
 * server makes by itself when the processor's `account.updated` arrives (a new merchant's test
 * account is verified a moment after it is made) and which may fall in any window.
 */
async function processorRequests(): Promise<number> {
  const sim = t.stack.simulator;
  if (!sim) throw new Error('no simulator');
  const report = (await (await fetch(`http://${sim.host}:${sim.port}/_sim/rate_limits`)).json()) as RateLimitReport;
  // Neither account reads nor readiness's background check that the processor answers (the
  // platform's balance, every 15 s: server/operations/readiness.ts) are about the sale.
  return report.endpoints.filter((e) => !e.endpoint.startsWith('GET /v1/accounts') && e.endpoint !== 'GET /v1/balance').reduce((sum, e) => sum + e.requests, 0);
}

async function cash(body: Json, headers?: Record<string, string>, key = m.keys.sk_test) {
  return client(t.url, key).post<{ data: Txn } & ErrorBody>('/v1/transactions', { payment_method_type: 'cash', ...body }, headers);
}

describe('POST /v1/transactions with payment_method_type cash', () => {
  it('succeeds at once with the change due, no platform fee, a receipt and no processor call', async () => {
    const before = await processorRequests();
    const res = await cash({ amount: 1275, amount_tendered: 2000, description: 'Two coffees' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({
      status: 'succeeded', amount: 1275, amount_captured: 1275, amount_tendered: 2000, change_due: 725, payment_method_type: 'cash',
      platform_fee_cents: 0, payment_intent_id: null, card_brand: null, currency: 'usd', is_test: true,
    });
    expect(res.body.data.captured_at).not.toBeNull();
    expect(res.body.data.receipt_url).toMatch(/\/receipts\/[A-Za-z0-9]{32}$/);
    expect(await processorRequests()).toBe(before);
    expect((await eventsOf(t.dataDir, res.body.data.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.succeeded']);
    const read = await api.get<{ data: Txn }>(`/v1/transactions/${res.body.data.id}`);
    expect(read.body.data).toMatchObject({ status: 'succeeded', amount_tendered: 2000, change_due: 725 });
  });

  it('takes exact cash when amount_tendered is left out, and card payments carry no cash fields', async () => {
    const exact = await cash({ amount: 500 });
    expect(exact.body.data).toMatchObject({ status: 'succeeded', amount_tendered: 500, change_due: 0 });
    const card = await api.post<{ data: Txn }>('/v1/transactions', { amount: 500 });
    expect(card.body.data).toMatchObject({ amount_tendered: null, change_due: null });
  });

  it('replays the first sale for the same Idempotency-Key (spec §5: 200 and the first answer), never a second sale', async () => {
    const key = `cash-${Date.now()}`;
    const first = await cash({ amount: 900, amount_tendered: 1000 }, { 'Idempotency-Key': key });
    const again = await cash({ amount: 900, amount_tendered: 1000 }, { 'Idempotency-Key': key });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data).toEqual(first.body.data);
    const other = await cash({ amount: 901, amount_tendered: 1000 }, { 'Idempotency-Key': key });
    expect(other.body.data.id).toBe(first.body.data.id);
    expect((await eventsOf(t.dataDir, first.body.data.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.succeeded']);
  });

  it('refuses what a cash sale cannot be with a 400 naming the param', async () => {
    const cases: [Json, string][] = [
      [{ amount: 1000, amount_tendered: 999 }, 'amount_tendered'],
      [{ amount: 1000, amount_tendered: 'lots' }, 'amount_tendered'],
      [{ amount: 1000, amount_tendered: 10.5 }, 'amount_tendered'],
      [{ amount: 1000, amount_tendered: 100_000_000 }, 'amount_tendered'],
      [{ amount: 1000, payment_method: 'pm_card_visa' }, 'payment_method'],
      [{ amount: 1000, confirm: true, payment_method: 'pm_card_visa' }, 'payment_method'],
      [{ amount: 1000, capture_method: 'manual' }, 'capture_method'],
      [{ amount: 1000, return_url: 'https://shop.example/back' }, 'return_url'],
      [{ amount: 49 }, 'amount'],
    ];
    for (const [body, param] of cases) {
      const res = await cash(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error, JSON.stringify(body)).toMatchObject({ type: 'invalid_request_error', param });
    }
    const cardWithTender = await api.post<ErrorBody>('/v1/transactions', { amount: 1000, amount_tendered: 2000 });
    expect(cardWithTender.status).toBe(400);
    expect(cardWithTender.body.error.param).toBe('amount_tendered');
  });

  it('counts zero-decimal money in whole units', async () => {
    const jp = await createMerchant(t.server.store, systemClock, { businessName: 'Kissa', country: 'JP' });
    const res = await cash({ amount: 780, amount_tendered: 1000 }, undefined, jp.keys.sk_test);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data).toMatchObject({ currency: 'jpy', amount: 780, amount_tendered: 1000, change_due: 220, platform_fee_cents: 0 });
  });

  it('is refunded in cash at once, in part and then in full, with the refund events and no processor call', async () => {
    const sale = (await cash({ amount: 3000, amount_tendered: 5000 })).body.data;
    const before = await processorRequests();
    const part = await api.post<{ data: { id: string; status: string; amount: number } }>(`/v1/transactions/${sale.id}/refunds`, { amount: 1000 }, { 'Idempotency-Key': `r1-${sale.id}` });
    expect(part.status, JSON.stringify(part.body)).toBe(201);
    expect(part.body.data).toMatchObject({ status: 'succeeded', amount: 1000 });
    expect((await api.get<{ data: Txn }>(`/v1/transactions/${sale.id}`)).body.data).toMatchObject({ status: 'partially_refunded', amount_refunded: 1000 });
    const rest = await api.post<{ data: { status: string; amount: number } }>(`/v1/transactions/${sale.id}/refunds`, {});
    expect(rest.body.data).toMatchObject({ status: 'succeeded', amount: 2000 });
    expect((await api.get<{ data: Txn }>(`/v1/transactions/${sale.id}`)).body.data).toMatchObject({ status: 'refunded', amount_refunded: 3000 });
    const more = await api.post<ErrorBody>(`/v1/transactions/${sale.id}/refunds`, { amount: 1 });
    expect(more.status).toBe(409);
    expect(await processorRequests()).toBe(before);
    expect((await eventsOf(t.dataDir, sale.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.succeeded', 'payment.partially_refunded', 'payment.refunded']);
    expect((await eventsOf(t.dataDir, part.body.data.id)).map((e) => e.type)).toEqual(['refund.created', 'refund.succeeded']);
  });

  it('cannot be captured or canceled: it is paid', async () => {
    const sale = (await cash({ amount: 700 })).body.data;
    const cancel = await api.post<ErrorBody>(`/v1/transactions/${sale.id}/cancel`, {});
    expect(cancel.status).toBe(409);
    expect(cancel.body.error.code).toBe('already_captured');
    const capture = await api.post<{ data: Txn }>(`/v1/transactions/${sale.id}/capture`, {});
    expect(capture.body.data.status).toBe('succeeded');
  });

  it('is taken in live mode on the simulator, where card payments are refused: the cash is real', async () => {
    const live = await cash({ amount: 1500, amount_tendered: 2000 }, undefined, m.keys.sk_live);
    expect(live.status, JSON.stringify(live.body)).toBe(201);
    expect(live.body.data).toMatchObject({ status: 'succeeded', is_test: false, change_due: 500 });
    const card = await client(t.url, m.keys.sk_live).post<ErrorBody>('/v1/transactions', { amount: 1500 });
    expect(card.status).toBe(400);
    expect(card.body.error.code).toBe('live_mode_unavailable');
  });
});
