import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client } from './helpers/api.js';
import { runCli } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';

/** `pos logs tail`: the merchant's own requests, from any client, as the server answers them. */
let t: TestServer;
let m: CreatedMerchant;
let other: CreatedMerchant;
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Tail Shop');
  other = await t.merchant('Other Shop');
  env = { POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_test };
});
afterAll(() => t.stop());

type Entry = { method: string; path: string; status: number; request_id: string; idempotency_key: string | null; key_type: string; key_last4: string; duration_ms: number };

describe('pos logs tail', () => {
  it('shows the requests another client makes, filtered, and only this merchant’s', async () => {
    const before = new Set(process.listeners('SIGINT'));
    const lines: Entry[] = [];
    let seen: (() => void) | undefined;
    const sawCustomerCreate = new Promise<void>((resolve) => (seen = resolve));
    const run = runCli(['logs', 'tail', '--format', 'jsonl', '--method', 'POST', '--path', '/v1/customers'], {
      env,
      onStdout: (chunk) => {
        for (const line of chunk.split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Entry);
        if (lines.some((l) => l.status === 201)) seen?.();
      },
    });
    // Following once the server holds the stream open.
    while (t.server.services.requestLog.size === 0) await new Promise((resolve) => setTimeout(resolve, 20));

    const counter = (await client(t.url, m.keys.sk_test).post<{ data: { secret: string } }>('/v1/api-keys', { name: 'Till', preset: 'counter' })).body.data.secret;
    await client(t.url, other.keys.sk_test).post('/v1/customers', { name: 'Not mine' }, { 'Idempotency-Key': 'other-shop' });
    await client(t.url, m.keys.sk_test).get('/v1/customers');
    const refused = await client(t.url, counter).post('/v1/customers', { name: 'Ada' });
    expect(refused.status).toBe(403);
    const made = await client(t.url, m.keys.sk_test).post<{ data: { id: string } }>('/v1/customers', { name: 'Ada' }, { 'Idempotency-Key': 'ada-1' });
    expect(made.status).toBe(201);
    await sawCustomerCreate;

    for (const listener of process.listeners('SIGINT').filter((l) => !before.has(l))) listener('SIGINT');
    const r = await run;
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^Ready! Tailing test-mode requests/);
    expect(lines.map((l) => [l.method, l.path, l.status, l.key_type, l.idempotency_key])).toEqual([
      ['POST', '/v1/customers', 403, 'restricted', null],
      ['POST', '/v1/customers', 201, 'secret', 'ada-1'],
    ]);
    expect(lines[1]).toMatchObject({ request_id: made.headers.get('request-id'), key_last4: m.keys.sk_test.slice(-4), duration_ms: expect.any(Number) });
    // The server lets go of the stream once the CLI has hung up.
    while (t.server.services.requestLog.size > 0) await new Promise((resolve) => setTimeout(resolve, 20));
  });

  it('needs the secret key, and says what a bad --status is', async () => {
    const counter = (await client(t.url, m.keys.sk_test).post<{ data: { secret: string } }>('/v1/api-keys', { name: 'Till 2', preset: 'counter' })).body.data.secret;
    const refused = await runCli(['logs', 'tail'], { env: { ...env, POS_API_KEY: counter } });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/secret_key_required/);
    const bad = await runCli(['logs', 'tail', '--status', 'teapot'], { env });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe('pos: --status takes codes such as 200, 4xx or 5xx, not "teapot"\n');
  });
});
