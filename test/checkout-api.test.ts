import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckoutSessionSchema, PaymentLinkListSchema, PaymentLinkSchema } from '../shared/contract/checkout.js';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { call, client, type Json } from './helpers/api.js';
import { eventsOf, simulatorSdk } from './helpers/payments.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/** The server's clock runs `offset` ms ahead of real time, so expiry is tested without waiting. */
let offset = 0;
const clock = { now: () => Date.now() + offset };

let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  t = await startTestServer({ reconcileIntervalMs: 200, simulateLive: true }, { clock });
  m = await t.merchant('Checkout Shop');
  api = client(t.url, m.keys.sk_test);
});
afterAll(() => t.stop());

type Session = Json & { id: string; reference: string; url: string; status: string; transaction_id: string; expires_at: string };
type Link = Json & { id: string; reference: string; url: string; status: string; currency: string };
type Txn = Json & { id: string; status: string; source: string };
const OFFSET_TS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$/;

async function session(body: Json = {}): Promise<Session> {
  const res = await api.post<{ data: Session }>('/v1/checkout/sessions', { amount: 2500, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function link(body: Json = {}, headers?: Record<string, string>): Promise<Link> {
  const res = await api.post<{ data: Link }>('/v1/payment-links', { amount: 1500, ...body }, headers);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

/** What the hosted page does on submit: the same-origin start call. */
function start(pageUrl: string, body: Json = {}) {
  return call<{ data: { client_secret: string; payment_intent: string; transaction: string }; error?: Json }>(pageUrl, 'POST', '/start', { body });
}

/** What the page's script does next: confirm at the processor with the platform publishable key. */
async function confirmInBrowser(paymentIntent: string, clientSecret: string, paymentMethod = 'pm_card_visa'): Promise<Stripe.PaymentIntent> {
  const browser = simulatorSdk(t, t.stack.simulator?.keys.publishableTest);
  return browser.paymentIntents.confirm(paymentIntent, { payment_method: paymentMethod, client_secret: clientSecret } as Stripe.PaymentIntentConfirmParams);
}

async function expectInvalid(path: string, body: Json, param: string): Promise<void> {
  const res = await api.post<{ error: Json }>(path, body);
  expect(res.status, `${JSON.stringify(body)} → ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param });
}

describe('POST /v1/checkout/sessions (spec §4.5)', () => {
  it('creates an open session with every field, its cs_ reference, page url and payment', async () => {
    const before = Date.now();
    const res = await api.post<{ data: Session }>('/v1/checkout/sessions', {
      amount: 4750,
      currency: 'EUR',
      description: 'Two flat whites',
      customer_email: 'ada@example.com',
      customer_name: 'Ada Lovelace',
      success_url: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
      cancel_url: 'https://shop.example/cart',
      payment_method_types: ['card', 'apple_pay', 'google_pay'],
      collect_email: true,
      collect_name: true,
      collect_phone: true,
      collect_address: true,
      expires_in: 1800,
      metadata: { order_id: 'A-17' },
    });
    expect(res.status).toBe(201);
    expect(CheckoutSessionSchema.parse(res.body.data)).toBeTruthy();
    const s = res.body.data;
    expect(s).toMatchObject({
      object: 'checkout.session',
      amount: 4750,
      currency: 'eur',
      status: 'open',
      description: 'Two flat whites',
      customer_email: 'ada@example.com',
      customer_name: 'Ada Lovelace',
      success_url: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}',
      cancel_url: 'https://shop.example/cart',
      payment_method_types: ['card', 'apple_pay', 'google_pay'],
      collect_email: true,
      collect_name: true,
      collect_phone: true,
      collect_address: true,
      metadata: { order_id: 'A-17' },
      is_test: true,
      customer_details: null,
      completed_at: null,
    });
    expect(s.reference).toMatch(/^cs_[0-9A-Za-z]{20}$/);
    expect(s.url).toBe(`${t.url}/checkout/${s.reference}`);
    expect(s.expires_at).toMatch(OFFSET_TS);
    const expiresIn = Date.parse(s.expires_at) - before;
    expect(expiresIn).toBeGreaterThanOrEqual(1800_000 - 1000);
    expect(expiresIn).toBeLessThanOrEqual(1800_000 + 5000);

    const txn = (await api.get<{ data: Txn }>(`/v1/transactions/${s.transaction_id}`)).body.data;
    expect(txn).toMatchObject({ status: 'pending', source: 'checkout', amount: 4750, currency: 'eur', checkout_session_id: s.id, payment_link_id: null, receipt_email: 'ada@example.com', metadata: { order_id: 'A-17' }, platform_fee_cents: 143 });
    expect((await eventsOf(t.dataDir, txn.id)).map((e) => e.type)).toEqual(['payment.created']);
  });

  it('defaults: account currency, card only, nothing collected, 24 hours', async () => {
    const before = Date.now();
    const s = await session({ amount: 50 });
    expect(s).toMatchObject({ amount: 50, currency: 'usd', payment_method_types: ['card'], collect_email: false, collect_name: false, collect_phone: false, collect_address: false, description: null, metadata: {} });
    expect(Date.parse(s.expires_at) - before).toBeGreaterThanOrEqual(86_400_000 - 1000);
  });

  it('accepts the limits of expires_in exactly: 300 and 86400 seconds', async () => {
    await session({ expires_in: 300 });
    await session({ expires_in: 86_400 });
  });

  it('validates every field with a 400 naming the param', async () => {
    const cases: [Json, string][] = [
      [{ amount: undefined }, 'amount'],
      [{ amount: 49 }, 'amount'],
      [{ amount: 50.5 }, 'amount'],
      [{ amount: '2500' }, 'amount'],
      [{ currency: 'us' }, 'currency'],
      [{ currency: 'xyz' }, 'currency'],
      [{ description: '' }, 'description'],
      [{ description: 'x'.repeat(1001) }, 'description'],
      [{ customer_email: 'not-mail' }, 'customer_email'],
      [{ customer_name: 'x'.repeat(201) }, 'customer_name'],
      [{ success_url: 'javascript:alert(1)' }, 'success_url'],
      [{ success_url: 'not a url' }, 'success_url'],
      [{ cancel_url: 'ftp://shop.example/' }, 'cancel_url'],
      [{ payment_method_types: [] }, 'payment_method_types'],
      [{ payment_method_types: ['paypal'] }, 'payment_method_types[0]'],
      [{ payment_method_types: ['card', 'card'] }, 'payment_method_types'],
      [{ payment_method_types: 'card' }, 'payment_method_types'],
      [{ collect_email: 'yes' }, 'collect_email'],
      [{ collect_name: 1 }, 'collect_name'],
      [{ collect_phone: null }, 'collect_phone'],
      [{ collect_address: 'true' }, 'collect_address'],
      [{ expires_in: 299 }, 'expires_in'],
      [{ expires_in: 86_401 }, 'expires_in'],
      [{ expires_in: 600.5 }, 'expires_in'],
      [{ metadata: { k: 1 } }, 'metadata[k]'],
      [{ status: 'complete' }, 'status'],
      [{ transaction_id: '00000000-0000-4000-8000-000000000000' }, 'transaction_id'],
    ];
    for (const [body, param] of cases) await expectInvalid('/v1/checkout/sessions', { amount: 2500, ...body }, param);
  });

  it('is not idempotent: a retry with the same Idempotency-Key creates a second session and the header is not echoed', async () => {
    const first = await api.post<{ data: Session }>('/v1/checkout/sessions', { amount: 900 }, { 'Idempotency-Key': 'cs-retry-1' });
    const second = await api.post<{ data: Session }>('/v1/checkout/sessions', { amount: 900 }, { 'Idempotency-Key': 'cs-retry-1' });
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.data.id).not.toBe(first.body.data.id);
    expect(second.body.data.transaction_id).not.toBe(first.body.data.transaction_id);
    expect(first.headers.get('idempotency-key')).toBeNull();
    expect(second.headers.get('idempotency-key')).toBeNull();
  });

  it('retrieves by uuid or cs_ reference, and 404s for unknown ids, another merchant and the other mode', async () => {
    const s = await session();
    for (const id of [s.id, s.reference]) {
      const res = await api.get<{ data: Session }>(`/v1/checkout/sessions/${id}`);
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(s);
    }
    const other = await t.merchant('Other');
    for (const [key, id] of [
      [m.keys.sk_test, '00000000-0000-4000-8000-000000000000'],
      [m.keys.sk_test, 'cs_doesnotexist'],
      [other.keys.sk_test, s.id],
      [m.keys.sk_live, s.reference],
    ] as const) {
      const res = await client(t.url, key).get<{ error: Json }>(`/v1/checkout/sessions/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'resource_missing' });
    }
  });

  it('moves open → complete when its payment succeeds (processor event, not the browser)', async () => {
    const s = await session({ collect_email: true, success_url: 'https://shop.example/thanks?session={CHECKOUT_SESSION_ID}' });
    const page = await fetch(s.url);
    expect(page.status).toBe(200);
    const missing = await start(s.url, {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ param: 'email', code: 'parameter_missing' });
    const started = await start(s.url, { email: 'buyer@example.com' });
    expect(started.status).toBe(200);
    expect(started.body.data.client_secret).toMatch(/_secret_/);
    await confirmInBrowser(started.body.data.payment_intent, started.body.data.client_secret);
    const done = await eventually(async () => {
      const res = await api.get<{ data: Session }>(`/v1/checkout/sessions/${s.id}`);
      return res.body.data.status === 'complete' ? res.body.data : undefined;
    });
    expect(done.completed_at).toMatch(OFFSET_TS);
    expect(done.customer_details).toEqual({ email: 'buyer@example.com', name: null, phone: null, address: null });
    const txn = (await api.get<{ data: Txn }>(`/v1/transactions/${s.transaction_id}`)).body.data;
    expect(txn.status).toBe('succeeded');
    expect((await eventsOf(t.dataDir, txn.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.succeeded']);
    expect((await eventsOf(t.dataDir, txn.id))[1]?.data).toMatchObject({ checkout_session_id: s.id, source: 'checkout' });
    // A paid session's page says so and takes nothing more.
    expect((await start(s.url, { email: 'buyer@example.com' })).status).toBe(409);
    expect(await (await fetch(s.url)).text()).toContain('This payment is complete');
    // Back from a bank's challenge after the event got here first: on to success_url.
    const back = await fetch(`${s.url}?payment_intent=${started.body.data.payment_intent}&payment_intent_client_secret=${started.body.data.client_secret}`, { redirect: 'manual' });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe(`https://shop.example/thanks?session=${s.reference}`);
  });

  it('keeps one payment across a decline and a retry', async () => {
    const s = await session();
    const first = await start(s.url);
    await expect(confirmInBrowser(first.body.data.payment_intent, first.body.data.client_secret, 'pm_card_chargeDeclined')).rejects.toThrow(/declined/);
    await eventually(async () => ((await api.get<{ data: Txn }>(`/v1/transactions/${s.transaction_id}`)).body.data.status === 'failed' ? true : undefined));
    const again = await start(s.url);
    expect(again.body.data.payment_intent).toBe(first.body.data.payment_intent);
    await confirmInBrowser(again.body.data.payment_intent, again.body.data.client_secret);
    await eventually(async () => ((await api.get<{ data: Session }>(`/v1/checkout/sessions/${s.id}`)).body.data.status === 'complete' ? true : undefined));
  });

  it('moves open → expired at expires_at, cancels the unpaid payment, and the page refuses with 410', async () => {
    const s = await session({ expires_in: 300 });
    const swept = await session({ expires_in: 300 });
    offset += 301_000;
    try {
      const res = await api.get<{ data: Session }>(`/v1/checkout/sessions/${s.reference}`);
      expect(res.body.data).toMatchObject({ status: 'expired' });
      expect(res.body.data.expired_at).toMatch(OFFSET_TS);
      const txn = (await api.get<{ data: Txn }>(`/v1/transactions/${s.transaction_id}`)).body.data;
      expect(txn.status).toBe('canceled');
      expect((await eventsOf(t.dataDir, txn.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.canceled']);
      const page = await fetch(s.url);
      expect(page.status).toBe(410);
      expect(await page.text()).toContain('This checkout session has expired');
      const refused = await start(s.url);
      expect(refused.status).toBe(410);
      expect(refused.body.error).toMatchObject({ code: 'checkout_session_expired' });
      // The reconciler's sweep expires sessions nobody looks at.
      await eventually(async () => ((await api.get<{ data: Txn }>(`/v1/transactions/${swept.transaction_id}`)).body.data.status === 'canceled' ? true : undefined));
    } finally {
      offset = 0;
    }
  });
});

describe('payment links (spec §4.6)', () => {
  it('creates an open link with every field: pl_ reference, url, UPPERCASE currency, is_test, timestamps', async () => {
    const before = Date.now();
    const res = await api.post<{ data: Link }>('/v1/payment-links', {
      amount: 1999,
      currency: 'gbp',
      description: 'Gift card',
      customer_email: 'gift@example.com',
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/',
      expires_in: 3600,
      metadata: { campaign: 'xmas' },
    });
    expect(res.status).toBe(201);
    expect(PaymentLinkSchema.parse(res.body.data)).toBeTruthy();
    const l = res.body.data;
    expect(l).toMatchObject({
      object: 'payment_link', amount: 1999, currency: 'GBP', status: 'open', is_test: true, description: 'Gift card', customer_email: 'gift@example.com',
      success_url: 'https://shop.example/thanks', cancel_url: 'https://shop.example/', metadata: { campaign: 'xmas' }, deactivated_at: null,
    });
    expect(l.reference).toMatch(/^pl_[0-9A-Za-z]{20}$/);
    expect(l.url).toBe(`${t.url}/pay/${l.reference}`);
    expect(l.created_at).toMatch(OFFSET_TS);
    expect(Date.parse(l.expires_at as string) - before).toBeGreaterThanOrEqual(3600_000 - 1000);
    expect(res.headers.get('idempotency-key')).toBeNull();
  });

  it('defaults: account currency (USD), 90 days; a live key makes a live link', async () => {
    const before = Date.now();
    const l = await link({ amount: 50 });
    expect(l).toMatchObject({ currency: 'USD', is_test: true, metadata: {} });
    expect(Date.parse(l.expires_at as string) - before).toBeGreaterThanOrEqual(90 * 86_400_000 - 1000);
    const live = await client(t.url, m.keys.sk_live).post<{ data: Link }>('/v1/payment-links', { amount: 500 });
    expect(live.status).toBe(201);
    expect(live.body.data.is_test).toBe(false);
  });

  it('accepts expires_in from 300 s to 90 days and validates every field', async () => {
    await link({ expires_in: 300 });
    await link({ expires_in: 7_776_000 });
    const cases: [Json, string][] = [
      [{ amount: undefined }, 'amount'],
      [{ amount: 49 }, 'amount'],
      [{ amount: 1.5 }, 'amount'],
      [{ currency: 'dollars' }, 'currency'],
      [{ description: '' }, 'description'],
      [{ customer_email: 'nope' }, 'customer_email'],
      [{ success_url: 'javascript:alert(1)' }, 'success_url'],
      [{ cancel_url: 'data:text/html,hi' }, 'cancel_url'],
      [{ expires_in: 299 }, 'expires_in'],
      [{ expires_in: 7_776_001 }, 'expires_in'],
      [{ expires_in: '3600' }, 'expires_in'],
      [{ metadata: [] }, 'metadata'],
      [{ status: 'open' }, 'status'],
      [{ collect_email: true }, 'collect_email'],
    ];
    for (const [body, param] of cases) await expectInvalid('/v1/payment-links', { amount: 1500, ...body }, param);
  });

  it('honours and echoes Idempotency-Key: a repeat returns 200 with the same link', async () => {
    const first = await api.post<{ data: Link }>('/v1/payment-links', { amount: 777 }, { 'Idempotency-Key': 'pl-key-1' });
    const again = await api.post<{ data: Link; message?: string }>('/v1/payment-links', { amount: 777 }, { 'Idempotency-Key': 'pl-key-1' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(again.body.message).toMatch(/Idempotent replay/);
    expect(first.headers.get('idempotency-key')).toBe('pl-key-1');
    expect(again.headers.get('idempotency-key')).toBe('pl-key-1');
    const bad = await api.post<{ error: Json }>('/v1/payment-links', { amount: 777 }, { 'Idempotency-Key': 'x'.repeat(256) });
    expect(bad.status).toBe(400);
  });

  it('retrieves by uuid or pl_ reference; 404 otherwise', async () => {
    const l = await link();
    for (const id of [l.id, l.reference]) expect((await api.get<{ data: Link }>(`/v1/payment-links/${id}`)).body.data).toEqual(l);
    expect((await api.get('/v1/payment-links/pl_nope')).status).toBe(404);
    expect((await client(t.url, m.keys.sk_live).get(`/v1/payment-links/${l.id}`)).status).toBe(404);
  });

  it('lists newest first with limit (1–100, default 10) and starting_after', async () => {
    const own = await t.merchant('Lister');
    const lister = client(t.url, own.keys.sk_test);
    const made: Link[] = [];
    for (let i = 0; i < 12; i += 1) made.push((await lister.post<{ data: Link }>('/v1/payment-links', { amount: 100 + i })).body.data);
    const all = await lister.get<{ data: Link[]; has_more: boolean }>('/v1/payment-links');
    expect(PaymentLinkListSchema.parse(all.body)).toBeTruthy();
    expect(all.body.data).toHaveLength(10);
    expect(all.body.has_more).toBe(true);
    expect(all.body.data[0]?.id).toBe(made[11]?.id);
    const page1 = await lister.get<{ data: Link[]; has_more: boolean }>('/v1/payment-links?limit=5');
    const page2 = await lister.get<{ data: Link[]; has_more: boolean }>(`/v1/payment-links?limit=5&starting_after=${page1.body.data[4]?.reference}`);
    const page3 = await lister.get<{ data: Link[]; has_more: boolean }>(`/v1/payment-links?limit=5&starting_after=${page2.body.data[4]?.id}`);
    expect([...page1.body.data, ...page2.body.data, ...page3.body.data].map((l) => l.id)).toEqual(made.map((l) => l.id).reverse());
    expect(page3.body.has_more).toBe(false);
    expect((await lister.get<{ data: Link[] }>('/v1/payment-links?limit=100')).body.data).toHaveLength(12);
    for (const query of ['limit=0', 'limit=101', 'limit=x', 'starting_after=pl_nope', 'page=2']) {
      const res = await lister.get<{ error: Json }>(`/v1/payment-links?${query}`);
      expect(res.status, query).toBe(400);
    }
  });

  it('can be paid more than once while open; each payment is its own transaction linked to the link', async () => {
    const l = await link({ amount: 1234, metadata: { sku: 'tee' } });
    const page = await fetch(l.url);
    expect(page.status).toBe(200);
    const ids: string[] = [];
    for (const email of ['one@example.com', 'two@example.com']) {
      const started = await start(l.url, { email });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      await confirmInBrowser(started.body.data.payment_intent, started.body.data.client_secret);
      ids.push(started.body.data.transaction);
    }
    expect(new Set(ids).size).toBe(2);
    for (const [i, ref] of ids.entries()) {
      const txn = await eventually(async () => {
        const res = await api.get<{ data: Txn }>(`/v1/transactions/${ref}`);
        return res.body.data.status === 'succeeded' ? res.body.data : undefined;
      });
      expect(txn).toMatchObject({ source: 'payment_link', payment_link_id: l.id, amount: 1234, currency: 'usd', metadata: { sku: 'tee' }, receipt_email: i === 0 ? 'one@example.com' : 'two@example.com' });
      expect((await eventsOf(t.dataDir, txn.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.succeeded']);
    }
    expect((await api.get<{ data: Link }>(`/v1/payment-links/${l.id}`)).body.data.status).toBe('open');
  });

  it('reuses the payment of a page view on retry after a decline', async () => {
    const l = await link();
    const first = await start(l.url, { email: 'retry@example.com' });
    await expect(confirmInBrowser(first.body.data.payment_intent, first.body.data.client_secret, 'pm_card_chargeDeclined')).rejects.toThrow();
    const again = await start(l.url, { email: 'retry@example.com', transaction: first.body.data.transaction });
    expect(again.body.data.transaction).toBe(first.body.data.transaction);
    const missingEmail = await start(l.url, {});
    expect(missingEmail.status).toBe(400);
  });

  it('DELETE deactivates (safe to repeat): the page answers 410, refuses payment, and open payments are canceled', async () => {
    const l = await link();
    const started = await start(l.url, { email: 'late@example.com' });
    const res = await api.delete<{ data: Link }>(`/v1/payment-links/${l.reference}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: 'deactivated' });
    expect(res.body.data.deactivated_at).toMatch(OFFSET_TS);
    expect((await api.delete<{ data: Link }>(`/v1/payment-links/${l.id}`)).body.data.status).toBe('deactivated');
    const page = await fetch(l.url);
    expect(page.status).toBe(410);
    expect(await page.text()).toContain('This payment link is no longer active');
    const refused = await start(l.url, { email: 'x@example.com' });
    expect(refused.status).toBe(410);
    expect(refused.body.error).toMatchObject({ code: 'payment_link_deactivated' });
    expect((await api.get<{ data: Txn }>(`/v1/transactions/${started.body.data.transaction}`)).body.data.status).toBe('canceled');
    await expect(confirmInBrowser(started.body.data.payment_intent, started.body.data.client_secret)).rejects.toThrow();
    expect((await api.delete('/v1/payment-links/pl_nope')).status).toBe(404);
  });

  it('shows expired once expires_at has passed, and the page refuses with 410', async () => {
    const l = await link({ expires_in: 300 });
    offset += 301_000;
    try {
      expect((await api.get<{ data: Link }>(`/v1/payment-links/${l.id}`)).body.data.status).toBe('expired');
      expect((await fetch(l.url)).status).toBe(410);
      expect((await start(l.url, { email: 'x@example.com' })).status).toBe(410);
    } finally {
      offset = 0;
    }
  });
});

describe('hosted pages', () => {
  it('are served with a strict Content-Security-Policy and no secrets in the HTML', async () => {
    const s = await session({ description: '<script>alert(1)</script>' });
    const res = await fetch(s.url);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain(`connect-src 'self' ${new URL(t.stack.simulator?.url ?? '').origin}`);
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).not.toMatch(/_secret_|sk_test_|<script>alert/);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toMatch(/<script>(?!<\/script>)|style="/);
    expect(html).toContain('$25.00');
    expect(html).toContain('Checkout Shop');
  });

  it('answers unknown pages with 404 and refuses a non-JSON start', async () => {
    expect((await fetch(`${t.url}/checkout/cs_nope`)).status).toBe(404);
    expect((await fetch(`${t.url}/pay/pl_nope`)).status).toBe(404);
    const s = await session();
    const form = await fetch(`${s.url}/start`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=x' });
    expect(form.status).toBe(415);
  });

  it('are documented in the OpenAPI description', async () => {
    const doc = (await fetch(`${t.url}/v1/openapi.json`).then((r) => r.json())) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/v1/checkout/sessions', '/v1/checkout/sessions/{id}', '/v1/payment-links', '/v1/payment-links/{id}']));
  });
});
