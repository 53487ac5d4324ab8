import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../server/db/store.js';
import { createMerchant } from '../server/accounts/merchants.js';
import { systemClock } from '../shared/time.js';
import { call } from './helpers/api.js';
import { backendFlags, dropSchemaOf } from './helpers/db.js';
import { spawnServer, type ServerProcess } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(args: string[] = []): Promise<ServerProcess & { dataDir: string }> {
  const dir = tempDir();
  const s = await spawnServer(dir.path, ['--rate-limit', '100', ...args]);
  cleanups.push(async () => {
    s.child.kill('SIGTERM');
    await s.exited;
    await dropSchemaOf(dir.path);
    dir.cleanup();
  });
  return { ...s, dataDir: dir.path };
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
    const s = await server(['--trust-proxy', '1']);
    expect(await remainingFor(s.url, '203.0.113.7')).toBe(99);
    expect(await remainingFor(s.url, '203.0.113.7')).toBe(98);
    // Another client behind the same load balancer has a bucket of its own.
    expect(await remainingFor(s.url, '198.51.100.20')).toBe(99);
  });

  it('trusts only the listed proxies', async () => {
    const s = await server(['--trust-proxy', '10.0.0.0/8,loopback']);
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
    const s = await server();
    const store = await openStore({ dataDir: s.dataDir, ...backendFlags(s.dataDir) });
    const { keys } = await createMerchant(store, systemClock, { businessName: 'Log Shop' });
    await store.close();
    expect((await call(s.url, 'GET', '/v1/transactions?page=1&size=5', { key: keys.sk_test })).status).toBe(200);
    expect((await call(s.url, 'GET', '/v1/webhook-endpoints/we_missing?expand=x', { key: keys.sk_test })).status).toBe(404);
    const requests = () =>
      s.logs.flatMap((line) => {
        try {
          const entry = JSON.parse(line) as { msg?: string; path?: string; status?: number };
          return entry.msg === 'request' ? [[entry.path, entry.status]] : [];
        } catch {
          return [];
        }
      });
    // The line is written as the response finishes, and reaches the log stream a moment later.
    const logged = await eventually(() => (requests().length >= 2 ? requests() : undefined));
    expect(logged).toEqual([
      ['/v1/transactions', 200],
      ['/v1/webhook-endpoints/we_missing', 404],
    ]);
  });
});
