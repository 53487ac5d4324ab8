import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestSimulator, WebhookReceiver, eventually, notDeleted, startTestSimulator, rejected } from '../simulator/testing/harness.js';

let t: TestSimulator;
let location: Stripe.Terminal.Location;
let receiver: WebhookReceiver;

beforeAll(async () => {
  t = await startTestSimulator({ authorizationDelayMs: 40 });
  receiver = await new WebhookReceiver().start();
  await t.stripe.webhookEndpoints.create({ url: receiver.url, enabled_events: ['*'] });
  location = await t.stripe.terminal.locations.create({
    display_name: 'Main street',
    address: { line1: '1 Main St', city: 'Springfield', state: 'IL', postal_code: '62701', country: 'US' },
  });
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

async function newReader(): Promise<Stripe.Terminal.Reader> {
  return t.stripe.terminal.readers.create({ registration_code: 'simulated-wpe', location: location.id, label: 'Till 1' });
}

async function cardPresentIntent(amount: number, captureMethod: 'automatic' | 'manual' = 'automatic'): Promise<Stripe.PaymentIntent> {
  return t.stripe.paymentIntents.create({ amount, currency: 'usd', allowed_payment_method_types: ['card_present'], capture_method: captureMethod });
}

/**
 * Runs `work` with an authorisation window long enough that it cannot close by itself, then closes
 * it with the control API: assertions made inside the window do not race the timer.
 */
async function withOpenWindow(work: () => Promise<void>): Promise<void> {
  await t.sim.control.setAuthorizationDelay(60_000);
  try {
    await work();
  } finally {
    await t.sim.control.setAuthorizationDelay(40);
    await t.sim.control.advanceTimers();
  }
}

async function settled(id: string): Promise<Stripe.PaymentIntent> {
  return eventually(async () => {
    const pi = await t.stripe.paymentIntents.retrieve(id);
    return pi.status === 'processing' ? undefined : pi;
  }, `authorisation of ${id}`);
}

describe('locations and registration', () => {
  it('manages locations', async () => {
    const fetched = notDeleted<Stripe.Terminal.Location>(await t.stripe.terminal.locations.retrieve(location.id));
    expect(fetched.display_name).toBe('Main street');
    const temp = await t.stripe.terminal.locations.create({ display_name: 'Pop-up', address: { country: 'US', line1: '2 Side St' } });
    const updated = await t.stripe.terminal.locations.update(temp.id, { display_name: 'Pop-up 2' });
    expect(notDeleted<Stripe.Terminal.Location>(updated).display_name).toBe('Pop-up 2');
    const listed = await t.stripe.terminal.locations.list();
    expect(listed.data.map((l) => l.id)).toContain(temp.id);
    const deleted = await t.stripe.terminal.locations.del(temp.id);
    expect(deleted.deleted).toBe(true);
  });

  it('registers simulated readers only with a location of the same mode', async () => {
    const reader = await newReader();
    expect(reader.device_type).toBe('simulated_wisepos_e');
    expect(reader.status).toBe('online');
    expect(reader.location).toBe(location.id);
    const s700 = await t.stripe.terminal.readers.create({ registration_code: 'simulated-s700', location: location.id });
    expect(s700.device_type).toBe('simulated_stripe_s700');
    const noLocation = await rejected(t.stripe.terminal.readers.create({ registration_code: 'simulated-wpe' }));
    expect(noLocation).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(noLocation.message).toMatch(/location is required/i);
    const liveLocation = await t.live.terminal.locations.create({ display_name: 'Live shop', address: { country: 'US', line1: '3 Live St' } });
    const otherMode = await rejected(t.stripe.terminal.readers.create({ registration_code: 'simulated-wpe', location: liveLocation.id }));
    expect(otherMode.message).toMatch(/location is required/i);
    const badCode = await rejected(t.stripe.terminal.readers.create({ registration_code: 'purple-cow-fish', location: location.id }));
    expect(badCode.param).toBe('registration_code');
  });

  it('live mode refuses simulated codes and registers physical readers', async () => {
    const liveLocation = await t.live.terminal.locations.create({ display_name: 'Live shop', address: { country: 'US', line1: '3 Live St' } });
    const refused = await rejected(t.live.terminal.readers.create({ registration_code: 'simulated-wpe', location: liveLocation.id }));
    expect(refused.param).toBe('registration_code');
    const physical = await t.live.terminal.readers.create({ registration_code: 'crane-apple-seven', location: liveLocation.id, label: 'Front' });
    expect(physical.device_type).toBe('bbpos_wisepos_e');
    expect(physical.serial_number).toBe('CRANE-APPLE-SEVEN');
    expect(physical.livemode).toBe(true);
    const listed = await t.live.terminal.readers.list({ location: liveLocation.id });
    expect(listed.data.map((r) => r.id)).toEqual([physical.id]);
  });

  it('lists, updates and deletes readers; issues connection tokens', async () => {
    const reader = await newReader();
    const online = await t.stripe.terminal.readers.list({ location: location.id, status: 'online' });
    expect(online.data.map((r) => r.id)).toContain(reader.id);
    const renamed = await t.stripe.terminal.readers.update(reader.id, { label: 'Till 9' });
    expect(notDeleted<Stripe.Terminal.Reader>(renamed).label).toBe('Till 9');
    const deleted = await t.stripe.terminal.readers.del(reader.id);
    expect(deleted.deleted).toBe(true);
    const stub = await t.stripe.terminal.readers.retrieve(reader.id);
    expect(stub).toMatchObject({ id: reader.id, deleted: true });
    expect((await t.stripe.terminal.readers.list({ location: location.id, limit: 100 })).data.map((r) => r.id)).not.toContain(reader.id);
    const gone = await rejected(t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: 'pi_x' }));
    expect(gone.code).toBe('resource_missing');
    const token: Stripe.Terminal.ConnectionToken = await t.stripe.terminal.connectionTokens.create({ location: location.id });
    expect(token.secret).toMatch(/^pst_test_/);
  });
});

