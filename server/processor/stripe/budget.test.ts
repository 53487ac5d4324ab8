import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import Stripe from 'stripe';
import { dropPostgresSchema, openPostgresStore } from '../../db/postgres.js';
import { SQLITE_PASS, TEST_DATABASE_URL } from '../../../test/helpers/db.js';
import { BudgetTimeoutError, MemoryLedger, PostgresLedger, ProcessorBudget, STEP_MS, WINDOW_MS, accountKey, decide, stripeLimits, type Priority } from '../budget.js';
import { BudgetedHttpClient, backoffMs, endpointOf, priorityOf } from './budget-client.js';

const TEST = stripeLimits('test');
const LIVE = stripeLimits('live');

/** Most sends in any span of `span` ms among these send times. */
function busiest(times: number[], span = WINDOW_MS): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= span) j += 1;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** Drives the rule as a queue would: each call asks, and asks again when told to wait. */
function drive(calls: { priority: Priority; endpoint: string; at: number }[], limits = TEST): { sent: number[]; byPriority: Record<Priority, number[]> } {
  const logs = new Map<string, number[]>();
  const sent: number[] = [];
  const byPriority: Record<Priority, number[]> = { critical: [], write: [], read: [] };
  let now = 0;
  for (const call of calls) {
    now = Math.max(now, call.at);
    for (;;) {
      const result = decide(logs.get('account') ?? [], logs.get(call.endpoint) ?? [], now, limits, call.priority);
      logs.set('account', result.account);
      logs.set(call.endpoint, result.endpoint);
      if (result.decision.granted) break;
      expect(result.decision.waitMs).toBeGreaterThan(0);
      now += result.decision.waitMs;
    }
    sent.push(now);
    byPriority[call.priority].push(now);
  }
  return { sent, byPriority };
}

describe.runIf(SQLITE_PASS)('the budget rule', () => {
  it('lets reads fill 80 % of the account window, five at a time at most, and says how long to wait', () => {
    const { sent } = drive(Array.from({ length: 60 }, () => ({ priority: 'read' as const, endpoint: 'GET /v1/payment_intents/:id', at: 0 })));
    // Test mode's 25 a second: reads take 20 per 1.25 s window, 4 per fifth of it.
    expect(busiest(sent)).toBe(20);
    expect(busiest(sent, STEP_MS)).toBe(4);
    expect(sent.filter((t) => t < WINDOW_MS)).toHaveLength(20);
    expect(Math.max(...sent)).toBeLessThan(3 * WINDOW_MS);
  });

  it('keeps room for payment-critical calls that reads and other writes cannot take', () => {
    let account: number[] = [];
    // The window holds 20 reads, as many as reads may send.
    for (let i = 0; i < 20; i++) account.push(i * 50);
    const now = 1_000;
    expect(decide(account, [], now, TEST, 'read').decision).toEqual({ granted: false, waitMs: WINDOW_MS - now, limitedBy: 'account' });
    // Other writes may fill 90 %: two more.
    for (const expected of [true, true, false]) {
      const result = decide(account, [], now + 200, TEST, 'write');
      expect(result.decision.granted).toBe(expected);
      account = result.account;
    }
    // Payment-critical calls, all of it.
    for (const expected of [true, true, true, false]) {
      const result = decide(account, [], now + 201, TEST, 'critical');
      expect(result.decision.granted).toBe(expected);
      account = result.account;
    }
  });

  it('holds one endpoint to 25 a window while the live account has room', () => {
    const { sent } = drive(Array.from({ length: 50 }, () => ({ priority: 'critical' as const, endpoint: 'POST /v1/payment_intents', at: 0 })), LIVE);
    expect(busiest(sent)).toBe(25);
    expect(busiest(sent, STEP_MS)).toBe(5);
    const mixed = drive(
      Array.from({ length: 50 }, (_, i) => ({ priority: 'critical' as const, endpoint: `POST /v1/endpoint_${i % 4}`, at: 0 })),
      LIVE,
    );
    // Four endpoints of 25: the live account's 100 are not the limit, each endpoint's 25 are.
    expect(mixed.sent.filter((t) => t < WINDOW_MS)).toHaveLength(50);
  });

  it('never exceeds any window, whatever the mix of calls', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ priority: fc.constantFrom<Priority>('critical', 'write', 'read'), endpoint: fc.constantFrom('a', 'b', 'c'), at: fc.integer({ min: 0, max: 5_000 }) }), { maxLength: 150 }),
        fc.constantFrom(TEST, LIVE),
        (calls, limits) => {
          const { sent } = drive([...calls].sort((x, y) => x.at - y.at), limits);
          expect(busiest(sent)).toBeLessThanOrEqual(limits.accountPerSecond);
          expect(busiest(sent, STEP_MS)).toBeLessThanOrEqual(limits.accountPerSecond / 5);
        },
      ),
    );
  });

  it('keys accounts by mode and a hash, never the secret itself', () => {
    expect(accountKey('sk_live_abc')).toMatchObject({ mode: 'live' });
    expect(accountKey('rk_live_abc')).toMatchObject({ mode: 'live' });
    expect(accountKey('sk_test_abc')).toMatchObject({ mode: 'test' });
    expect(accountKey('sk_test_abc').account).not.toContain('abc');
  });
});

