import Stripe from 'stripe';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TestSimulator, WebhookReceiver, eventually, startTestSimulator } from '../simulator/testing/harness.js';
import { verifiedAccountParams } from '../simulator/testing/onboarding.js';
import type { DeliveryInfo } from '../simulator/index.js';

let t: TestSimulator;
let receiver: WebhookReceiver;
let endpoint: Stripe.WebhookEndpoint;

beforeAll(async () => {
  t = await startTestSimulator();
});
afterAll(async () => {
  await t.close();
});
beforeEach(async () => {
  receiver = await new WebhookReceiver().start();
  endpoint = await t.stripe.webhookEndpoints.create({ url: receiver.url, enabled_events: ['*'] });
});
afterEach(async () => {
  await t.sim.control.setWebhookFaults({ delayMs: 0, duplicate: false, drop: false, hold: false, holdBatch: 0 });
  await t.stripe.webhookEndpoints.del(endpoint.id);
  await receiver.close();
});

function verify(raw: string, header: string, secret: string): Stripe.Event {
  return t.stripe.webhooks.constructEvent(raw, header, secret);
}

describe('webhook endpoints', () => {
  it('returns the secret on create only, and lists, updates and deletes', async () => {
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(endpoint.status).toBe('enabled');
    const fetched = await t.stripe.webhookEndpoints.retrieve(endpoint.id);
    expect(fetched.secret).toBeUndefined();
    const other = await t.stripe.webhookEndpoints.create({ url: 'http://127.0.0.1:1/x', enabled_events: ['charge.succeeded', 'charge.failed'], description: 'temp' });
    const updated = await t.stripe.webhookEndpoints.update(other.id, { disabled: true });
    expect(updated.status).toBe('disabled');
    const listed = await t.stripe.webhookEndpoints.list();
    expect(listed.data.map((e) => e.id)).toContain(other.id);
    const deleted = await t.stripe.webhookEndpoints.del(other.id);
    expect(deleted.deleted).toBe(true);
  });
});

describe('delivery', () => {
  it('delivers signed events that constructEvent verifies; a tampered payload fails', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
    await eventually(() => (receiver.types().includes('payment_intent.succeeded') ? true : undefined), 'payment_intent.succeeded webhook');
    expect(receiver.types()).toEqual(['payment_intent.created', 'charge.succeeded', 'payment_intent.succeeded']);
    for (const hook of receiver.received) {
      const header = String(hook.headers['stripe-signature']);
      expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      const event = verify(hook.raw, header, endpoint.secret!);
      expect(event.object).toBe('event');
      expect(event.livemode).toBe(false);
      expect(event.api_version).toBe(Stripe.API_VERSION);
      expect(event.request?.idempotency_key).toMatch(/^stripe-node-retry-/);
    }
    const succeeded = receiver.received[2]!;
    expect(succeeded.event.data.object.id).toBe(pi.id);
    const tampered = succeeded.raw.replace('"amount": 1000', '"amount": 1');
    expect(() => verify(tampered, String(succeeded.headers['stripe-signature']), endpoint.secret!)).toThrow(Stripe.errors.StripeSignatureVerificationError);
    expect(() => verify(succeeded.raw, String(succeeded.headers['stripe-signature']), 'whsec_wrong')).toThrow();
    const event: Stripe.Event = await t.stripe.events.retrieve(succeeded.event.id);
    expect(event.type).toBe('payment_intent.succeeded');
    await eventually(async () => ((await t.stripe.events.retrieve(event.id)).pending_webhooks === 0 ? true : undefined), 'pending_webhooks to drop');
    const listed = await t.stripe.events.list({ type: 'payment_intent.succeeded', limit: 1 });
    expect(listed.data[0]?.id).toBe(event.id);
  });

  it('filters by enabled_events and separates Connect endpoints', async () => {
    const chargesOnly = await new WebhookReceiver().start();
    const connect = await new WebhookReceiver().start();
    const narrow = await t.stripe.webhookEndpoints.create({ url: chargesOnly.url, enabled_events: ['charge.succeeded'] });
    const connectEndpoint = await t.stripe.webhookEndpoints.create({ url: connect.url, enabled_events: ['*'], connect: true });
    try {
      const account = await t.stripe.accounts.create(verifiedAccountParams());
      await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true }, { stripeAccount: account.id });
      await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
      await eventually(() => (connect.types().includes('payment_intent.succeeded') && chargesOnly.received.length === 1 ? true : undefined), 'connect deliveries');
      await t.sim.control.webhooksIdle();
      expect(chargesOnly.types()).toEqual(['charge.succeeded']);
      expect(connect.received.every((w) => w.event.account === account.id)).toBe(true);
      expect(connect.types()).toContain('capability.updated');
      expect(connect.types()).toContain('account.updated');
      expect(receiver.received.every((w) => w.event.account === undefined)).toBe(true);
    } finally {
      await t.stripe.webhookEndpoints.del(narrow.id);
      await t.stripe.webhookEndpoints.del(connectEndpoint.id);
      await chargesOnly.close();
      await connect.close();
    }
  });

  it('retries a failing endpoint', async () => {
    // Advancing timers also makes earlier payments' funds available (balance.available events):
    // settle those first, so the one event this endpoint gets below is the payment's.
    await t.sim.control.advanceTimers();
    await t.sim.control.webhooksIdle();
    receiver.received.length = 0;
    const ours = (d: DeliveryInfo): boolean => d.endpointId === endpoint.id && d.eventType === 'payment_intent.created';
    receiver.failNext = 2;
    await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd' });
    const first = await eventually(async () => {
      const rows = (await t.sim.control.webhookDeliveries()).filter(ours);
      return rows[0] && rows[0].attempts >= 1 ? rows[0] : undefined;
    }, 'first attempt');
    expect(first.status).toBe('pending');
    expect(first.lastError).toContain('500');
    await t.sim.control.advanceTimers();
    await eventually(async () => {
      await t.sim.control.advanceTimers();
      return receiver.received.length === 1 ? true : undefined;
    }, 'retried delivery');
    // The receiver records the request before answering it: wait for the dispatcher to record the answer.
    const delivered = await eventually(async () => {
      const row = (await t.sim.control.webhookDeliveries()).find(ours);
      return row?.status === 'delivered' ? row : undefined;
    }, 'delivery recorded');
    expect(delivered.attempts).toBe(3);
  });
});

