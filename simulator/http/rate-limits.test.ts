import { describe, expect, it } from 'vitest';
import { RateLimits, type RateLimitedRequest } from './rate-limits.js';

const read = (endpoint = 'GET /v1/payment_intents/:id', mode: 'test' | 'live' = 'test'): RateLimitedRequest => ({ mode, endpoint, paymentIntent: null });

function admitMany(limits: RateLimits, request: RateLimitedRequest, count: number, now: number): (string | null)[] {
  return Array.from({ length: count }, () => limits.admit(request, now));
}

describe('simulated Stripe rate limits', () => {
  it('admits 25 requests in any second in test mode, and the window slides rather than resetting', () => {
    const limits = new RateLimits(true);
    expect(admitMany(limits, read(), 20, 0).every((r) => r === null)).toBe(true);
    expect(admitMany(limits, read('GET /v1/refunds/:id'), 5, 500).every((r) => r === null)).toBe(true);
    // Full: the global window holds 25 admitted requests.
    expect(limits.admit(read('GET /v1/charges/:id'), 999)).toBe('global-rate');
    // At 1000 ms the first 20 have left the window; the 5 from 500 ms have not.
    expect(admitMany(limits, read(), 20, 1_000).every((r) => r === null)).toBe(true);
    expect(limits.admit(read(), 1_000)).toBe('global-rate');
    expect(limits.admit(read(), 1_500)).toBeNull();
  });

  it('admits 100 a second in live mode overall but 25 a second to one endpoint', () => {
    const limits = new RateLimits(true);
    expect(admitMany(limits, read('GET /v1/payment_intents/:id', 'live'), 25, 0).every((r) => r === null)).toBe(true);
    expect(limits.admit(read('GET /v1/payment_intents/:id', 'live'), 10)).toBe('endpoint-rate');
    for (const endpoint of ['POST /v1/payment_intents', 'GET /v1/terminal/readers/:id', 'POST /v1/refunds']) {
      expect(admitMany(limits, read(endpoint, 'live'), 25, 20).every((r) => r === null)).toBe(true);
    }
    expect(limits.admit(read('GET /v1/charges/:id', 'live'), 30)).toBe('global-rate');
    // Test mode has its own windows.
    expect(limits.admit(read('GET /v1/payment_intents/:id', 'test'), 30)).toBeNull();
  });

  it('admits 1,000 updates of one PaymentIntent an hour', () => {
    const limits = new RateLimits(true);
    const update = (paymentIntent: string, now: number) => limits.admit({ mode: 'live', endpoint: 'POST /v1/payment_intents/:id', paymentIntent }, now);
    for (let i = 0; i < 1_000; i++) expect(update('pi_a', i * 1_000)).toBeNull();
    expect(update('pi_a', 1_000_000)).toBe('resource-specific');
    expect(update('pi_b', 1_000_000)).toBeNull();
    // An hour after the first update its slot is free again.
    expect(update('pi_a', 3_600_000)).toBeNull();
  });

  it('does not let refused requests occupy the window', () => {
    const limits = new RateLimits(true);
    admitMany(limits, read(), 25, 0);
    expect(admitMany(limits, read(), 100, 900).every((r) => r !== null)).toBe(true);
    expect(admitMany(limits, read(), 25, 1_000).every((r) => r === null)).toBe(true);
  });

  it('counts requests and refusals per endpoint, also while off', () => {
    const limits = new RateLimits(true);
    admitMany(limits, read(), 30, 0);
    limits.admit(read('POST /v1/payment_intents'), 2_000);
    expect(limits.report()).toMatchObject({
      enabled: true,
      requests: 31,
      rateLimited: 5,
      endpoints: [
        { mode: 'test', endpoint: 'GET /v1/payment_intents/:id', requests: 30, rateLimited: 5 },
        { mode: 'test', endpoint: 'POST /v1/payment_intents', requests: 1, rateLimited: 0 },
      ],
    });
    limits.enabled = false;
    expect(admitMany(limits, read(), 100, 2_000).every((r) => r === null)).toBe(true);
    expect(limits.report().requests).toBe(131);
    limits.reset();
    expect(limits.report()).toMatchObject({ requests: 0, rateLimited: 0, endpoints: [] });
  });
});