describe.runIf(SQLITE_PASS)('endpoints and priorities', () => {
  it('counts calls per method and path template', () => {
    expect(endpointOf('post', '/v1/payment_intents/pi_3MtwBwLkdIwHu7ix28a3tqPa/confirm')).toBe('POST /v1/payment_intents/:id/confirm');
    expect(endpointOf('GET', '/v1/terminal/readers/tmr_FDOt2wlRZEdpd7?expand[]=action')).toBe('GET /v1/terminal/readers/:id');
    expect(endpointOf('POST', '/v1/terminal/readers/tmr_FDOt2wlRZEdpd7/process_payment_intent')).toBe('POST /v1/terminal/readers/:id/process_payment_intent');
    expect(endpointOf('GET', '/v1/accounts/acct_1032D82eZvKYlo2C/capabilities/us_bank_account_ach_payments')).toBe('GET /v1/accounts/:id/capabilities/:id');
    expect(endpointOf('GET', '/v1/webhook_endpoints')).toBe('GET /v1/webhook_endpoints');
  });

  it('puts creating, confirming, capturing, canceling, processing and refunding ahead of other writes and reads', () => {
    for (const endpoint of [
      'POST /v1/payment_intents',
      'POST /v1/payment_intents/:id/confirm',
      'POST /v1/payment_intents/:id/capture',
      'POST /v1/payment_intents/:id/cancel',
      'POST /v1/terminal/readers/:id/process_payment_intent',
      'POST /v1/terminal/readers/:id/cancel_action',
      'POST /v1/refunds',
    ]) {
      expect(priorityOf(endpoint)).toBe('critical');
    }
    expect(priorityOf('POST /v1/payment_intents/:id')).toBe('write');
    expect(priorityOf('DELETE /v1/terminal/readers/:id')).toBe('write');
    expect(priorityOf('GET /v1/payment_intents/:id')).toBe('read');
  });

  it('backs off exponentially with jitter, capped', () => {
    expect(backoffMs(0, () => 0)).toBe(250);
    expect(backoffMs(0, () => 1)).toBe(500);
    expect(backoffMs(3, () => 0)).toBe(2_000);
    expect(backoffMs(10, () => 1)).toBe(8_000);
  });
});

