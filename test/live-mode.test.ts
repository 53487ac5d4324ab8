import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { call, client, type Json } from './helpers/api.js';
import { capturedLogger, startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

type ErrorBody = { error: Json & { code?: string; message?: string; decline_code?: string } };

const CUSTOMER = { email: 'customer@example.com' };
const ADDRESS = { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' };

/** The attributes the hosted page hands its script: where the processor is, and the key to use there. */
function pageConfig(html: string): { processorUrl: string; publishableKey: string; startUrl: string } {
  const attr = (name: string) => {
    const match = new RegExp(`${name}="([^"]*)"`).exec(html);
    if (!match?.[1]) throw new Error(`page has no ${name}`);
    return match[1].replace(/&amp;/g, '&');
  };
  return { processorUrl: attr('data-processor-url'), publishableKey: attr('data-publishable-key'), startUrl: attr('data-start-url') };
}

/** What the page's script sends the simulator for a typed card (server/pages/assets/checkout.js). */
async function confirmTypedCard(processorUrl: string, publishableKey: string, started: { payment_intent: string; client_secret: string }, number: string) {
  const form = new URLSearchParams({
    client_secret: started.client_secret,
    return_url: 'http://127.0.0.1/return',
    'payment_method_data[type]': 'card',
    'payment_method_data[card][number]': number,
    'payment_method_data[card][exp_month]': '12',
    'payment_method_data[card][exp_year]': String(new Date().getUTCFullYear() + 2),
    'payment_method_data[card][cvc]': '123',
  });
  const res = await fetch(`${processorUrl}/v1/payment_intents/${encodeURIComponent(started.payment_intent)}/confirm`, {
    method: 'POST',
    headers: { authorization: `Bearer ${publishableKey}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
  });
  return (await res.json()) as Json & { status?: string; error?: Json & { decline_code?: string; code?: string; message?: string } };
}

describe('live mode on the simulator, by default', () => {
  let t: TestServer;
  let m: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestServer();
    m = await t.merchant('Live Shop');
  });
  afterAll(() => t.stop());

  it('refuses every live request that would create or move money, before anything is written', async () => {
    const live = client(t.url, m.keys.sk_live);
    const test = client(t.url, m.keys.sk_test);
    // A real test payment, to try capture, cancel and refund on with the live key.
    const made = await test.post<{ data: { id: string } }>('/v1/transactions', { amount: 1500, capture_method: 'manual', payment_method: 'pm_card_visa', confirm: true });
    expect(made.status).toBe(201);
    const id = made.body.data.id;
    const attempts: [string, Json][] = [
      ['/v1/transactions', { amount: 1500 }],
      ['/v1/transactions', { amount: 1500, payment_method_type: 'ach' }],
      ['/v1/payment-intents', { amount: 1500 }],
      [`/v1/transactions/${id}/capture`, {}],
      [`/v1/transactions/${id}/cancel`, {}],
      [`/v1/transactions/${id}/refunds`, { amount: 100 }],
      ['/v1/terminal/create-payment', { amount: 1500 }],
      ['/v1/terminal/process-payment', { payment_intent_id: 'pi_x', reader_id: 'tmr_x' }],
      ['/v1/terminal/simulate-payment', { reader_id: 'tmr_x' }],
      ['/v1/checkout/sessions', { amount: 1500, success_url: 'https://example.com/ok' }],
      ['/v1/payment-links', { amount: 1500 }],
    ];
    for (const [path, body] of attempts) {
      const res = await live.post<ErrorBody>(path, body, { 'Idempotency-Key': `live-${path}` });
      expect(res.status, `${path} → ${JSON.stringify(res.body)}`).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'live_mode_unavailable' });
      expect(res.body.error.message).toContain('--processor stripe');
    }
    // Nothing written, in either mode: the test payment is still the only one, and still authorised.
    expect((await live.get<{ data: Json[] }>('/v1/transactions')).body.data).toEqual([]);
    expect((await live.get<{ data: Json[] }>('/v1/payment-links')).body.data).toEqual([]);
    const still = await test.get<{ data: Json }>(`/v1/transactions/${id}`);
    expect(still.body.data).toMatchObject({ status: 'requires_capture', amount_refunded: 0 });
    expect((await test.get<{ data: Json[] }>('/v1/transactions')).body.data).toHaveLength(1);
  });

  it('answers live reads and lets live set-up (locations, webhook endpoints) through', async () => {
    const live = client(t.url, m.keys.sk_live);
    expect((await live.get('/v1/merchant')).status).toBe(200);
    expect((await live.get('/v1/transactions')).status).toBe(200);
    expect((await live.get('/v1/checkout/sessions/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await live.post('/v1/terminal/locations', { display_name: 'Front', address: ADDRESS })).status).toBe(201);
  });

  it('test mode is untouched', async () => {
    const test = client(t.url, m.keys.sk_test);
    expect((await test.post('/v1/payment-links', { amount: 700 })).status).toBe(201);
  });
});

describe('live mode with --simulate-live', () => {
  let t: TestServer;
  let m: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestServer({ simulateLive: true, reconcileIntervalMs: 200 });
    m = await t.merchant('Simulated Live Shop');
  });
  afterAll(() => t.stop());

  it('takes live payments, and the live pages say they are simulated', async () => {
    const live = client(t.url, m.keys.sk_live);
    const created = await live.post<{ data: Json }>('/v1/transactions', { amount: 2500, payment_method: 'pm_card_visa', confirm: true });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.is_test).toBe(false);

    const link = await live.post<{ data: { url: string } }>('/v1/payment-links', { amount: 1200 });
    expect(link.status).toBe(201);
    const linkPage = await (await fetch(link.body.data.url)).text();
    expect(linkPage).toContain('Simulated payment:');
    expect(linkPage).toContain('no real payment is made');
    expect(linkPage).not.toContain('go straight to our payment processor');

    const session = await live.post<{ data: { url: string } }>('/v1/checkout/sessions', { amount: 1300, success_url: 'https://example.com/ok' });
    expect(session.status).toBe(201);
    expect(await (await fetch(session.body.data.url)).text()).toContain('Simulated payment:');
  });

  it('a live payment’s receipt page says it was simulated', async () => {
    // The simulator, like Stripe, registers simulated readers in test mode only, so a live payment
    // is given a receipt token here as a completed terminal payment would have one.
    const live = client(t.url, m.keys.sk_live);
    const created = await live.post<{ data: { id: string } }>('/v1/transactions', { amount: 900, payment_method: 'pm_card_visa', confirm: true });
    expect(created.status).toBe(201);
    const token = 'L'.repeat(32);
    await t.server.store.db.updateTable('transactions').set({ receipt_token: token }).where('id', '=', created.body.data.id).execute();
    const receipt = await fetch(`${t.url}/receipts/${token}`);
    expect(receipt.status).toBe(200);
    const html = await receipt.text();
    expect(html).toContain('SIMULATED: no money moved');
    expect(html).not.toContain('TEST MODE');
  });
});

describe('the hosted page on the simulator', () => {
  let t: TestServer;
  let m: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestServer({ reconcileIntervalMs: 200 });
    m = await t.merchant('Test Page Shop');
  });
  afterAll(() => t.stop());

  it('tells the customer it is a test page and which card to use', async () => {
    const link = await client(t.url, m.keys.sk_test).post<{ data: { url: string } }>('/v1/payment-links', { amount: 1100 });
    const html = await (await fetch(link.body.data.url)).text();
    expect(html).toContain('Test page:');
    expect(html).toContain('4242 4242 4242 4242');
    expect(html).not.toContain('go straight to our payment processor');
  });

  it('declines a card number outside Stripe’s test list with test_mode_live_card, and the payment fails with it', async () => {
    const test = client(t.url, m.keys.sk_test);
    const link = await test.post<{ data: { url: string } }>('/v1/payment-links', { amount: 1100 });
    const html = await (await fetch(link.body.data.url)).text();
    const cfg = pageConfig(html);
    const started = await call<{ data: { payment_intent: string; client_secret: string; transaction: string } }>(new URL(link.body.data.url).origin, 'POST', cfg.startUrl, { body: CUSTOMER });
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    // Luhn-valid, a real card's shape, and not one of Stripe's test numbers.
    const answer = await confirmTypedCard(cfg.processorUrl, cfg.publishableKey, started.body.data, '4111111111111111');
    expect(answer.error).toMatchObject({ code: 'card_declined', decline_code: 'test_mode_live_card' });
    expect(String(answer.error?.message)).toContain('non test (live) card');
    const txn = await eventually(async () => {
      const res = await test.get<{ data: Json & { status: string } }>(`/v1/transactions/${started.body.data.transaction}`);
      return res.body.data.status === 'failed' ? res.body.data : undefined;
    });
    expect(txn).toMatchObject({ status: 'failed', failure_code: 'card_declined' });

    // A published test number on the same kind of page goes through.
    const again = await test.post<{ data: { url: string } }>('/v1/payment-links', { amount: 1100 });
    const cfg2 = pageConfig(await (await fetch(again.body.data.url)).text());
    const started2 = await call<{ data: { payment_intent: string; client_secret: string } }>(new URL(again.body.data.url).origin, 'POST', cfg2.startUrl, { body: CUSTOMER });
    expect((await confirmTypedCard(cfg2.processorUrl, cfg2.publishableKey, started2.body.data, '4242424242424242')).status).toBe('succeeded');
  });
});

describe('pos server start-up', () => {
  it('says in its log when live mode is simulated, and when it is unavailable', async () => {
    for (const [simulateLive, expected] of [
      [true, 'simulated'],
      [false, 'unavailable'],
    ] as const) {
      const lines: string[] = [];
      const server = await startTestServer({ simulateLive }, { logger: capturedLogger(lines) });
      try {
        const listening = lines.map((line) => JSON.parse(line) as Json).find((l) => l.msg === 'pos server listening');
        expect(listening?.live_mode).toBe(expected);
        if (expected === 'simulated') expect(lines.join('\n')).toMatch(/live mode is SIMULATED/);
      } finally {
        await server.stop();
      }
    }
  });
});

describe('a live page made under --simulate-live, after a restart without it', () => {
  it('answers 503 with words for the customer, and its submit refuses', async () => {
    const first = await startTestServer({ simulateLive: true });
    const key = (await first.merchant('Restart Shop')).keys.sk_live;
    const link = await client(first.url, key).post<{ data: { url: string; reference: string } }>('/v1/payment-links', { amount: 1500 });
    expect(link.status, JSON.stringify(link.body)).toBe(201);
    const server = await first.restart({ simulateLive: false });
    try {
      const page = await fetch(`${server.url}/pay/${link.body.data.reference}`);
      expect(page.status).toBe(503);
      const html = await page.text();
      expect(html).toContain('cannot take payments');
      expect(html).not.toContain('id="pay-form"');
      const start = await call<ErrorBody>(server.url, 'POST', `/pay/${link.body.data.reference}/start`, { body: CUSTOMER });
      expect(start.status).toBe(400);
      expect(start.body.error.code).toBe('live_mode_unavailable');
    } finally {
      await server.stop();
    }
  });
});
