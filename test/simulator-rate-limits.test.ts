import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type TestSimulator, makeClient, startTestSimulator } from '../simulator/testing/harness.js';
import type { RateLimitReport } from '../simulator/index.js';

let t: TestSimulator;
/** Clients that do not pace themselves: these tests exceed the limits on purpose. */
let unpacedTest: Stripe;
let unpacedLive: Stripe;
beforeAll(async () => {
  t = await startTestSimulator();
  unpacedTest = makeClient(t.sim, t.sim.keys.secretTest, { paced: false });
  unpacedLive = makeClient(t.sim, t.sim.keys.secretLive, { paced: false });
});
afterAll(async () => {
  await t.close();
});
// Each test starts with empty windows and zero counts.
beforeEach(async () => {
  await t.sim.control.resetRateLimits();
});

/** Settles every call; the rejections, by class. */
async function settle(calls: Promise<unknown>[]): Promise<{ ok: number; limited: Stripe.errors.StripeRateLimitError[] }> {
  const results = await Promise.allSettled(calls);
  const limited: Stripe.errors.StripeRateLimitError[] = [];
  let ok = 0;
  for (const result of results) {
    if (result.status === 'fulfilled') ok += 1;
    else if (result.reason instanceof Stripe.errors.StripeRateLimitError) limited.push(result.reason);
    else throw result.reason;
  }
  return { ok, limited };
}

async function report(): Promise<RateLimitReport> {
  return (await (await fetch(`${t.sim.url}/_sim/rate_limits`)).json()) as RateLimitReport;
}

describe("Stripe's rate limits over the wire", () => {
  it('answers the 26th test-mode request within a second with Stripe\'s 429, which the SDK raises as StripeRateLimitError', async () => {
    const intent = await unpacedTest.paymentIntents.create({ amount: 1000, currency: 'usd' });
    const { ok, limited } = await settle(Array.from({ length: 30 }, () => unpacedTest.paymentIntents.retrieve(intent.id)));
    // The create took one slot of the 25 a second.
    expect(ok).toBe(24);
    expect(limited).toHaveLength(6);
    const error = limited[0]!;
    expect(error.statusCode).toBe(429);
    expect(error.code).toBe('rate_limit');
    expect(error.raw).toMatchObject({ type: 'invalid_request_error', code: 'rate_limit', doc_url: 'https://stripe.com/docs/error-codes/rate-limit' });
    expect(error.message).toMatch(/rate limit/i);
    expect(error.headers?.['stripe-should-retry']).toBe('false');
    expect(error.headers?.['stripe-rate-limited-reason']).toMatch(/^(global|endpoint)-rate$/);
    expect(error.requestId).toMatch(/^req_/);

    const counts = await report();
    expect(counts).toMatchObject({ enabled: true, requests: 31, rateLimited: 6 });
    expect(counts.endpoints).toEqual([
      { mode: 'test', endpoint: 'GET /v1/payment_intents/:id', requests: 30, rateLimited: 6 },
      { mode: 'test', endpoint: 'POST /v1/payment_intents', requests: 1, rateLimited: 0 },
    ]);
  });

  it('counts requests on behalf of connected accounts against the platform', async () => {
    const account = await unpacedTest.accounts.create({ type: 'custom', country: 'US' });
    const other = await unpacedTest.accounts.create({ type: 'custom', country: 'US' });
    await t.sim.control.resetRateLimits();
    const calls = Array.from({ length: 30 }, (_, i) => unpacedTest.paymentIntents.list({ limit: 1 }, { stripeAccount: i % 2 === 0 ? account.id : other.id }));
    const { ok, limited } = await settle(calls);
    expect(ok).toBe(25);
    expect(limited).toHaveLength(5);
  });

  it('limits one live-mode endpoint to 25 a second while the account may make 100', async () => {
    const listIntents = await settle(Array.from({ length: 30 }, () => unpacedLive.paymentIntents.list({ limit: 1 })));
    const listRefunds = await settle(Array.from({ length: 25 }, () => unpacedLive.refunds.list({ limit: 1 })));
    expect(listIntents.ok).toBe(25);
    expect(listIntents.limited.map((e) => e.headers?.['stripe-rate-limited-reason'])).toEqual(Array(5).fill('endpoint-rate'));
    expect(listRefunds.ok).toBe(25);
  });

  it('admits again once the window has slid past', async () => {
    expect((await settle(Array.from({ length: 25 }, () => unpacedTest.refunds.list({ limit: 1 })))).ok).toBe(25);
    await expect(unpacedTest.refunds.list({ limit: 1 })).rejects.toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    await expect(unpacedTest.refunds.list({ limit: 1 })).resolves.toBeDefined();
  });

  it('turns off and on through the control API, counting either way', async () => {
    const off = await fetch(`${t.sim.url}/_sim/rate_limits`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ enabled: false }) });
    expect(((await off.json()) as RateLimitReport).enabled).toBe(false);
    try {
      expect((await settle(Array.from({ length: 60 }, () => unpacedTest.refunds.list({ limit: 1 })))).ok).toBe(60);
      expect(await report()).toMatchObject({ enabled: false, requests: 60, rateLimited: 0 });
    } finally {
      await fetch(`${t.sim.url}/_sim/rate_limits`, { method: 'POST', body: new URLSearchParams({ enabled: 'true' }) });
    }
    expect((await report()).enabled).toBe(true);
    const reset = (await (await fetch(`${t.sim.url}/_sim/rate_limits/reset`, { method: 'POST' })).json()) as RateLimitReport;
    expect(reset).toMatchObject({ requests: 0, endpoints: [] });
  });

  it('throttles chosen endpoints (or all) through the control API until lifted, limits on or off', async () => {
    const throttle = async (endpoints: string[]) =>
      (await (await fetch(`${t.sim.url}/_sim/rate_limits/throttle`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ endpoints }) })).json()) as RateLimitReport;
    expect((await throttle(['GET /v1/refunds'])).throttled).toEqual(['GET /v1/refunds']);
    try {
      const refused = await unpacedTest.refunds.list({ limit: 1 }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
      expect((refused as Stripe.errors.StripeRateLimitError).headers?.['stripe-rate-limited-reason']).toBe('endpoint-rate');
      // Other endpoints are untouched, and a refused request occupies no window.
      await expect(unpacedTest.paymentIntents.list({ limit: 1 })).resolves.toBeDefined();
      await t.sim.control.setRateLimits(false);
      await expect(unpacedLive.refunds.list({ limit: 1 })).rejects.toBeInstanceOf(Stripe.errors.StripeRateLimitError);
      expect((await throttle(['*'])).throttled).toEqual(['*']);
      await expect(unpacedTest.customers.list({ limit: 1 })).rejects.toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    } finally {
      await t.sim.control.setRateLimits(true);
      expect((await throttle([])).throttled).toEqual([]);
    }
    await expect(unpacedTest.refunds.list({ limit: 1 })).resolves.toBeDefined();
    const bad = await fetch(`${t.sim.url}/_sim/rate_limits/throttle`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ endpoints: ['refunds'] }) });
    expect(bad.status).toBe(400);
  });

  it('can start with limits off (POS_SIMULATOR_RATE_LIMITS=off)', async () => {
    const bulk = await startTestSimulator({ rateLimits: false });
    try {
      const unpaced = makeClient(bulk.sim, bulk.sim.keys.secretTest, { paced: false });
      expect((await settle(Array.from({ length: 60 }, () => unpaced.refunds.list({ limit: 1 })))).ok).toBe(60);
    } finally {
      await bulk.close();
    }
  });
});
