import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import Stripe from 'stripe';
import { MIN_POLL_INTERVAL_MS } from '../server/payments/transactions.js';
import type { RunningSimulator } from '../simulator/index.js';
import type { CreateTransactionResponse, Transaction } from '../shared/api/types.js';
import { client } from './helpers/api.js';
import { expectErrorBody, openPosDb, paymentsApi, stripeAt } from './helpers/races.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * Processor events (spec §1 "final payment state is delivered by webhook", §3, §6): outcomes of a
 * client-side confirmation reach us only as signed events to POST /processor/webhooks, or, when
 * events are lost, through the reconciler's polling. Everything real: the simulator delivers over
 * HTTP, the browser side is the official SDK with the platform publishable key.
 */

interface Shop {
  api: ReturnType<typeof paymentsApi>;
  merchantId: string;
  /** The browser's processor client, configured from GET /v1/merchant as a storefront would. */
  browser: Stripe;
}

async function shopOn(t: TestServer, name: string): Promise<Shop> {
  const m = await t.merchant(name);
  const api = paymentsApi(t.url, m.keys.sk_test);
  const view = (await api.get<{ data: { processor: { publishable_key: string; api_base: string } } }>('/v1/merchant')).body.data;
  expect(view.processor.publishable_key).toMatch(/^pk_test_/);
  return { api, merchantId: m.merchant.id, browser: stripeAt(view.processor.api_base, view.processor.publishable_key) };
}

/** A payment waiting for the customer: no payment method yet, confirmed later in the browser. */
async function pendingPayment(shop: Shop, amount = 2_500): Promise<{ txn: Transaction; intentId: string; clientSecret: string }> {
  const res = await shop.api.post<CreateTransactionResponse>('/v1/transactions', { amount, metadata: { order: randomUUID() } });
  expect(res.status).toBe(201);
  expect(res.body.data.status).toBe('pending');
  const clientSecret = res.body.client_secret;
  return { txn: res.body.data, intentId: clientSecret.split('_secret_')[0] as string, clientSecret };
}

/** What the browser does: confirm with the client_secret; a decline is the customer's problem, not ours. */
async function confirmInBrowser(shop: Shop, intentId: string, clientSecret: string, paymentMethod: string): Promise<void> {
  try {
    await shop.browser.paymentIntents.confirm(intentId, { client_secret: clientSecret, payment_method: paymentMethod } as Stripe.PaymentIntentConfirmParams);
  } catch (err) {
    if (!(err instanceof Stripe.errors.StripeCardError)) throw err;
  }
}

async function settledAs(shop: Shop, id: string, status: string, timeoutMs = 5_000): Promise<Transaction> {
  return eventually(async () => {
    const txn = await shop.api.transaction(id);
    return txn.status === status ? txn : undefined;
  }, timeoutMs);
}

async function paymentEvents(t: TestServer, id: string): Promise<string[]> {
  const db = (await openPosDb(t.dataDir));
  try {
    return (await db.all<{ type: string }>("select type from events where object_id = ? and type like 'payment.%' order by seq", id)).map((e) => e.type);
  } finally {
    await db.close();
  }
}

async function processorEventsFor(t: TestServer, intentId: string): Promise<{ id: string; type: string }[]> {
  const db = (await openPosDb(t.dataDir));
  try {
    return (await db.all<{ id: string; type: string }>('select id, type from processor_events where object_id = ?', intentId));
  } finally {
    await db.close();
  }
}

