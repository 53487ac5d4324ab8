import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { BalanceSchema, PayoutListSchema, PayoutSchema } from '../shared/contract/payouts.js';
import { client, type Json } from './helpers/api.js';
import { eventsOf } from './helpers/payments.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * The balance and payouts of a merchant's connected account end to end: payments through the real
 * simulator, payouts to Stripe's test bank accounts, and the `payout.*` events the simulator sends
 * from the connected account to the server's Connect endpoint.
 */

let t: TestServer;

/** Events come by webhook from the simulator: well inside a second here. */
const WAIT_MS = 10_000;
const ROUTING = '110000000';

beforeAll(async () => {
  t = await startTestServer({ reconcileIntervalMs: 200 }, { simulator: { disputeDelayMs: 100 } });
});
afterAll(() => t.stop());

type Money = { amount: number; currency: string };
type Balance = { available: Money[]; pending: Money[]; is_test: boolean };
type Payout = Json & { id: string; reference: string; amount: number; status: string; failure_code: string | null };

async function shop(name: string): Promise<{ m: CreatedMerchant; api: ReturnType<typeof client> }> {
  const m = await t.merchant(name);
  return { m, api: client(t.url, m.keys.sk_test) };
}

async function pay(api: ReturnType<typeof client>, paymentMethod: string, amount = 2000): Promise<{ id: string }> {
  const res = await api.post<{ data: { id: string; status: string } }>('/v1/transactions', { amount, payment_method: paymentMethod, confirm: true });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function usd(api: ReturnType<typeof client>): Promise<{ available: number; pending: number }> {
  const res = await api.get<{ data: Balance }>('/v1/balance');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(BalanceSchema.parse(res.body.data)).toBeTruthy();
  const of = (list: Money[]) => list.find((b) => b.currency === 'usd')?.amount ?? 0;
  return { available: of(res.body.data.available), pending: of(res.body.data.pending) };
}

/** Fires the simulator's timers: a payout's bank hours pass at once. */
async function bankHoursPass(): Promise<void> {
  await t.stack.simulator?.control.advanceTimers();
}

async function settled(api: ReturnType<typeof client>, id: string): Promise<Payout> {
  return eventually(async () => {
    await bankHoursPass();
    const p = (await api.get<{ data: Payout }>(`/v1/payouts/${id}`)).body.data;
    return p.status === 'paid' || p.status === 'failed' ? p : undefined;
  }, WAIT_MS);
}

describe('balance', () => {
  it('moves with charges, fees, refunds and disputes', async () => {
    const { api } = await shop('Balance Shop');
    expect(await usd(api)).toEqual({ available: 0, pending: 0 });
    // A destination charge settles the amount less our 3 % fee to the merchant's account.
    await pay(api, 'pm_card_visa', 1000);
    expect(await usd(api)).toEqual({ available: 0, pending: 970 });
    const quick = await pay(api, 'pm_card_bypassPending', 2000);
    expect(await usd(api)).toEqual({ available: 1940, pending: 970 });
    // A refund takes back the merchant's share of what it returns (the fee goes back too).
    expect((await api.post(`/v1/transactions/${quick.id}/refunds`, { amount: 500 })).status).toBe(201);
    expect(await usd(api)).toEqual({ available: 1455, pending: 970 });
    // A dispute takes back the merchant's share and the processor's dispute fee.
    const before = await usd(api);
    await pay(api, 'pm_card_createDispute', 1000);
    await eventually(async () => ((await api.get<{ data: unknown[] }>('/v1/disputes')).body.data.length ? true : undefined), WAIT_MS);
    const after = await eventually(async () => {
      const b = await usd(api);
      return b.available + b.pending < before.available + before.pending + 970 ? b : undefined;
    }, WAIT_MS);
    // The disputed charge's 9.70 is still pending when the dispute takes it back from the available
    // balance, with Stripe's 15.00 dispute fee: the balance may go below zero, as on Stripe.
    expect(after).toEqual({ available: before.available - 970 - 1500, pending: before.pending + 970 });
  });

  it('belongs to the key’s merchant and mode', async () => {
    const { m, api } = await shop('Isolated Balance');
    await pay(api, 'pm_card_bypassPending');
    expect((await usd(api)).available).toBe(1940);
    const { api: other } = await shop('Other Balance');
    expect(await usd(other)).toEqual({ available: 0, pending: 0 });
    const live = await client(t.url, m.keys.sk_live).get<{ data: Balance }>('/v1/balance');
    expect(live.status).toBe(200);
    expect(live.body.data.is_test).toBe(false);
    expect(live.body.data.available.reduce((n, b) => n + b.amount, 0)).toBe(0);
  });
});

describe('payouts', () => {
  it('pm_card_bypassPending, then POST /v1/payouts: payout.created, then payout.paid', async () => {
    const { api } = await shop('Payout Shop');
    await pay(api, 'pm_card_bypassPending');
    const created = await api.post<{ data: Payout }>('/v1/payouts', { amount: 1500, description: 'Takings', metadata: { till: '1' } }, { 'Idempotency-Key': 'payout-1' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.headers.get('idempotency-key')).toBe('payout-1');
    expect(PayoutSchema.parse(created.body.data)).toBeTruthy();
    expect(created.body.data).toMatchObject({ amount: 1500, currency: 'usd', status: 'pending', automatic: false, description: 'Takings', metadata: { till: '1' }, is_test: true });
    expect(created.body.data.reference).toMatch(/^po_/);
    const replay = await api.post<{ data: Payout }>('/v1/payouts', { amount: 1500 }, { 'Idempotency-Key': 'payout-1' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.id).toBe(created.body.data.id);
    expect((await usd(api)).available).toBe(440);

    const paid = await settled(api, created.body.data.id);
    expect(paid).toMatchObject({ status: 'paid', failure_code: null });
    const types = await eventually(async () => {
      const list = (await eventsOf(t.dataDir, paid.id)).map((e) => e.type);
      return list.includes('payout.paid') ? list : undefined;
    }, WAIT_MS);
    expect(types[0]).toBe('payout.created');
    expect(types.at(-1)).toBe('payout.paid');
    for (const e of await eventsOf(t.dataDir, paid.id)) expect(e.data).toMatchObject({ id: paid.id, is_test: true });
  });

  it.each([
    ['000111111116', 'no_account'],
    ['000111111113', 'account_closed'],
    ['000222222227', 'insufficient_funds'],
  ])('to test bank account %s: payout.failed with %s', async (account, code) => {
    const { api } = await shop(`Failing ${account}`);
    const bank = await api.post<{ data: Json }>('/v1/merchant/bank-account', { account_number: account, routing_number: ROUTING });
    expect(bank.status, JSON.stringify(bank.body)).toBe(200);
    expect(bank.body.data).toMatchObject({ object: 'bank_account', last4: account.slice(-4), currency: 'usd', is_test: true });
    expect((await api.get<{ data: Json }>('/v1/merchant/bank-account')).body.data).toMatchObject({ last4: account.slice(-4) });
    await pay(api, 'pm_card_bypassPending');
    const created = await api.post<{ data: Payout }>('/v1/payouts');
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.amount).toBe(1940);
    const failed = await settled(api, created.body.data.id);
    expect(failed).toMatchObject({ status: 'failed', failure_code: code });
    const last = await eventually(async () => (await eventsOf(t.dataDir, failed.id)).find((e) => e.type === 'payout.failed'), WAIT_MS);
    expect(last.data).toMatchObject({ failure_code: code, is_test: true });
  });

  it('refuses what the balance cannot pay, with the error body', async () => {
    const { api } = await shop('Empty Shop');
    const none = await api.post<{ error: Json }>('/v1/payouts');
    expect(none.status).toBe(400);
    expect(none.body.error).toMatchObject({ type: 'invalid_request_error', code: 'balance_insufficient', param: 'amount' });
    await pay(api, 'pm_card_bypassPending');
    const tooMuch = await api.post<{ error: Json }>('/v1/payouts', { amount: 1_000_000 });
    expect(tooMuch.status).toBe(400);
    expect(tooMuch.body.error.type).toBe('invalid_request_error');
    for (const body of [{ amount: 0 }, { amount: 'all' }, { currency: 'xyz' }, { destination: 'ba_1' }]) {
      const res = await api.post<{ error: Json }>('/v1/payouts', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    for (const body of [{}, { account_number: '12' }, { account_number: '000123456789', routing_number: 'abc' }]) {
      expect((await api.post('/v1/merchant/bank-account', body)).status, JSON.stringify(body)).toBe(400);
    }
    expect((await api.get('/v1/payouts/po_nothing')).status).toBe(404);
  });

  it('lists newest first, only to the merchant and mode that own them; live payouts need --simulate-live', async () => {
    const { m, api } = await shop('Listing Payouts');
    await pay(api, 'pm_card_bypassPending');
    const a = (await api.post<{ data: Payout }>('/v1/payouts', { amount: 100 })).body.data;
    const b = (await api.post<{ data: Payout }>('/v1/payouts', { amount: 200 })).body.data;
    const list = await api.get('/v1/payouts');
    const parsed = PayoutListSchema.parse(list.body);
    expect(parsed.data.map((p) => p.id)).toEqual([b.id, a.id]);
    expect((await api.get<{ totalCount: number }>('/v1/payouts?status=paid')).body.totalCount).toBe(0);
    const { api: other } = await shop('Other Payouts');
    expect((await other.get<{ totalCount: number }>('/v1/payouts')).body.totalCount).toBe(0);
    expect((await other.get(`/v1/payouts/${a.reference}`)).status).toBe(404);
    const live = client(t.url, m.keys.sk_live);
    expect((await live.get<{ totalCount: number }>('/v1/payouts')).body.totalCount).toBe(0);
    const refused = await live.post<{ error: Json }>('/v1/payouts', { amount: 100 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('live_mode_unavailable');
  });
});
