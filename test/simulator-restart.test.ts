import type Stripe from 'stripe';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestSimulator, WebhookReceiver, eventually, notDeleted, startTestSimulator } from '../simulator/testing/harness.js';
import { verifiedAccountParams } from '../simulator/testing/onboarding.js';

/** A restart in the middle of every kind of pending work: nothing is lost, nothing happens twice. */

let t: TestSimulator;
let dataDir: string;
let receiver: WebhookReceiver;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'pos-sim-restart-'));
  t = await startTestSimulator({ dataDir, authorizationDelayMs: 1_000, achSettlementDelayMs: 1_000 });
  receiver = await new WebhookReceiver().start();
});
afterAll(async () => {
  await t.close();
  await receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it('keeps keys, objects, pending timers and pending webhooks across a restart', async () => {
  const keys = t.sim.keys;
  const endpoint = await t.stripe.webhookEndpoints.create({ url: receiver.url, enabled_events: ['payment_intent.succeeded', 'refund.created'] });
  const account = await t.stripe.accounts.create(verifiedAccountParams());
  const location = await t.stripe.terminal.locations.create({ display_name: 'Shop', address: { country: 'US', line1: '1 Main St' } });
  const reader = await t.stripe.terminal.readers.create({ registration_code: 'simulated-wpe', location: location.id });
  const paid = await t.stripe.paymentIntents.create({ amount: 4000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
  const refund = await t.stripe.refunds.create({ payment_intent: paid.id, amount: 1000 });
  await eventually(() => (receiver.received.length === 2 ? true : undefined), 'first webhooks');

  // Pending work at the moment of the restart: an ACH settlement, a card-present authorisation and
  // webhooks that cannot be delivered yet (held).
  const ach = await t.stripe.paymentIntents.create({ amount: 9000, currency: 'usd', allowed_payment_method_types: ['us_bank_account'], payment_method: 'pm_usBankAccount_success', confirm: true });
  const terminalPi = await t.stripe.paymentIntents.create({ amount: 1500, currency: 'usd', allowed_payment_method_types: ['card_present'] });
  await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: terminalPi.id });
  await t.stripe.testHelpers.terminal.readers.presentPaymentMethod(reader.id);
  await t.sim.control.setWebhookFaults({ hold: true });
  await t.stripe.refunds.create({ payment_intent: paid.id, amount: 500 });
  // Precondition: both timers are still pending when the simulator stops (1 s windows).
  expect((await t.stripe.paymentIntents.retrieve(ach.id)).status).toBe('processing');
  expect((await t.stripe.paymentIntents.retrieve(terminalPi.id)).status).toBe('processing');

  await t.restart();

  expect(t.sim.keys).toEqual(keys);
  expect((await t.stripe.webhookEndpoints.retrieve(endpoint.id)).url).toBe(receiver.url);
  expect((await t.stripe.accounts.retrieve(account.id)).capabilities?.transfers).toBe('active');
  expect((await t.stripe.refunds.retrieve(refund.id)).amount).toBe(1000);

  const achDone = await eventually(async () => {
    const pi = await t.stripe.paymentIntents.retrieve(ach.id);
    return pi.status === 'succeeded' ? pi : undefined;
  }, 'ACH settlement after restart');
  expect(achDone.amount_received).toBe(9000);
  const terminalDone = await eventually(async () => {
    const pi = await t.stripe.paymentIntents.retrieve(terminalPi.id);
    return pi.status === 'succeeded' ? pi : undefined;
  }, 'authorisation after restart');
  expect(terminalDone.latest_charge).toMatch(/^ch_/);
  expect(notDeleted<Stripe.Terminal.Reader>(await t.stripe.terminal.readers.retrieve(reader.id)).action?.status).toBe('succeeded');

  await t.sim.control.setWebhookFaults({ hold: false });
  await eventually(() => (receiver.types().filter((type) => type === 'payment_intent.succeeded').length === 3 ? true : undefined), 'webhooks after restart');
  await t.sim.control.webhooksIdle();
  expect(receiver.types().sort()).toEqual(['payment_intent.succeeded', 'payment_intent.succeeded', 'payment_intent.succeeded', 'refund.created', 'refund.created'].sort());
  // Each event exactly once: a restart repeats no transition and no delivery.
  expect(new Set(receiver.received.map((w) => w.event.id)).size).toBe(receiver.received.length);
});

it('resumes deliveries that were due while the simulator was down', async () => {
  const late = await new WebhookReceiver().start();
  const endpoint = await t.stripe.webhookEndpoints.create({ url: late.url, enabled_events: ['payment_intent.created'] });
  await t.sim.control.setWebhookFaults({ delayMs: 200 });
  const pi = await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd' });
  await t.sim.close();
  await t.restart();
  await t.sim.control.setWebhookFaults({ delayMs: 0 });
  await eventually(() => (late.received.some((w) => w.event.data.object.id === pi.id) ? true : undefined), 'delayed delivery after restart');
  await t.stripe.webhookEndpoints.del(endpoint.id);
  await late.close();
});