describe('processor events over webhooks', () => {
  let t: TestServer;
  let sim: RunningSimulator;
  beforeAll(async () => {
    // Polling as good as off, so every outcome here provably came by webhook.
    t = await startTestServer({ reconcileIntervalMs: 600_000 });
    sim = t.stack.simulator as RunningSimulator;
  });
  afterAll(async () => {
    await t.stop();
  });
  afterEach(async () => {
    await sim.control.setWebhookFaults({ duplicate: false, drop: false, hold: false, delayMs: 0 });
    await sim.control.webhooksIdle();
  });

  it('refuses a forged, tampered or unsigned event with 400 and records nothing', async () => {
    const shop = await shopOn(t, 'Forgery Target');
    const { txn, intentId } = await pendingPayment(shop);
    const payload = JSON.stringify({
      id: `evt_${randomUUID().replace(/-/g, '')}`,
      object: 'event',
      api_version: '2025-01-01',
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      type: 'payment_intent.succeeded',
      data: { object: { id: intentId, object: 'payment_intent', status: 'succeeded', metadata: { pos_transaction_id: txn.id } } },
    });
    const db = (await openPosDb(t.dataDir));
    const stored = (await db.all<{ value: string }>("select value from processor_settings where name = 'webhook_endpoint_test'"))[0]?.value;
    const secret = (JSON.parse(stored ? t.server.cipher.open('processor_settings.value', 'webhook_endpoint_test', stored) : '{}') as { secret: string }).secret;
    const rowOf = async () => (await db.all<{ status: string; updated_at: number; synced_at: number }>('select status, updated_at, synced_at from transactions where id = ?', txn.id))[0];
    // Counted for this event and this payment only: the simulator's own events for the shop (its
    // account's, say) may land meanwhile and are not what is checked here.
    const eventId = (JSON.parse(payload) as { id: string }).id;
    const processorEvents = () => db.count('select count(*) from processor_events where id = ?', eventId);
    const outbox = () => db.count('select count(*) from events where object_id = ?', txn.id);
    const before = { events: await processorEvents(), row: await rowOf(), outbox: await outbox() };
    const signed = (body: string, key: string) => Stripe.webhooks.generateTestHeaderString({ payload: body, secret: key });
    const send = (body: string, signature?: string) =>
      client(t.url).raw('POST', '/processor/webhooks', { rawBody: body, headers: { 'content-type': 'application/json', ...(signature ? { 'stripe-signature': signature } : {}) } });
    try {
      expect(secret).toMatch(/^whsec_/);
      expectErrorBody(await send(payload, signed(payload, 'whsec_not_the_secret')), 400, 'signature_invalid');
      expectErrorBody(await send(payload.replace('"livemode":false', '"livemode":true'), signed(payload, secret)), 400, 'signature_invalid');
      expectErrorBody(await send(payload), 400, 'signature_missing');
      expectErrorBody(await send(payload, 't=1,v1=deadbeef'), 400, 'signature_invalid');
      // A signature from the right secret but five minutes old is a replay, not news.
      const stale = Stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: Math.floor(Date.now() / 1000) - 600 });
      expectErrorBody(await send(payload, stale), 400, 'signature_invalid');
      expect({ events: await processorEvents(), row: await rowOf(), outbox: await outbox() }).toEqual(before);

      // The harness is sound: the same bytes signed with the real secret are accepted. Even then
      // the body's claims are not believed; the intent is re-read from the processor, still unpaid.
      const accepted = await send(payload, signed(payload, secret));
      expect(accepted.status).toBe(200);
      expect(await processorEvents()).toBe(before.events + 1);
      expect((await rowOf())?.status).toBe('pending');
      expect(await outbox()).toBe(before.outbox);
    } finally {
      await db.close();
    }
    expect((await shop.api.transaction(txn.id)).status).toBe('pending');
  });

  it('a client-side confirmation moves the payment to succeeded through the webhook', async () => {
    const shop = await shopOn(t, 'Storefront');
    const { txn, intentId, clientSecret } = await pendingPayment(shop);
    await confirmInBrowser(shop, intentId, clientSecret, 'pm_card_visa');
    const paid = await settledAs(shop, txn.id, 'succeeded');
    expect(paid).toMatchObject({ card_brand: 'visa', card_last_four: '4242', amount: 2_500, failure_code: null, failed_at: null });
    expect(paid.captured_at).toEqual(expect.any(String));
    expect(paid.metadata).toEqual(txn.metadata);
    expect(await paymentEvents(t, txn.id)).toEqual(['payment.created', 'payment.succeeded']);
    expect((await processorEventsFor(t, intentId)).map((e) => e.type)).toContain('payment_intent.succeeded');
  });

  it('a declined card moves it to failed with failure_code and failed_at', async () => {
    const shop = await shopOn(t, 'Declines');
    const { txn, intentId, clientSecret } = await pendingPayment(shop);
    await confirmInBrowser(shop, intentId, clientSecret, 'pm_card_chargeDeclined');
    const failed = await settledAs(shop, txn.id, 'failed');
    // docs/payments.md: failure_code is the decline code when there is one (spec: card_declined family).
    expect(failed).toMatchObject({ failure_code: 'card_declined', decline_code: 'generic_decline' });
    expect(failed.failed_at).toEqual(expect.any(String));
    expect(failed.captured_at).toBeNull();
    expect(await paymentEvents(t, txn.id)).toEqual(['payment.created', 'payment.failed']);
    expect((await processorEventsFor(t, intentId)).map((e) => e.type)).toContain('payment_intent.payment_failed');
  });

  it('every event delivered twice: the same final states, each payment event written once', async () => {
    await sim.control.setWebhookFaults({ duplicate: true });
    const shop = await shopOn(t, 'Echo Shop');
    const good = await pendingPayment(shop);
    const bad = await pendingPayment(shop);
    await Promise.all([confirmInBrowser(shop, good.intentId, good.clientSecret, 'pm_card_visa'), confirmInBrowser(shop, bad.intentId, bad.clientSecret, 'pm_card_chargeDeclined')]);
    await sim.control.webhooksIdle();
    await settledAs(shop, good.txn.id, 'succeeded');
    await settledAs(shop, bad.txn.id, 'failed');

    const goodEvents = await processorEventsFor(t, good.intentId);
    const deliveries = (await sim.control.webhookDeliveries()).filter((d) => goodEvents.some((e) => e.id === d.eventId));
    // Each event really went out twice, and both copies were acknowledged.
    const perEvent = new Map<string, number>();
    for (const d of deliveries) perEvent.set(d.eventId, (perEvent.get(d.eventId) ?? 0) + 1);
    expect(perEvent.size).toBeGreaterThan(0);
    expect([...perEvent.values()].every((n) => n === 2)).toBe(true);
    expect((await processorEventsFor(t, good.intentId)).map((e) => e.type)).toContain('payment_intent.succeeded');
    expect(deliveries.every((d) => d.status === 'delivered')).toBe(true);
    expect(await paymentEvents(t, good.txn.id)).toEqual(['payment.created', 'payment.succeeded']);
    expect(await paymentEvents(t, bad.txn.id)).toEqual(['payment.created', 'payment.failed']);
  });

  it('events delivered newest first: the server still converges on what the processor says now', async () => {
    await sim.control.setWebhookFaults({ hold: true });
    const shop = await shopOn(t, 'Reorder Shop');
    // A: declined, then paid by a second try with the same client_secret; B: declined only.
    const a = await pendingPayment(shop);
    const b = await pendingPayment(shop);
    await confirmInBrowser(shop, a.intentId, a.clientSecret, 'pm_card_chargeDeclined');
    await confirmInBrowser(shop, b.intentId, b.clientSecret, 'pm_card_chargeDeclined');
    await confirmInBrowser(shop, a.intentId, a.clientSecret, 'pm_card_visa');
    const held = (await sim.control.webhookDeliveries()).filter((d) => d.status === 'held');
    expect(held.map((d) => d.eventType)).toEqual(expect.arrayContaining(['payment_intent.payment_failed', 'payment_intent.succeeded']));
    expect((await shop.api.transaction(a.txn.id)).status).toBe('pending');

    expect(await sim.control.releaseHeldWebhooks()).toBe(held.length);
    await sim.control.webhooksIdle();
    const paid = await settledAs(shop, a.txn.id, 'succeeded');
    expect(paid).toMatchObject({ failure_code: null, card_last_four: '4242' });
    expect(await settledAs(shop, b.txn.id, 'failed')).toMatchObject({ failure_code: 'card_declined', decline_code: 'generic_decline' });
    // The late failure news about A could not move it back, nor write a payment.failed.
    expect(await paymentEvents(t, a.txn.id)).toEqual(['payment.created', 'payment.succeeded']);
    expect(await paymentEvents(t, b.txn.id)).toEqual(['payment.created', 'payment.failed']);
    expect((await shop.api.transaction(a.txn.id)).status).toBe('succeeded');
  });
});