describe('process_payment_intent', () => {
  it('approves a presented card, adding the tip', async () => {
    const reader = await newReader();
    const pi = await cardPresentIntent(1000);
    const processing = await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id });
    expect(processing.action?.type).toBe('process_payment_intent');
    expect(processing.action?.status).toBe('in_progress');
    expect(processing.action?.process_payment_intent?.payment_intent).toBe(pi.id);
    expect((await t.stripe.paymentIntents.retrieve(pi.id)).status).toBe('requires_payment_method');
    await withOpenWindow(async () => {
      await t.stripe.testHelpers.terminal.readers.presentPaymentMethod(reader.id, { amount_tip: 200 });
      expect((await t.stripe.paymentIntents.retrieve(pi.id)).status).toBe('processing');
    });
    const done = await settled(pi.id);
    expect(done.status).toBe('succeeded');
    expect(done.amount).toBe(1200);
    expect(done.amount_details?.tip?.amount).toBe(200);
    const charge = await t.stripe.charges.retrieve(String(done.latest_charge));
    expect(charge.payment_method_details?.type).toBe('card_present');
    expect(charge.payment_method_details?.card_present?.brand).toBe('visa');
    expect(charge.payment_method_details?.card_present?.last4).toBe('4242');
    expect(charge.amount).toBe(1200);
    const after = notDeleted<Stripe.Terminal.Reader>(await t.stripe.terminal.readers.retrieve(reader.id));
    expect(after.action?.status).toBe('succeeded');
    await eventually(() => (receiver.received.some((w) => w.event.type === 'terminal.reader.action_succeeded' && w.event.data.object.id === reader.id) ? true : undefined), 'action_succeeded webhook');
  });

  it('manual capture leaves the intent requires_capture', async () => {
    const reader = await newReader();
    const pi = await cardPresentIntent(2500, 'manual');
    await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id });
    await t.stripe.testHelpers.terminal.readers.presentPaymentMethod(reader.id);
    const done = await settled(pi.id);
    expect(done.status).toBe('requires_capture');
    expect((await t.stripe.paymentIntents.capture(pi.id)).status).toBe('succeeded');
  });

  const amounts: [number, string][] = [
    [1001, 'call_issuer'],
    [1005, 'generic_decline'],
    [1055, 'incorrect_pin'],
    [1065, 'withdrawal_count_limit_exceeded'],
    [1075, 'pin_try_exceeded'],
  ];
  it.each(amounts)('amount %i declines with %s', async (amount, declineCode) => {
    const reader = await newReader();
    const pi = await cardPresentIntent(amount);
    await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id });
    await t.stripe.testHelpers.terminal.readers.presentPaymentMethod(reader.id);
    const done = await settled(pi.id);
    expect(done.status).toBe('requires_payment_method');
    expect(done.last_payment_error?.decline_code).toBe(declineCode);
    const after = notDeleted<Stripe.Terminal.Reader>(await t.stripe.terminal.readers.retrieve(reader.id));
    expect(after.action?.status).toBe('failed');
    expect(after.action?.failure_code).toBe('card_declined');
  });

  const numbers: [string, string, string][] = [
    ['4000000000000002', 'card_declined', 'generic_decline'],
    ['4000000000009995', 'card_declined', 'insufficient_funds'],
    ['4000000000009987', 'card_declined', 'lost_card'],
    ['4000000000009979', 'card_declined', 'stolen_card'],
    ['4000000000000069', 'expired_card', 'expired_card'],
    ['4000000000000119', 'processing_error', 'processing_error'],
  ];
  it.each(numbers)('card %s declines with %s / %s', async (number, code, declineCode) => {
    const reader = await newReader();
    const pi = await cardPresentIntent(1000);
    await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id });
    await t.stripe.testHelpers.terminal.readers.presentPaymentMethod(reader.id, { card_present: { number }, type: 'card_present' });
    const done = await settled(pi.id);
    expect(done.last_payment_error?.code).toBe(code);
    expect(done.last_payment_error?.decline_code).toBe(declineCode);
  });

  it('emits action_failed and payment_failed for a decline', async () => {
    const reader = await newReader();
    const pi = await cardPresentIntent(1005);
    await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id });
    await t.stripe.testHelpers.terminal.readers.presentPaymentMethod(reader.id);
    await settled(pi.id);
    await eventually(() => (receiver.received.some((w) => w.event.type === 'terminal.reader.action_failed' && w.event.data.object.id === reader.id) ? true : undefined), 'action_failed webhook');
    expect(receiver.received.some((w) => w.event.type === 'payment_intent.payment_failed' && w.event.data.object.id === pi.id)).toBe(true);
  });

  it('refuses cancel_action and intent cancel during the authorisation window', async () => {
    const reader = await newReader();
    const pi = await cardPresentIntent(1000);
    await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id });
    await withOpenWindow(async () => {
      await t.stripe.testHelpers.terminal.readers.presentPaymentMethod(reader.id);
      const busy = await rejected(t.stripe.terminal.readers.cancelAction(reader.id));
      expect(busy.code).toBe('terminal_reader_busy');
      expect(busy.statusCode).toBe(400);
      const cancel = await rejected(t.stripe.paymentIntents.cancel(pi.id));
      expect(cancel.code).toBe('payment_intent_unexpected_state');
      expect(cancel.statusCode).toBe(400);
      const again = await rejected(t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id }));
      expect(again.code).toBe('terminal_reader_busy');
    });
    expect((await settled(pi.id)).status).toBe('succeeded');
  });

  it('cancel_action before a card is presented clears the action and leaves the intent alone', async () => {
    const reader = await newReader();
    const pi = await cardPresentIntent(1000);
    await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id });
    const canceled = await t.stripe.terminal.readers.cancelAction(reader.id);
    expect(notDeleted<Stripe.Terminal.Reader>(canceled).action).toBeNull();
    const after = await t.stripe.paymentIntents.retrieve(pi.id);
    expect(after.status).toBe('requires_payment_method');
    const retried = await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id });
    expect(retried.action?.status).toBe('in_progress');
    expect((await t.stripe.paymentIntents.cancel(pi.id)).status).toBe('canceled');
  });

  it('customer cancel on the reader fails the action and only emits action_failed', async () => {
    const reader = await newReader();
    const pi = await cardPresentIntent(1000);
    await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id, process_config: { enable_customer_cancellation: true } });
    const response = await fetch(`${t.sim.url}/_sim/readers/${reader.id}/customer_cancel`, { method: 'POST' });
    expect(response.status).toBe(200);
    const after = notDeleted<Stripe.Terminal.Reader>(await t.stripe.terminal.readers.retrieve(reader.id));
    expect(after.action?.status).toBe('failed');
    expect(after.action?.failure_code).toBe('customer_canceled');
    expect((await t.stripe.paymentIntents.retrieve(pi.id)).status).toBe('requires_payment_method');
    const events = await t.stripe.events.list({ limit: 100 });
    const related = events.data.filter((e) => (e.data.object as { id: string }).id === pi.id || (e.data.object as { id: string }).id === reader.id);
    expect(related.map((e) => e.type)).toEqual(['terminal.reader.action_failed', 'payment_intent.created']);
  });

  it('an offline reader refuses process and cancel_action', async () => {
    const reader = await newReader();
    const pi = await cardPresentIntent(1000);
    const offline = await t.sim.control.setReaderOnline(reader.id, false);
    expect(offline.status).toBe('offline');
    const process = await rejected(t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id }));
    expect(process.code).toBe('terminal_reader_offline');
    const cancel = await rejected(t.stripe.terminal.readers.cancelAction(reader.id));
    expect(cancel.code).toBe('terminal_reader_offline');
    await t.sim.control.setReaderOnline(reader.id, true);
    const ok = await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id });
    expect(ok.action?.status).toBe('in_progress');
  });

  it('scripted outcomes: decline then approve', async () => {
    const reader = await newReader();
    await t.sim.control.scriptReader(reader.id, ['insufficient_funds', 'approve']);
    const pi = await cardPresentIntent(1000);
    await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id });
    await t.stripe.testHelpers.terminal.readers.presentPaymentMethod(reader.id);
    expect((await settled(pi.id)).last_payment_error?.decline_code).toBe('insufficient_funds');
    await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id });
    await t.stripe.testHelpers.terminal.readers.presentPaymentMethod(reader.id, { card_present: { number: '4000000000000002' } });
    expect((await settled(pi.id)).status).toBe('succeeded');
  });

  it('the authorisation delay can be changed and timers advanced', async () => {
    await t.sim.control.setAuthorizationDelay(60_000);
    try {
      const reader = await newReader();
      const pi = await cardPresentIntent(1000);
      await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: pi.id });
      await t.stripe.testHelpers.terminal.readers.presentPaymentMethod(reader.id);
      expect((await t.stripe.paymentIntents.retrieve(pi.id)).status).toBe('processing');
      // The earlier payments' pending funds become available in the same advance.
      const { timersFired } = await t.sim.control.advanceTimers();
      expect(timersFired).toBeGreaterThanOrEqual(1);
      expect((await t.stripe.paymentIntents.retrieve(pi.id)).status).toBe('succeeded');
    } finally {
      await t.sim.control.setAuthorizationDelay(40);
    }
  });
});