describe('delivery faults', () => {
  it('delays deliveries', async () => {
    await t.sim.control.setWebhookFaults({ delayMs: 150 });
    const started = Date.now();
    await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd' });
    await eventually(() => (receiver.received.length === 1 ? true : undefined), 'delayed delivery');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it('duplicates each event', async () => {
    await t.sim.control.setWebhookFaults({ duplicate: true });
    await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd' });
    await eventually(() => (receiver.received.length === 2 ? true : undefined), 'duplicate deliveries');
    expect(receiver.received[0]!.event.id).toBe(receiver.received[1]!.event.id);
  });

  it('holds a batch and delivers it in reverse order', async () => {
    await t.sim.control.setWebhookFaults({ hold: true });
    await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receiver.received).toHaveLength(0);
    expect(await t.sim.control.releaseHeldWebhooks()).toBe(3);
    await eventually(() => (receiver.received.length === 3 ? true : undefined), 'released deliveries');
    expect(receiver.types()).toEqual(['payment_intent.succeeded', 'charge.succeeded', 'payment_intent.created']);
  });

  it('releases automatically after a batch size', async () => {
    await t.sim.control.setWebhookFaults({ hold: true, holdBatch: 2 });
    await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd', metadata: { n: '1' } });
    await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd', metadata: { n: '2' } });
    await eventually(() => (receiver.received.length === 2 ? true : undefined), 'batch release');
    expect(receiver.received.map((w) => (w.event.data.object.metadata as Record<string, string>).n)).toEqual(['2', '1']);
  });

  it('drops deliveries until re-enabled', async () => {
    await t.sim.control.setWebhookFaults({ drop: true });
    await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd', metadata: { n: 'dropped' } });
    await t.sim.control.setWebhookFaults({ drop: false });
    await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd', metadata: { n: 'kept' } });
    await eventually(() => (receiver.received.length === 1 ? true : undefined), 'delivery after drop');
    await t.sim.control.webhooksIdle();
    expect((receiver.received[0]!.event.data.object.metadata as Record<string, string>).n).toBe('kept');
    const dropped = (await t.sim.control.webhookDeliveries()).filter((d) => d.endpointId === endpoint.id && d.status === 'dropped');
    expect(dropped).toHaveLength(1);
  });

  it('is scriptable over HTTP too', async () => {
    const response = await fetch(`${t.sim.url}/_sim/webhooks/faults`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ duplicate: true, delay_ms: 10 }),
    });
    expect(await response.json()).toMatchObject({ duplicate: true, delayMs: 10 });
    const deliveries = (await (await fetch(`${t.sim.url}/_sim/webhooks/deliveries`)).json()) as { data: unknown[] };
    expect(Array.isArray(deliveries.data)).toBe(true);
  });
});
