import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestSimulator, WebhookReceiver, startTestSimulator, rejected } from '../simulator/testing/harness.js';
import { verifiedAccountParams } from '../simulator/testing/onboarding.js';

/**
 * Disputes through the real `stripe` package: Stripe's dispute test cards, evidence, closing, the
 * money on both balances of a destination charge, and a restart in the middle of a decision. The
 * dispute delay is a minute, so nothing opens by itself: the control API's timer advance opens
 * disputes and delivers decisions, and no assertion waits on the clock.
 */

const DISPUTE_EVENTS: Stripe.WebhookEndpointCreateParams.EnabledEvent[] = [
  'charge.dispute.created',
  'charge.dispute.updated',
  'charge.dispute.closed',
  'charge.dispute.funds_withdrawn',
  'charge.dispute.funds_reinstated',
];

let t: TestSimulator;
let dataDir: string;
let receiver: WebhookReceiver;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pos-sim-disputes-'));
  t = await startTestSimulator({ dataDir, disputeDelayMs: 60_000 });
  receiver = await new WebhookReceiver().start();
  await t.stripe.webhookEndpoints.create({ url: receiver.url, enabled_events: DISPUTE_EVENTS });
});
afterAll(async () => {
  await t.close();
  await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function pay(paymentMethod: string, extra: Partial<Stripe.PaymentIntentCreateParams> = {}, options?: Stripe.RequestOptions): Promise<Stripe.PaymentIntent> {
  return t.stripe.paymentIntents.create({ amount: 10_000, currency: 'usd', payment_method: paymentMethod, confirm: true, ...extra }, options);
}

/** Fires the pending timers (the dispute opening among them) and waits for the webhooks they sent. */
async function advance(): Promise<void> {
  await t.sim.control.advanceTimers();
  await t.sim.control.webhooksIdle();
}

async function disputeOf(pi: Stripe.PaymentIntent, options?: Stripe.RequestOptions): Promise<Stripe.Dispute> {
  const listed = await t.stripe.disputes.list({ payment_intent: pi.id }, options);
  expect(listed.data).toHaveLength(1);
  return listed.data[0]!;
}

/** The dispute events the webhook endpoint received for one dispute, in order. */
function eventsFor(dispute: string): { type: string; status: unknown }[] {
  return receiver.received.filter((w) => w.event.data.object.id === dispute).map((w) => ({ type: w.event.type, status: w.event.data.object.status }));
}

async function balanceOf(account: string | null): Promise<{ available: number; pending: number }> {
  const balance = account ? await t.stripe.balance.retrieve({}, { stripeAccount: account }) : await t.stripe.balance.retrieve();
  const usd = (list: { amount: number; currency: string }[]): number => list.find((entry) => entry.currency === 'usd')?.amount ?? 0;
  return { available: usd(balance.available), pending: usd(balance.pending) };
}

describe('dispute test cards', () => {
  it.each([
    { card: 'pm_card_createDispute', reason: 'fraudulent', status: 'needs_response', inquiry: false },
    { card: 'pm_card_createDisputeProductNotReceived', reason: 'product_not_received', status: 'needs_response', inquiry: false },
    { card: 'pm_card_createDisputeInquiry', reason: 'fraudulent', status: 'warning_needs_response', inquiry: true },
  ])('$card: the charge succeeds, then its dispute opens with its events', async ({ card, reason, status, inquiry }) => {
    const pi = await pay(card, { metadata: { order: '42' } });
    expect(pi.status).toBe('succeeded');
    expect((await t.stripe.disputes.list({ payment_intent: pi.id })).data).toEqual([]);
    expect((await t.stripe.charges.retrieve(String(pi.latest_charge))).disputed).toBe(false);

    await advance();
    const dispute = await disputeOf(pi);
    expect(dispute.id).toMatch(/^dp_/);
    expect(dispute).toMatchObject({
      object: 'dispute',
      amount: 10_000,
      currency: 'usd',
      charge: pi.latest_charge,
      payment_intent: pi.id,
      reason,
      status,
      is_charge_refundable: inquiry,
      livemode: false,
      metadata: {},
    });
    expect(dispute.evidence.uncategorized_text).toBeNull();
    expect(dispute.evidence_details).toMatchObject({ has_evidence: false, past_due: false, submission_count: 0 });
    expect(dispute.evidence_details.due_by).toBeGreaterThan(dispute.created);
    expect((await t.stripe.charges.retrieve(String(pi.latest_charge))).disputed).toBe(true);
    expect(await t.stripe.disputes.retrieve(dispute.id)).toEqual(dispute);

    if (inquiry) {
      expect(dispute.balance_transactions).toEqual([]);
      expect(eventsFor(dispute.id)).toEqual([{ type: 'charge.dispute.created', status }]);
    } else {
      // The disputed amount and Stripe's $15 dispute fee, in one balance transaction.
      expect(dispute.balance_transactions).toHaveLength(1);
      expect(dispute.balance_transactions[0]).toMatchObject({ type: 'adjustment', reporting_category: 'dispute', amount: -10_000, fee: 1_500, net: -11_500, status: 'available' });
      expect(eventsFor(dispute.id).map((e) => e.type)).toEqual(['charge.dispute.created', 'charge.dispute.funds_withdrawn']);
    }
  });

  it('the raw card number disputes like its token', async () => {
    const pi = await t.stripe.paymentIntents.create({
      amount: 2_500,
      currency: 'usd',
      confirm: true,
      payment_method_data: { type: 'card', card: { number: '4000000000002685', exp_month: 12, exp_year: 2040, cvc: '123' } } as Stripe.PaymentIntentCreateParams.PaymentMethodData,
    });
    await advance();
    expect(await disputeOf(pi)).toMatchObject({ amount: 2_500, reason: 'product_not_received', status: 'needs_response' });
  });

  it('a charge refunded in full before the dispute would open is never disputed', async () => {
    const pi = await pay('pm_card_createDispute');
    await t.stripe.refunds.create({ payment_intent: pi.id });
    await advance();
    expect((await t.stripe.disputes.list({ payment_intent: pi.id })).data).toEqual([]);
  });
});

describe('evidence and closing', () => {
  it('winning evidence: under review, then won with the amount and the fee reinstated', async () => {
    const pi = await pay('pm_card_createDispute');
    await advance();
    const opened = await disputeOf(pi);
    const submitted = await t.stripe.disputes.update(opened.id, {
      evidence: { uncategorized_text: 'winning_evidence', customer_name: 'Jenny Rosen', product_description: 'Espresso' },
    });
    expect(submitted.status).toBe('under_review');
    expect(submitted.evidence).toMatchObject({ uncategorized_text: 'winning_evidence', customer_name: 'Jenny Rosen', product_description: 'Espresso' });
    expect(submitted.evidence_details).toMatchObject({ has_evidence: true, submission_count: 1 });
    const changed = await rejected(t.stripe.disputes.update(opened.id, { evidence: { customer_name: 'Someone else' } }));
    expect(changed.statusCode).toBe(400);

    await advance();
    const won = await t.stripe.disputes.retrieve(opened.id);
    expect(won.status).toBe('won');
    expect(won.balance_transactions.map((b) => [b.amount, b.fee, b.net, b.reporting_category])).toEqual([
      [-10_000, 1_500, -11_500, 'dispute'],
      [10_000, -1_500, 11_500, 'dispute_reversal'],
    ]);
    expect(eventsFor(opened.id)).toEqual([
      { type: 'charge.dispute.created', status: 'needs_response' },
      { type: 'charge.dispute.funds_withdrawn', status: 'needs_response' },
      { type: 'charge.dispute.updated', status: 'under_review' },
      { type: 'charge.dispute.closed', status: 'won' },
      { type: 'charge.dispute.funds_reinstated', status: 'won' },
    ]);
    const updated = receiver.received.find((w) => w.event.data.object.id === opened.id && w.event.type === 'charge.dispute.updated')!;
    expect((updated.event as unknown as Stripe.Event).data.previous_attributes).toMatchObject({ status: 'needs_response' });
  });

  it('losing evidence: lost, the funds stay withdrawn', async () => {
    const pi = await pay('pm_card_createDisputeProductNotReceived');
    await advance();
    const opened = await disputeOf(pi);
    await t.stripe.disputes.update(opened.id, { evidence: { uncategorized_text: 'losing_evidence' } });
    await advance();
    const lost = await t.stripe.disputes.retrieve(opened.id);
    expect(lost.status).toBe('lost');
    expect(lost.balance_transactions).toHaveLength(1);
    expect(eventsFor(opened.id).map((e) => `${e.type}:${String(e.status)}`)).toEqual([
      'charge.dispute.created:needs_response',
      'charge.dispute.funds_withdrawn:needs_response',
      'charge.dispute.updated:under_review',
      'charge.dispute.closed:lost',
    ]);
  });

  it('other evidence stays under review; submit=false only stages it', async () => {
    const pi = await pay('pm_card_createDispute');
    await advance();
    const opened = await disputeOf(pi);
    const staged = await t.stripe.disputes.update(opened.id, { evidence: { customer_communication: 'Emails attached' }, submit: false, metadata: { case: '7' } });
    expect(staged.status).toBe('needs_response');
    expect(staged.metadata).toEqual({ case: '7' });
    expect(staged.evidence_details).toMatchObject({ has_evidence: true, submission_count: 0 });
    const submitted = await t.stripe.disputes.update(opened.id, { submit: true });
    expect(submitted.status).toBe('under_review');
    await advance();
    expect((await t.stripe.disputes.retrieve(opened.id)).status).toBe('under_review');
    expect((await rejected(t.stripe.disputes.close(opened.id))).statusCode).toBe(400);
  });

  it('closing accepts the dispute: a chargeback is lost, an inquiry closes without one', async () => {
    const chargeback = await pay('pm_card_createDispute');
    const inquiry = await pay('pm_card_createDisputeInquiry');
    await advance();
    const lost = await t.stripe.disputes.close((await disputeOf(chargeback)).id);
    expect(lost.status).toBe('lost');
    const closed = await t.stripe.disputes.close((await disputeOf(inquiry)).id);
    expect(closed.status).toBe('warning_closed');
    expect(closed.balance_transactions).toEqual([]);
    await t.sim.control.webhooksIdle();
    expect(eventsFor(lost.id).at(-1)).toEqual({ type: 'charge.dispute.closed', status: 'lost' });
    expect((await rejected(t.stripe.disputes.close(lost.id))).statusCode).toBe(400);
    expect((await rejected(t.stripe.disputes.update(lost.id, { evidence: { uncategorized_text: 'winning_evidence' } }))).statusCode).toBe(400);
  });

  it('an inquiry won with evidence closes; lost, it becomes a chargeback that withdraws the funds', async () => {
    const winning = await pay('pm_card_createDisputeInquiry');
    const losing = await pay('pm_card_createDisputeInquiry');
    await advance();
    const won = await t.stripe.disputes.update((await disputeOf(winning)).id, { evidence: { uncategorized_text: 'winning_evidence' } });
    const lost = await t.stripe.disputes.update((await disputeOf(losing)).id, { evidence: { uncategorized_text: 'losing_evidence' } });
    expect([won.status, lost.status]).toEqual(['warning_under_review', 'warning_under_review']);
    await advance();
    expect(await t.stripe.disputes.retrieve(won.id)).toMatchObject({ status: 'warning_closed', balance_transactions: [] });
    const escalated = await t.stripe.disputes.retrieve(lost.id);
    expect(escalated).toMatchObject({ status: 'lost', is_charge_refundable: false });
    expect(escalated.balance_transactions.map((b) => b.net)).toEqual([-11_500]);
    expect(eventsFor(lost.id).map((e) => e.type).slice(-2)).toEqual(['charge.dispute.funds_withdrawn', 'charge.dispute.closed']);
  });
});

describe('refunds of disputed charges', () => {
  it('a chargeback cannot be refunded; an inquiry can', async () => {
    const chargeback = await pay('pm_card_createDispute');
    const inquiry = await pay('pm_card_createDisputeInquiry');
    await advance();
    const refused = await rejected(t.stripe.refunds.create({ payment_intent: chargeback.id, amount: 1_000 }));
    expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(refused.code).toBe('charge_disputed');
    const refund = await t.stripe.refunds.create({ payment_intent: inquiry.id, amount: 1_000 });
    expect(refund.status).toBe('succeeded');
  });
});

describe('money and scope', () => {
  it('a destination charge: the platform is debited, the transfer reversed and the fee passed on; winning gives both back', async () => {
    const account = await t.stripe.accounts.create({
      ...verifiedAccountParams(),
      // Manual payouts: the merchant's balance stays where the dispute leaves it.
      settings: { payouts: { schedule: { interval: 'manual' } } },
    });
    const platformBefore = await balanceOf(null);
    const pi = await pay('pm_card_createDispute', { transfer_data: { destination: account.id }, application_fee_amount: 1_000 });
    // $100.00 charge: the merchant gets $90.00 (pending); the platform keeps the $10.00 fee less
    // Stripe's 2.9% + 30¢ ($3.20) = $6.80.
    expect(await balanceOf(account.id)).toEqual({ available: 0, pending: 9_000 });
    expect(await balanceOf(null)).toEqual({ available: platformBefore.available, pending: platformBefore.pending + 680 });

    await advance();
    const dispute = await disputeOf(pi);
    // The merchant's $90.00 became available, then went back with the reversal, and the $15.00 fee followed.
    expect(await balanceOf(account.id)).toEqual({ available: -1_500, pending: 0 });
    const charge = await t.stripe.charges.retrieve(String(pi.latest_charge));
    const transfer = await t.stripe.transfers.retrieve(String(charge.transfer));
    expect(transfer.amount_reversed).toBe(9_000);
    const merchantEntries = await t.stripe.balanceTransactions.list({ limit: 10 }, { stripeAccount: account.id });
    expect(merchantEntries.data.map((b) => [b.type, b.net])).toEqual([
      ['transfer', -1_500],
      ['payment_refund', -9_000],
      ['payment', 9_000],
    ]);

    await t.stripe.disputes.update(dispute.id, { evidence: { uncategorized_text: 'winning_evidence' } });
    await advance();
    expect(await balanceOf(account.id)).toEqual({ available: 9_000, pending: 0 });
    const platformAfter = await balanceOf(null);
    expect(platformAfter.available + platformAfter.pending).toBe(platformBefore.available + platformBefore.pending + 680);
  });

  it('a direct charge on a connected account: its balance carries the dispute', async () => {
    const account = await t.stripe.accounts.create({
      ...verifiedAccountParams(),
      settings: { payouts: { schedule: { interval: 'manual' } } },
    });
    const connect = await new WebhookReceiver().start();
    const endpoint = await t.stripe.webhookEndpoints.create({ url: connect.url, enabled_events: DISPUTE_EVENTS, connect: true });
    try {
      const pi = await pay('pm_card_createDispute', { amount: 5_000, application_fee_amount: 500 }, { stripeAccount: account.id });
      // $50.00 less Stripe's $1.75 and the platform's $5.00.
      expect(await balanceOf(account.id)).toEqual({ available: 0, pending: 4_325 });
      await advance();
      const dispute = await disputeOf(pi, { stripeAccount: account.id });
      expect(await balanceOf(account.id)).toEqual({ available: 4_325 - 6_500, pending: 0 });
      expect(connect.received.map((w) => [w.event.type, w.event.account])).toEqual([
        ['charge.dispute.created', account.id],
        ['charge.dispute.funds_withdrawn', account.id],
      ]);
      // The dispute lives on the connected account: the platform does not see it.
      const missing = await rejected(t.stripe.disputes.retrieve(dispute.id));
      expect(missing.code).toBe('resource_missing');
      expect((await t.stripe.disputes.list({ payment_intent: pi.id })).data).toEqual([]);
    } finally {
      await t.stripe.webhookEndpoints.del(endpoint.id);
      await connect.close();
    }
  });

  it('test and live disputes are isolated', async () => {
    const live = await t.live.paymentIntents.create({ amount: 3_000, currency: 'usd', payment_method: 'pm_card_createDispute', confirm: true });
    await advance();
    const [liveDispute] = (await t.live.disputes.list({ payment_intent: live.id })).data;
    expect(liveDispute).toMatchObject({ livemode: true, status: 'needs_response' });
    const fromTest = await rejected(t.stripe.disputes.retrieve(liveDispute!.id));
    expect(fromTest.code).toBe('resource_missing');
    expect(fromTest.message).toContain('live mode');
    expect((await t.stripe.disputes.list({ limit: 100 })).data.map((d) => d.id)).not.toContain(liveDispute!.id);
  });
});

describe('restart', () => {
  it('a dispute and its pending decision survive a restart', async () => {
    const pi = await pay('pm_card_createDispute');
    await advance();
    const opened = await disputeOf(pi);
    const submitted = await t.stripe.disputes.update(opened.id, { evidence: { uncategorized_text: 'winning_evidence' } });
    // Delivered before the restart: a delivery cut off by it would be sent again (at least once).
    await t.sim.control.webhooksIdle();

    await t.restart();

    expect(await t.stripe.disputes.retrieve(opened.id)).toEqual(submitted);
    await advance();
    expect((await t.stripe.disputes.retrieve(opened.id)).status).toBe('won');
    expect(eventsFor(opened.id).map((e) => e.type).slice(-2)).toEqual(['charge.dispute.closed', 'charge.dispute.funds_reinstated']);
  });
});