describe.runIf(SQLITE_PASS)('the queue', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const budget = (limits = TEST) => new ProcessorBudget(new MemoryLedger(() => Date.now()), 'test:acct', limits);

  it('lets a burst through no faster than the limits allow', async () => {
    const b = budget();
    const sent: number[] = [];
    const calls = Array.from({ length: 60 }, (_, i) => b.acquire(i % 2 ? 'GET /v1/terminal/readers/:id' : 'GET /v1/payment_intents/:id', 'read', 60_000).then(() => sent.push(Date.now())));
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all(calls);
    expect(sent).toHaveLength(60);
    expect(busiest(sent)).toBeLessThanOrEqual(20);
    expect(busiest(sent, STEP_MS)).toBeLessThanOrEqual(4);
    // 60 reads at 20 per window: the last goes in the third window.
    expect(Math.max(...sent) - Math.min(...sent)).toBeLessThan(3 * WINDOW_MS);
  });

  it('sends a payment-critical call queued behind many reads first', async () => {
    const b = budget();
    const order: string[] = [];
    const reads = Array.from({ length: 60 }, (_, i) => b.acquire('GET /v1/payment_intents/:id', 'read', 60_000).then(() => order.push(`read ${i}`)));
    await vi.advanceTimersByTimeAsync(600);
    const before = order.length;
    const create = b.acquire('POST /v1/payment_intents', 'critical', 60_000).then(() => order.push('create'));
    await vi.advanceTimersByTimeAsync(1);
    await create;
    // The reads sent before the create was asked for went first; not one read queued before it went after.
    expect(before).toBeGreaterThan(0);
    expect(order.indexOf('create')).toBe(before);
    await vi.advanceTimersByTimeAsync(10_000);
    await Promise.all(reads);
  });

  it('does not hold calls to other endpoints behind a full endpoint', async () => {
    const b = budget(LIVE);
    const sent: string[] = [];
    void Promise.all(Array.from({ length: 40 }, () => b.acquire('GET /v1/payment_intents/:id', 'read', 60_000).then(() => sent.push('pi'))));
    await vi.advanceTimersByTimeAsync(1);
    await b.acquire('GET /v1/refunds/:id', 'read', 60_000);
    // The endpoint's fifth of 25 went, the rest wait, and the other endpoint's call did not.
    expect(sent).toHaveLength(5);
    expect(b.waiting).toBe(35);
    await vi.advanceTimersByTimeAsync(10_000);
  });

  it('gives up on a call that waited longer than its timeout', async () => {
    const b = budget();
    // A fifth of the window's 25 fills the step; the next may go 250 ms later.
    await Promise.all(Array.from({ length: 5 }, () => b.acquire('POST /v1/refunds', 'critical', 1_000)));
    const late = b.acquire('POST /v1/refunds', 'critical', 100);
    const failed = expect(late).rejects.toBeInstanceOf(BudgetTimeoutError);
    await vi.advanceTimersByTimeAsync(150);
    await failed;
    expect(b.waiting).toBe(0);
  });
});

