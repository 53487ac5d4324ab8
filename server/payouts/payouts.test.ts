import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { unpackJson } from '../db/packed-json.js';
import type { Payout } from '../../shared/contract/payouts.js';

describe('balance and payouts on the in-memory processor', () => {
  let d: Domain;
  let account: string;

  beforeEach(async () => {
    d = await openDomain();
    account = await d.services.connectedAccounts.accountOf(d.scope.merchantId, 'test');
    d.processor.setBalance(account, 'usd', { available: 10_000, pending: 2_500 });
  });
  afterEach(async () => {
    await d.close();
  });

  async function events() {
    const rows = await d.store.db.selectFrom('events').select(['type', 'data']).where('type', 'like', 'payout.%').orderBy('seq').execute();
    return rows.map((r) => ({ type: r.type, data: JSON.parse(unpackJson(r.data)) as Record<string, unknown> }));
  }

  async function processorIdOf(payout: Payout): Promise<string> {
    return (await d.store.db.selectFrom('payouts').select('processor_payout_id').where('id', '=', payout.id).executeTakeFirstOrThrow()).processor_payout_id;
  }

  it("reads the connected account's balance", async () => {
    expect(await d.services.payouts.balance(d.scope)).toEqual({ object: 'balance', available: [{ amount: 10_000, currency: 'usd' }], pending: [{ amount: 2_500, currency: 'usd' }], is_test: true });
  });

  it('pays out an amount once per Idempotency-Key, with payout.created', async () => {
    const first = await d.services.payouts.create(d.scope, { amount: 4_000, description: 'Friday takings', metadata: { shift: 'late' } }, 'po-1');
    expect(first.response.status).toBe(201);
    const payout = (first.response.body as { data: Payout }).data;
    expect(payout).toMatchObject({ amount: 4_000, currency: 'usd', status: 'pending', automatic: false, description: 'Friday takings', metadata: { shift: 'late' }, is_test: true, failure_code: null });
    expect(payout.reference).toMatch(/^po_/);
    expect(payout.arrival_date).not.toBeNull();
    const again = await d.services.payouts.create(d.scope, { amount: 4_000 }, 'po-1');
    expect(again.replayed).toBe(true);
    expect((again.response.body as { data: Payout }).data.id).toBe(payout.id);
    expect(d.processor.count('createPayout')).toBe(1);
    expect((await d.services.payouts.balance(d.scope)).available).toEqual([{ amount: 6_000, currency: 'usd' }]);
    expect(await events()).toEqual([{ type: 'payout.created', data: expect.objectContaining({ id: payout.id, is_test: true }) }]);
  });

  it('pays out all that is available when no amount is given, and refuses when nothing is', async () => {
    const all = await d.services.payouts.create(d.scope, {}, undefined);
    expect((all.response.body as { data: Payout }).data.amount).toBe(10_000);
    const none = await d.services.payouts.create(d.scope, {}, 'empty');
    expect(none.response).toMatchObject({ status: 400, body: { error: { code: 'balance_insufficient', param: 'amount' } } });
    const replay = await d.services.payouts.create(d.scope, {}, 'empty');
    expect(replay.replayed).toBe(true);
    expect(replay.response.body).toMatchObject({ error: { code: 'balance_insufficient' } });
  });

  it("keeps the processor's refusal of more than is available as the answer", async () => {
    const refused = await d.services.payouts.create(d.scope, { amount: 50_000 }, undefined);
    expect(refused.response).toMatchObject({ status: 400, body: { error: { code: 'balance_insufficient' } } });
    expect(await d.store.db.selectFrom('payouts').select('id').execute()).toEqual([]);
  });

  it('moves a payout on with the events of the account it is paid from, never backwards', async () => {
    const payout = (await d.services.payouts.create(d.scope, { amount: 1_000 }, undefined)).state;
    const row = await d.services.payouts.get(d.scope, payout.payoutId);
    const processorId = await processorIdOf(row);
    d.processor.settlePayout(processorId, 'in_transit');
    await d.services.payouts.onPayoutEvent(processorId, account, 'test');
    d.processor.settlePayout(processorId, 'paid');
    await d.services.payouts.onPayoutEvent(processorId, account, 'test');
    await d.services.payouts.onPayoutEvent(processorId, account, 'test');
    d.processor.settlePayout(processorId, 'in_transit');
    await d.services.payouts.onPayoutEvent(processorId, account, 'test');
    expect(await d.services.payouts.get(d.scope, row.reference)).toMatchObject({ status: 'paid' });
    expect((await events()).map((e) => [e.type, e.data.status])).toEqual([
      ['payout.created', 'pending'],
      ['payout.updated', 'in_transit'],
      ['payout.paid', 'paid'],
    ]);
  });

  it('fails a payout the bank returns, with its code, even after it was paid', async () => {
    const payout = (await d.services.payouts.create(d.scope, { amount: 1_000 }, undefined)).state;
    const processorId = await processorIdOf(await d.services.payouts.get(d.scope, payout.payoutId));
    d.processor.settlePayout(processorId, 'paid');
    await d.services.payouts.onPayoutEvent(processorId, account, 'test');
    d.processor.settlePayout(processorId, 'failed', 'account_closed');
    await d.services.payouts.onPayoutEvent(processorId, account, 'test');
    expect(await d.services.payouts.get(d.scope, payout.payoutId)).toMatchObject({ status: 'failed', failure_code: 'account_closed' });
    expect((await events()).at(-1)).toMatchObject({ type: 'payout.failed', data: { failure_code: 'account_closed' } });
  });

  it('records payouts the processor makes on its schedule, and ignores accounts that are not ours', async () => {
    const automatic = d.processor.automaticPayout('test', account, 7_000, 'usd');
    await d.services.payouts.onPayoutEvent(automatic.id, account, 'test');
    const list = await d.services.payouts.list(d.scope, { page: 1, size: 10 });
    expect(list.data).toEqual([expect.objectContaining({ amount: 7_000, automatic: true, status: 'pending' })]);
    const stranger = d.processor.automaticPayout('test', 'acct_other', 1, 'usd');
    await d.services.payouts.onPayoutEvent(stranger.id, 'acct_other', 'test');
    expect((await d.services.payouts.list(d.scope, { page: 1, size: 10 })).totalCount).toBe(1);
  });

  it('lists by status, newest first, inside the scope of the key', async () => {
    await d.services.payouts.create(d.scope, { amount: 100 }, undefined);
    d.clock.advance(1);
    await d.services.payouts.create(d.scope, { amount: 200 }, undefined);
    expect((await d.services.payouts.list(d.scope, { page: 1, size: 10 })).data.map((p) => p.amount)).toEqual([200, 100]);
    expect((await d.services.payouts.list(d.scope, { page: 1, size: 10 }, 'paid')).totalCount).toBe(0);
    const live = { ...d.scope, mode: 'live' as const };
    expect((await d.services.payouts.list(live, { page: 1, size: 10 })).totalCount).toBe(0);
    const [one] = (await d.services.payouts.list(d.scope, { page: 1, size: 1 })).data;
    await expect(d.services.payouts.get(live, one?.id ?? '')).rejects.toMatchObject({ status: 404, code: 'resource_missing' });
  });

  it('sets the bank account payouts go to, showing only its last four digits', async () => {
    await expect(d.services.payouts.bankAccount(d.scope)).rejects.toMatchObject({ status: 404 });
    const set = await d.services.payouts.setBankAccount(d.scope, { account_number: '000111111116', routing_number: '110000000' });
    expect(set).toEqual(expect.objectContaining({ object: 'bank_account', last4: '1116', routing_number: '110000000', country: 'US', currency: 'usd', is_test: true }));
    await d.services.payouts.setBankAccount(d.scope, { account_number: '000123456789', routing_number: '110000000' });
    expect(await d.services.payouts.bankAccount(d.scope)).toMatchObject({ last4: '6789' });
    await expect(d.services.payouts.setBankAccount(d.scope, { account_number: 'XX12' })).rejects.toMatchObject({ status: 400, code: 'account_number_invalid' });
  });

  it('re-reads payouts on their way that no event settled for a quarter hour (the polling fallback)', async () => {
    const payout = (await d.services.payouts.create(d.scope, { amount: 1_000 }, undefined)).state;
    const processorId = await processorIdOf(await d.services.payouts.get(d.scope, payout.payoutId));
    d.processor.settlePayout(processorId, 'paid');
    expect(await d.services.payouts.pollOpen()).toBe(0);
    d.clock.advance(15 * 60 * 1000 + 1);
    expect(await d.services.payouts.pollOpen()).toBe(1);
    expect(await d.services.payouts.get(d.scope, payout.payoutId)).toMatchObject({ status: 'paid' });
    d.clock.advance(60 * 60 * 1000);
    expect(await d.services.payouts.pollOpen()).toBe(0);
  });
});
