import Stripe from 'stripe';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { budgetedHttpClient } from '../server/processor/stripe/budget-client.js';
import { sharedBudgetLedger } from '../server/processor/budget.js';
import type { RunningSimulator } from '../simulator/index.js';
import { client } from './helpers/api.js';
import { capturedLogger, startTestServer, type TestServer } from './helpers/server.js';

/**
 * The server's processor calls against the simulator with Stripe's rate limits on: the budget keeps
 * them under the limits, so no caller ever sees a 429, and payments go before reads.
 */

let t: TestServer;
let sim: RunningSimulator;
let processor: Stripe;
beforeAll(async () => {
  t = await startTestServer();
  sim = t.stack.simulator!;
  // The platform's own key, through the same in-process budget the server's calls draw on.
  processor = new Stripe(sim.keys.secretTest, { host: sim.host, port: sim.port, protocol: 'http', maxNetworkRetries: 2, httpClient: budgetedHttpClient(sim.keys.secretTest, sharedBudgetLedger(t.server.store)) });
});
afterAll(async () => {
  await t.stop();
});
beforeEach(async () => {
  // What start-up sent (webhook endpoint, accounts) is not part of any test's burst.
  await new Promise((resolve) => setTimeout(resolve, 1_300));
  await sim.control.resetRateLimits();
});

describe('the processor budget against the rate-limited simulator', () => {
  it('completes a burst of 60 concurrent reads with no 429 reaching the caller', async () => {
    const intent = await processor.paymentIntents.create({ amount: 1200, currency: 'usd' });
    const started = performance.now();
    const reads = await Promise.all(Array.from({ length: 60 }, () => processor.paymentIntents.retrieve(intent.id)));
    const seconds = (performance.now() - started) / 1000;
    expect(reads.every((r) => r.id === intent.id)).toBe(true);
    const report = await sim.control.rateLimits();
    // Readiness's background check (the platform's balance, every 15 s) may fall in the window.
    const balanceReads = report.endpoints.filter((e) => e.endpoint === 'GET /v1/balance').reduce((sum, e) => sum + e.requests, 0);
    expect({ enabled: report.enabled, requests: report.requests - balanceReads, rateLimited: report.rateLimited }).toEqual({ enabled: true, requests: 61, rateLimited: 0 });
    // 19 reads in the first 1.25 s window (the create took a slot of the reads' 20), 20 in each next: three windows.
    expect(seconds).toBeGreaterThan(2);
    console.log(`budget: 60 reads in ${seconds.toFixed(2)} s (${(60 / seconds).toFixed(1)}/s against a limit of 25/s), 0 429s`);
  });

  it('sends a create queued behind many reads first', async () => {
    const intent = await processor.paymentIntents.create({ amount: 1200, currency: 'usd' });
    const order: string[] = [];
    const reads = Array.from({ length: 60 }, (_, i) => processor.paymentIntents.retrieve(intent.id).then(() => order.push(`read ${i}`)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const create = processor.paymentIntents.create({ amount: 4750, currency: 'usd' }).then(() => order.push('create'));
    await Promise.all([...reads, create]);
    // The reads that got into the first window (19: the first create took a slot) went before the
    // create was asked for; the 41 still waiting went after it.
    expect(order.indexOf('create')).toBeLessThanOrEqual(20);
    expect((await sim.control.rateLimits()).rateLimited).toBe(0);
  });

  it('rides out 429s caused by another client of the same account', async () => {
    // Another application on the platform key, with no budget, fills the window...
    const other = new Stripe(sim.keys.secretTest, { host: sim.host, port: sim.port, protocol: 'http', maxNetworkRetries: 0 });
    await Promise.allSettled(Array.from({ length: 25 }, () => other.refunds.list({ limit: 1 })));
    // ...so our call is refused at first, retried after a backoff, and succeeds.
    const intent = await processor.paymentIntents.create({ amount: 900, currency: 'usd' });
    expect(intent.status).toBe('requires_payment_method');
    const report = await sim.control.rateLimits();
    expect(report.endpoints.find((e) => e.endpoint === 'POST /v1/payment_intents')?.rateLimited).toBeGreaterThanOrEqual(1);
  });
});

describe('POS_SIMULATOR_RATE_LIMITS=off', () => {
  it('turns the embedded simulator\'s limits off for `pos server`, and the server says so', async () => {
    const lines: string[] = [];
    const server = await startTestServer({}, { logger: capturedLogger(lines) }, { POS_SIMULATOR_RATE_LIMITS: 'off' });
    try {
      expect(lines.join('\n')).toMatch(/rate limits are OFF/);
      const key = (await server.merchant('Bulk Fixture')).keys.sk_test;
      const merchant = await client(server.url, key).get<{ data: { processor: { api_base: string } } }>('/v1/merchant');
      const limits = (await (await fetch(`${merchant.body.data.processor.api_base}/_sim/rate_limits`)).json()) as { enabled: boolean };
      expect(limits.enabled).toBe(false);
    } finally {
      await server.stop();
    }
  });
});
