import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client, type Json } from './helpers/api.js';
import { startTestServer, type TestServer } from './helpers/server.js';

const LIMIT = 5;
let t: TestServer;
let m: CreatedMerchant;

beforeAll(async () => {
  // An hour-long window: the test never straddles a window boundary.
  t = await startTestServer({ rateLimit: LIMIT, rateWindow: 3600 });
  m = await t.merchant();
});
afterAll(() => t.stop());

function expectHeaders(headers: Headers): { limit: number; remaining: number; reset: number } {
  const limit = Number(headers.get('x-ratelimit-limit'));
  const remaining = Number(headers.get('x-ratelimit-remaining'));
  const reset = Number(headers.get('x-ratelimit-reset'));
  expect(limit).toBe(LIMIT);
  expect(Number.isInteger(remaining)).toBe(true);
  expect(reset).toBeGreaterThanOrEqual(1);
  expect(reset).toBeLessThanOrEqual(3600);
  return { limit, remaining, reset };
}

describe('rate limits (spec §8)', () => {
  it('counts per merchant and mode, puts the headers on every response, and answers 429 past the limit', async () => {
    const test = client(t.url, m.keys.sk_test);
    const seen: number[] = [];
    for (let i = 0; i < LIMIT; i++) {
      // 404s count and carry the headers too.
      const res = i % 2 ? await test.get('/v1/customers/nope') : await test.get('/v1/merchant');
      seen.push(expectHeaders(res.headers).remaining);
    }
    expect(seen).toEqual([4, 3, 2, 1, 0]);
    const over = await test.get<{ error: Json }>('/v1/merchant');
    expect(over.status).toBe(429);
    expect(over.body.error.type).toBe('rate_limit_error');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expectHeaders(over.headers);

    // The live side of the same merchant has its own budget.
    const live = await client(t.url, m.keys.sk_live).get('/v1/merchant');
    expect(live.status).toBe(200);
    expect(expectHeaders(live.headers).remaining).toBe(LIMIT - 1);
  });

  it('puts the headers on 401 answers too', async () => {
    const res = await client(t.url, 'sk_test_unknown').get('/v1/merchant');
    expect(res.status).toBe(401);
    expectHeaders(res.headers);
  });
});
