import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestSimulator, WebhookReceiver, startTestSimulator, rejected } from '../simulator/testing/harness.js';
import { verifiedAccountParams } from '../simulator/testing/onboarding.js';

/**
 * Balances and payouts of connected accounts through the real `stripe` package: funds pending then
 * available, Stripe's fees, refunds, manual and automatic payouts, Stripe's test bank accounts and
 * a restart with a payout in flight. Days are real days, so every step is fast-forwarded with the
 * control API's timer advance; no assertion waits on the clock.
 */

const PAYOUT_EVENTS: Stripe.WebhookEndpointCreateParams.EnabledEvent[] = ['payout.created', 'payout.updated', 'payout.paid', 'payout.failed', 'payout.canceled', 'balance.available'];

let t: TestSimulator;
let dataDir: string;
let connect: WebhookReceiver;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pos-sim-payouts-'));
  t = await startTestSimulator({ dataDir });
  connect = await new WebhookReceiver().start();
  await t.stripe.webhookEndpoints.create({ url: connect.url, enabled_events: PAYOUT_EVENTS, connect: true });
});
afterAll(async () => {
  await t.close();
  await connect.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function merchant(interval: 'daily' | 'manual' = 'daily'): Promise<Stripe.Account> {
  return t.stripe.accounts.create({
    ...verifiedAccountParams(),
    settings: { payouts: { schedule: { interval } } },
  });
}

/** A destination charge for `account`, as the pos server makes them. */
async function pay(account: string, amount: number, paymentMethod = 'pm_card_visa', fee?: number): Promise<Stripe.PaymentIntent> {
  return t.stripe.paymentIntents.create({
    amount,
    currency: 'usd',
    payment_method: paymentMethod,
    confirm: true,
    transfer_data: { destination: account },
    ...(fee !== undefined ? { application_fee_amount: fee } : {}),
  });
}

async function advance(): Promise<void> {
  await t.sim.control.advanceTimers();
  await t.sim.control.webhooksIdle();
}

async function balanceOf(account: string): Promise<{ available: number; pending: number }> {
  const balance = await t.stripe.balance.retrieve({}, { stripeAccount: account });
  expect(balance.object).toBe('balance');
  const usd = (list: { amount: number; currency: string }[]): number => list.find((entry) => entry.currency === 'usd')?.amount ?? 0;
  return { available: usd(balance.available), pending: usd(balance.pending) };
}

function eventsOf(account: string, type?: string): { type: string; id: string; status: unknown }[] {
  return connect.received
    .filter((w) => w.event.account === account && w.event.type.startsWith('payout.') && (type === undefined || w.event.type === type))
    .map((w) => ({ type: w.event.type, id: w.event.data.object.id, status: w.event.data.object.status }));
}

describe('external accounts', () => {
  it('an account onboarded with btok_us_verified has the paying test bank account; more can be added', async () => {
    const account = await merchant();
    const [bank] = account.external_accounts?.data ?? [];
    expect(bank).toMatchObject({ object: 'bank_account', routing_number: '110000000', last4: '6789', currency: 'usd', default_for_currency: true, status: 'new' });
    const added = await t.stripe.accounts.createExternalAccount(account.id, {
      external_account: { object: 'bank_account', country: 'US', currency: 'usd', routing_number: '110000000', account_number: '000111111116', account_holder_name: 'Corner Café' },
      default_for_currency: true,
    });
    expect(added).toMatchObject({ object: 'bank_account', last4: '1116', default_for_currency: true, account: account.id });
    const listed = await t.stripe.accounts.listExternalAccounts(account.id);
    expect(listed.data.map((b) => [b.id, (b as Stripe.BankAccount).default_for_currency])).toEqual([
      [added.id, true],
      [bank!.id, false],
    ]);
    expect((await t.stripe.accounts.retrieve(account.id)).external_accounts?.data).toHaveLength(2);
    const token = await t.stripe.accounts.createExternalAccount(account.id, { external_account: 'btok_us_verified' });
    expect((token as Stripe.BankAccount).last4).toBe('6789');
  });
});

describe('balances', () => {
  it('charges are pending, then available; refunds and reversals come off at once; the numbers add up', async () => {
    const account = await merchant('manual');
    expect(await balanceOf(account.id)).toEqual({ available: 0, pending: 0 });
    const first = await pay(account.id, 10_000, 'pm_card_visa', 1_000);
    await pay(account.id, 2_550, 'pm_card_mastercard', 255);
    expect(await balanceOf(account.id)).toEqual({ available: 0, pending: 9_000 + 2_295 });

    const refund = await t.stripe.refunds.create({ payment_intent: first.id, amount: 2_000, reverse_transfer: true });
    expect(refund.balance_transaction).toMatch(/^txn_/);
    // The proportional share of the transfer ($18.00 of $90.00) leaves the available balance now.
    expect(await balanceOf(account.id)).toEqual({ available: -1_800, pending: 11_295 });

    const pending = await t.stripe.balanceTransactions.list({ type: 'payment' }, { stripeAccount: account.id });
    expect(pending.data.map((b) => [b.amount, b.status])).toEqual([
      [2_295, 'pending'],
      [9_000, 'pending'],
    ]);
    expect(pending.data[0]!.available_on - pending.data[0]!.created).toBe(2 * 86_400);

    await advance();
    expect(await balanceOf(account.id)).toEqual({ available: 11_295 - 1_800, pending: 0 });
    const available = connect.received.filter((w) => w.event.account === account.id && w.event.type === 'balance.available');
    expect(available.length).toBeGreaterThan(0);
  });

  it('a direct charge pays Stripe\'s fee and the application fee from the connected account', async () => {
    const account = await merchant('manual');
    const pi = await t.stripe.paymentIntents.create(
      { amount: 10_000, currency: 'usd', payment_method: 'pm_card_bypassPending', confirm: true, application_fee_amount: 700 },
      { stripeAccount: account.id },
    );
    const charge = await t.stripe.charges.retrieve(String(pi.latest_charge), { expand: ['balance_transaction'] }, { stripeAccount: account.id });
    const txn = charge.balance_transaction as Stripe.BalanceTransaction;
    expect(txn).toMatchObject({ type: 'charge', amount: 10_000, fee: 320 + 700, net: 8_980, status: 'available' });
    expect(txn.fee_details.map((f) => [f.type, f.amount])).toEqual([
      ['stripe_fee', 320],
      ['application_fee', 700],
    ]);
    expect(await balanceOf(account.id)).toEqual({ available: 8_980, pending: 0 });
  });
});

describe('payouts', () => {
  it('pm_card_bypassPending, then POST /v1/payouts: created, in transit, paid', async () => {
    const account = await merchant();
    await pay(account.id, 5_000, 'pm_card_bypassPending');
    expect(await balanceOf(account.id)).toEqual({ available: 5_000, pending: 0 });
    const payout = await t.stripe.payouts.create({ amount: 5_000, currency: 'usd', metadata: { day: 'monday' } }, { stripeAccount: account.id });
    expect(payout).toMatchObject({ object: 'payout', amount: 5_000, currency: 'usd', status: 'pending', automatic: false, method: 'standard', type: 'bank_account' });
    expect(payout.destination).toBe(account.external_accounts?.data[0]?.id);
    expect(payout.arrival_date).toBeGreaterThan(payout.created);
    expect(await balanceOf(account.id)).toEqual({ available: 0, pending: 0 });

    await advance();
    const paid = await t.stripe.payouts.retrieve(payout.id, {}, { stripeAccount: account.id });
    expect(paid.status).toBe('paid');
    expect(eventsOf(account.id)).toEqual([
      { type: 'payout.created', id: payout.id, status: 'pending' },
      { type: 'payout.updated', id: payout.id, status: 'in_transit' },
      { type: 'payout.paid', id: payout.id, status: 'paid' },
    ]);
    expect(await balanceOf(account.id)).toEqual({ available: 0, pending: 0 });
    const listed = await t.stripe.payouts.list({}, { stripeAccount: account.id });
    expect(listed.data.map((p) => p.id)).toEqual([payout.id]);
  });

  it('more than the available balance is balance_insufficient; the platform pays out of its own', async () => {
    const account = await merchant();
    await pay(account.id, 3_000, 'pm_card_bypassPending');
    const refused = await rejected(t.stripe.payouts.create({ amount: 3_001, currency: 'usd' }, { stripeAccount: account.id }));
    expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(refused.code).toBe('balance_insufficient');
    const pendingOnly = await merchant();
    await pay(pendingOnly.id, 3_000);
    expect((await rejected(t.stripe.payouts.create({ amount: 100, currency: 'usd' }, { stripeAccount: pendingOnly.id }))).code).toBe('balance_insufficient');
    // The platform's own payouts draw on the platform's balance (application fees), never a connected account's.
    expect((await rejected(t.stripe.payouts.create({ amount: 100_000_000, currency: 'usd' }))).code).toBe('balance_insufficient');
  });

  it.each([
    { bank: 'btok_us_verified_noAccount', code: 'no_account' },
    { bank: 'btok_us_verified_accountClosed', code: 'account_closed' },
    { bank: '000222222227', code: 'insufficient_funds' },
  ])('a payout to $bank fails with $code and the funds come back', async ({ bank, code }) => {
    const account = await merchant('manual');
    const external = bank.startsWith('btok_')
      ? bank
      : { object: 'bank_account' as const, country: 'US', currency: 'usd', routing_number: '110000000', account_number: bank };
    const destination = await t.stripe.accounts.createExternalAccount(account.id, { external_account: external, default_for_currency: true });
    await pay(account.id, 4_000, 'pm_card_bypassPending');
    const payout = await t.stripe.payouts.create({ amount: 4_000, currency: 'usd' }, { stripeAccount: account.id });
    expect(payout.destination).toBe(destination.id);
    await advance();
    const failed = await t.stripe.payouts.retrieve(payout.id, { expand: ['failure_balance_transaction'] }, { stripeAccount: account.id });
    expect(failed).toMatchObject({ status: 'failed', failure_code: code });
    expect(failed.failure_message).toEqual(expect.any(String));
    expect(failed.failure_balance_transaction).toMatchObject({ type: 'payout_failure', amount: 4_000 });
    expect(eventsOf(account.id, 'payout.failed')).toEqual([{ type: 'payout.failed', id: payout.id, status: 'failed' }]);
    expect(await balanceOf(account.id)).toEqual({ available: 4_000, pending: 0 });
    expect(await t.stripe.accounts.retrieveExternalAccount(account.id, destination.id)).toMatchObject({ status: 'errored' });
  });

  it('a pending payout can be canceled; one that has left for the bank cannot', async () => {
    const account = await merchant('manual');
    await pay(account.id, 6_000, 'pm_card_bypassPending');
    const canceled = await t.stripe.payouts.cancel((await t.stripe.payouts.create({ amount: 2_000, currency: 'usd' }, { stripeAccount: account.id })).id, {}, { stripeAccount: account.id });
    expect(canceled.status).toBe('canceled');
    await t.sim.control.webhooksIdle();
    expect(eventsOf(account.id).map((e) => e.type)).toEqual(['payout.created', 'payout.canceled']);
    expect(await balanceOf(account.id)).toEqual({ available: 6_000, pending: 0 });
    const second = await t.stripe.payouts.create({ amount: 6_000, currency: 'usd' }, { stripeAccount: account.id });
    await advance();
    expect((await rejected(t.stripe.payouts.cancel(second.id, {}, { stripeAccount: account.id }))).statusCode).toBe(400);
  });

  it('automatic payouts: once funds are available, the daily run pays out the whole balance', async () => {
    const account = await merchant();
    expect(account.settings?.payouts?.schedule).toMatchObject({ interval: 'daily', delay_days: 2 });
    await pay(account.id, 7_500, 'pm_card_visa', 750);
    expect(await balanceOf(account.id)).toEqual({ available: 0, pending: 6_750 });
    await advance();
    const [payout] = (await t.stripe.payouts.list({}, { stripeAccount: account.id })).data;
    expect(payout).toMatchObject({ amount: 6_750, automatic: true, status: 'paid' });
    expect(eventsOf(account.id).map((e) => e.type)).toEqual(['payout.created', 'payout.updated', 'payout.paid']);
    expect(await balanceOf(account.id)).toEqual({ available: 0, pending: 0 });
  });

  it('payouts are isolated by account and mode', async () => {
    const one = await merchant();
    const other = await merchant();
    await pay(one.id, 2_000, 'pm_card_bypassPending');
    const payout = await t.stripe.payouts.create({ amount: 2_000, currency: 'usd' }, { stripeAccount: one.id });
    expect((await rejected(t.stripe.payouts.retrieve(payout.id, {}, { stripeAccount: other.id }))).code).toBe('resource_missing');
    expect((await t.stripe.payouts.list({}, { stripeAccount: other.id })).data).toEqual([]);
    expect(await balanceOf(other.id)).toEqual({ available: 0, pending: 0 });
    // A live account of the platform starts with no bank account: live money needs real details.
    const live = await t.live.accounts.create({ type: 'custom', country: 'US', capabilities: { card_payments: { requested: true }, transfers: { requested: true } } });
    expect(live.external_accounts?.data).toEqual([]);
    expect((await rejected(t.live.payouts.retrieve(payout.id, {}, { stripeAccount: live.id }))).code).toBe('resource_missing');
  });
});

describe('restart', () => {
  it('a payout in flight survives a restart and then arrives', async () => {
    const account = await merchant('manual');
    await pay(account.id, 8_000, 'pm_card_bypassPending');
    const payout = await t.stripe.payouts.create({ amount: 8_000, currency: 'usd' }, { stripeAccount: account.id });
    // Delivered before the restart: a delivery cut off by it would be sent again (at least once).
    await t.sim.control.webhooksIdle();

    await t.restart();

    expect(await t.stripe.payouts.retrieve(payout.id, {}, { stripeAccount: account.id })).toEqual(payout);
    expect(await balanceOf(account.id)).toEqual({ available: 0, pending: 0 });
    await advance();
    expect((await t.stripe.payouts.retrieve(payout.id, {}, { stripeAccount: account.id })).status).toBe('paid');
    expect(eventsOf(account.id).map((e) => e.type)).toEqual(['payout.created', 'payout.updated', 'payout.paid']);
  });
});