describe.runIf(SQLITE_PASS)('the HTTP client', () => {
  /** A stand-in for the node client: answers with the given statuses in turn. */
  function answering(...statuses: { status: number; headers?: Record<string, string> }[]) {
    const calls: string[] = [];
    const inner: Stripe.HttpClient = {
      getClientName: () => 'fake',
      makeRequest: (_host, _port, path, method) => {
        calls.push(`${method} ${path}`);
        const next = statuses.shift() ?? { status: 200 };
        return Promise.resolve({
          getStatusCode: () => next.status,
          getHeaders: () => next.headers ?? {},
          getRawResponse: () => undefined,
          toStream: () => undefined,
          toJSON: () => Promise.resolve({}),
        });
      },
    };
    return { inner, calls };
  }

  it('retries a 429 with backoff before the SDK sees it', async () => {
    const { inner, calls } = answering({ status: 429 }, { status: 429 }, { status: 200 });
    const waits: number[] = [];
    const client = new BudgetedHttpClient(inner, new ProcessorBudget(new MemoryLedger(), 'test:a', TEST), (ms) => {
      waits.push(ms);
      return Promise.resolve();
    });
    const response = await client.makeRequest('h', '1', '/v1/refunds', 'POST', {}, '', 'http', 20_000);
    expect(response.getStatusCode()).toBe(200);
    expect(calls).toHaveLength(3);
    expect(waits).toHaveLength(2);
    expect(waits[0]).toBeGreaterThanOrEqual(250);
    expect(waits[1]).toBeGreaterThanOrEqual(500);
  });

  it('hands a persistent 429 back within the call\'s timeout rather than backing off past it', async () => {
    // The clock is the test's, so the backoffs are measured exactly and a late timer on a busy
    // machine cannot count against the client.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    try {
      const { inner, calls } = answering(...Array.from({ length: 6 }, () => ({ status: 429 })));
      const waits: number[] = [];
      const client = new BudgetedHttpClient(inner, new ProcessorBudget(new MemoryLedger(), 'test:d', TEST), (ms) => {
        waits.push(ms);
        return new Promise((resolve) => setTimeout(resolve, ms));
      });
      const started = performance.now();
      const answer = client.makeRequest('h', '1', '/v1/refunds', 'POST', {}, '', 'http', 1_200);
      await vi.runAllTimersAsync();
      const response = await answer;
      expect(response.getStatusCode()).toBe(429);
      expect(performance.now() - started).toBeLessThan(1_200);
      // 0.25–0.5 s, then 0.5–1 s if it still fits; the 1–2 s one never does.
      expect(waits.length).toBeGreaterThanOrEqual(1);
      expect(waits.length).toBeLessThanOrEqual(2);
      expect(calls).toHaveLength(waits.length + 1);
    } finally {
      vi.useRealTimers();
    }
  });

  it('hands back a 429 for one object\'s hourly updates at once: seconds of waiting do not lift it', async () => {
    const { inner, calls } = answering({ status: 429, headers: { 'stripe-rate-limited-reason': 'resource-specific' } });
    const client = new BudgetedHttpClient(inner, new ProcessorBudget(new MemoryLedger(), 'test:b', TEST), () => Promise.resolve());
    expect((await client.makeRequest('h', '1', '/v1/payment_intents/pi_3MtwBwLkdIwHu7ix', 'POST', {}, '', 'http', 1_000)).getStatusCode()).toBe(429);
    expect(calls).toHaveLength(1);
  });

  it('answers a call the budget held past its timeout with a 429 the SDK does not retry', async () => {
    const { inner, calls } = answering();
    const budget = new ProcessorBudget(new MemoryLedger(), 'test:c', TEST);
    await Promise.all(Array.from({ length: 5 }, () => budget.acquire('POST /v1/refunds', 'critical', 1_000)));
    const client = new BudgetedHttpClient(inner, budget);
    const response = await client.makeRequest('h', '1', '/v1/refunds', 'POST', {}, '', 'http', 50);
    expect(response.getStatusCode()).toBe(429);
    expect(response.getHeaders()['stripe-should-retry']).toBe('false');
    expect(await response.toJSON()).toMatchObject({ error: { type: 'invalid_request_error', code: 'rate_limit' } });
    expect(calls).toHaveLength(0);
  });

  it('fails a call the budget held past its timeout once through the SDK, as a rate limit', async () => {
    const { inner } = answering();
    const budget = new ProcessorBudget(new MemoryLedger(), 'test:e', TEST);
    await Promise.all(Array.from({ length: 5 }, () => budget.acquire('POST /v1/refunds', 'critical', 1_000)));
    const stripe = new Stripe('sk_test_budget', { maxNetworkRetries: 2, timeout: 100, httpClient: new BudgetedHttpClient(inner, budget) });
    const started = performance.now();
    const error = await stripe.refunds.create({ payment_intent: 'pi_3MtwBwLkdIwHu7ix' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeRateLimitError);
    // One wait of the timeout, not three with the SDK's backoffs between them.
    expect(performance.now() - started).toBeLessThan(400);
  });
});

/** The shared ledger: instances on one database draw on one budget. Runs on the PostgreSQL pass only. */
describe.skipIf(!TEST_DATABASE_URL)('the budget on PostgreSQL', () => {
  it('lets two instances together send no more than one account may', async () => {
    const schema = `${process.env.POS_TEST_SCHEMA_PREFIX || 't_'}budget_${process.pid}`;
    const [a, b] = [await openPostgresStore(TEST_DATABASE_URL!, { schema }), await openPostgresStore(TEST_DATABASE_URL!, { schema })];
    try {
      const instances = [new ProcessorBudget(new PostgresLedger(a!.db), 'test:shared', TEST), new ProcessorBudget(new PostgresLedger(b!.db), 'test:shared', TEST)];
      const sent: number[] = [];
      const started = Date.now();
      await Promise.all(
        Array.from({ length: 50 }, (_, i) => instances[i % 2]!.acquire(i % 3 ? 'GET /v1/payment_intents/:id' : 'POST /v1/payment_intents', i % 3 ? 'read' : 'critical', 20_000).then(() => sent.push(Date.now()))),
      );
      expect(sent).toHaveLength(50);
      // Measured here, after each decision's commit, so only the whole window is checked: a step is
      // shorter than the spread of commit times.
      expect(busiest(sent)).toBeLessThanOrEqual(25);
      // 50 calls at 25 per window at best: at least one window passed.
      expect(Date.now() - started).toBeGreaterThanOrEqual(WINDOW_MS - 50);
    } finally {
      await a!.close();
      await b!.close();
      await dropPostgresSchema(TEST_DATABASE_URL!, schema);
    }
  });
});
