import { afterEach, describe, expect, it } from 'vitest';
import { call } from './helpers/api.js';
import { capturedLogger, startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

// @backend-once which address and path the HTTP layer takes a request to come from; counting requests by it in the store is rate-limits', on both backends.

/**
 * What the server believes about a request's origin and path, through the same flags and stack
 * `pos server` starts from, in this process: nothing here depends on being a separate process.
 */

const started: TestServer[] = [];
afterEach(async () => {
  for (const t of started.splice(0)) await t.stop();
});

async function server(flags: { trustProxy?: string } = {}, lines?: string[]): Promise<TestServer> {
  const t = await startTestServer({ rateLimit: 100, ...flags }, lines ? { logger: capturedLogger(lines) } : {});
  started.push(t);
  return t;
}

/**
 * What is left of the rate-limit window after one request without a key, from a forwarded client
 * address (the OpenAPI document: keyless and rate limited, unlike the probes).
 */
async function remainingFor(url: string, forwardedFor: string): Promise<number> {
  const res = await call(url, 'GET', '/v1/openapi.json', { headers: { 'x-forwarded-for': forwardedFor } });
  expect(res.status).toBe(200);
  return Number(res.headers.get('x-ratelimit-remaining'));
}

describe('pos server --trust-proxy', () => {
  it('keys requests without an API key by the forwarded client address', async () => {
    const s = await server({ trustProxy: '1' });
    expect(await remainingFor(s.url, '203.0.113.7')).toBe(99);
    expect(await remainingFor(s.url, '203.0.113.7')).toBe(98);
    // Another client behind the same load balancer has a bucket of its own.
    expect(await remainingFor(s.url, '198.51.100.20')).toBe(99);
  });

  it('trusts only the listed proxies', async () => {
    const s = await server({ trustProxy: '10.0.0.0/8,loopback' });
    expect(await remainingFor(s.url, '203.0.113.7')).toBe(99);
    expect(await remainingFor(s.url, '198.51.100.20')).toBe(99);
  });

  it('ignores X-Forwarded-For by default: any client could write it', async () => {
    const s = await server();
    expect(await remainingFor(s.url, '203.0.113.7')).toBe(99);
    expect(await remainingFor(s.url, '198.51.100.20')).toBe(98);
  });
});

describe('the access log', () => {
  it('shows the full path of each request, without its query string', async () => {
    const lines: string[] = [];
    const s = await server({}, lines);
    const { keys } = await s.merchant('Log Shop');
    expect((await call(s.url, 'GET', '/v1/transactions?page=1&size=5', { key: keys.sk_test })).status).toBe(200);
    expect((await call(s.url, 'GET', '/v1/webhook-endpoints/we_missing?expand=x', { key: keys.sk_test })).status).toBe(404);
    const requests = () =>
      lines.flatMap((line) => {
        const entry = JSON.parse(line) as { msg?: string; path?: string; status?: number };
        return entry.msg === 'request' ? [[entry.path, entry.status]] : [];
      });
    // The line is written as the response finishes, and reaches the log stream a moment later.
    const logged = await eventually(() => (requests().length >= 2 ? requests() : undefined));
    expect(logged).toEqual([
      ['/v1/transactions', 200],
      ['/v1/webhook-endpoints/we_missing', 404],
    ]);
  });
});