describe('processor events lost entirely', () => {
  let t: TestServer;
  let sim: RunningSimulator;
  /** The server's clock: real time plus a jump, so the test need not sit out the poll floor. */
  let skew = 0;
  beforeAll(async () => {
    t = await startTestServer({ reconcileIntervalMs: 200 }, { clock: { now: () => Date.now() + skew } });
    sim = t.stack.simulator as RunningSimulator;
    await sim.control.setWebhookFaults({ drop: true });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('the reconciler polls the processor and converges without a single event', async () => {
    const shop = await shopOn(t, 'Deaf Shop');
    const good = await pendingPayment(shop);
    const bad = await pendingPayment(shop);
    await confirmInBrowser(shop, good.intentId, good.clientSecret, 'pm_card_visa');
    await confirmInBrowser(shop, bad.intentId, bad.clientSecret, 'pm_card_chargeDeclined');
    // A payment is re-checked at most every MIN_POLL_INTERVAL_MS (docs/payments.md): move the
    // server's clock past it rather than wait; the 200 ms reconciler then picks both up.
    skew += MIN_POLL_INTERVAL_MS + 1_000;
    const paid = await settledAs(shop, good.txn.id, 'succeeded');
    expect(paid).toMatchObject({ card_brand: 'visa', card_last_four: '4242' });
    const failed = await settledAs(shop, bad.txn.id, 'failed');
    expect(failed).toMatchObject({ failure_code: 'card_declined', decline_code: 'generic_decline' });
    expect(failed.failed_at).toEqual(expect.any(String));
    expect(await paymentEvents(t, good.txn.id)).toEqual(['payment.created', 'payment.succeeded']);
    expect(await paymentEvents(t, bad.txn.id)).toEqual(['payment.created', 'payment.failed']);
    // Nothing came by webhook: the simulator dropped every delivery and the server recorded none.
    expect((await processorEventsFor(t, good.intentId))).toEqual([]);
    expect((await processorEventsFor(t, bad.intentId))).toEqual([]);
    const deliveries = await sim.control.webhookDeliveries();
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries.every((d) => d.status === 'dropped')).toBe(true);
  });
});
