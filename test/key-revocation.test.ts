import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { KEY_ENDED_CLOSE_CODE } from '../server/routes/agent-upstream.js';
import { client, type Json } from './helpers/api.js';
import { schemaFor, TEST_DATABASE_URL } from './helpers/db.js';
import { POS_BIN, THROWAWAY_CONFIG_DIR } from './helpers/cli.js';
import { posAdmin, startTestServer, type TestServer } from './helpers/server.js';
import { connectRawAgent, openRawStream, type RawAgent, type RawStream } from './helpers/sse.js';
import { eventually } from './helpers/tmp.js';

/**
 * A key that stops working ends every long-lived connection it opened: the event streams and agent
 * sockets it holds are closed promptly after a revoke, a roll with no grace, or the end of a rolled
 * key's grace, on the instance that did it and on every other one (docs/api-choices.md).
 */

/**
 * The documented bound is "within a couple of seconds" (a notice is delivered in milliseconds; a
 * roll by another SQLite process is seen within about a second); 5 s leaves room on a loaded machine.
 */
const BOUND_MS = 5_000;

/** The key a held connection used: what the stream and the agent need, and reading customers to see the liveness probe. */
const HOLDER_SCOPES = ['events:read', 'customers:read', 'terminal:write', 'transactions:read'];

type Key = { id: string; secret: string; last4: string; type: string; replaced?: { id: string; expires_at: string } };

let a: TestServer;

beforeAll(async () => {
  a = await startTestServer();
});
afterAll(async () => {
  await a?.stop();
});

interface Held {
  stream: RawStream;
  agent: RawAgent;
}

async function hold(url: string, key: string): Promise<Held> {
  const [stream, agent] = await Promise.all([openRawStream(url, key), connectRawAgent(url, key)]);
  return { stream, agent };
}

/** Proves a held stream is live: an event written now (anywhere) reaches it. */
async function proveLive(held: Held, owner: ReturnType<typeof client>): Promise<void> {
  const made = await owner.post<{ data: { id: string } }>('/v1/customers', { name: 'Probe' });
  expect(made.status).toBe(201);
  await eventually(() => held.stream.messages.find((m) => m.event === 'customer.created' && (m.data.data as Json).id === made.body.data.id), 10_000);
  expect(held.agent.closed()).toBeUndefined();
}

/** Both ended within the bound after `since` (Date.now()), the stream saying why with a 401 body, the agent with 4401. */
async function expectEnded(held: Held, since: number, why: 'revoked' | 'expired'): Promise<void> {
  await eventually(() => held.stream.endedAt(), BOUND_MS + 5_000);
  const agentClosed = await eventually(() => held.agent.closed(), BOUND_MS + 5_000);
  const last = held.stream.messages.at(-1);
  expect(last?.event).toBe('error');
  expect(last?.data).toMatchObject({ error: { type: 'authentication_error', code: 'api_key_invalid' } });
  expect(String((last?.data.error as Json).message)).toContain(why);
  expect(agentClosed.code).toBe(KEY_ENDED_CLOSE_CODE);
  expect(agentClosed.reason).toContain(why);
  expect(held.stream.endedAt()! - since).toBeLessThan(BOUND_MS);
  expect(agentClosed.at - since).toBeLessThan(BOUND_MS);
}

async function restrictedKey(owner: ReturnType<typeof client>): Promise<Key> {
  const made = await owner.post<{ data: Key }>('/v1/api-keys', { name: 'Held', scopes: HOLDER_SCOPES });
  expect(made.status).toBe(201);
  return made.body.data;
}

async function secretKeyId(owner: ReturnType<typeof client>, secret: string): Promise<string> {
  const keys = await owner.get<{ data: Key[] }>('/v1/api-keys');
  const found = keys.body.data.find((k) => k.type === 'secret' && k.last4 === secret.slice(-4));
  if (!found) throw new Error('the secret key is not listed');
  return found.id;
}

async function expectRefused(url: string, key: string): Promise<void> {
  expect((await client(url, key).get('/v1/events')).status).toBe(401);
  await expect(connectRawAgent(url, key)).rejects.toThrow(/401/);
}

/**
 * The same promises whichever instance holds the connections: `holder()` is the server the
 * connections are made to, and keys are revoked and rolled through `a`.
 */
function promises(holder: () => TestServer): void {
  let m: CreatedMerchant;
  let owner: ReturnType<typeof client>;

  beforeAll(async () => {
    m = await a.merchant('Held Keys');
    owner = client(a.url, m.keys.sk_test);
  });

  it('ends the streams and agent sockets of a revoked restricted key', async () => {
    const key = await restrictedKey(owner);
    const held = await hold(holder().url, key.secret);
    await proveLive(held, owner);
    const since = Date.now();
    expect((await owner.post(`/v1/api-keys/${key.id}/revoke`)).status).toBe(200);
    await expectEnded(held, since, 'revoked');
    await expectRefused(holder().url, key.secret);
  });

  it('ends those of a restricted key rolled with grace_hours 0', async () => {
    const key = await restrictedKey(owner);
    const held = await hold(holder().url, key.secret);
    await proveLive(held, owner);
    const since = Date.now();
    expect((await owner.post(`/v1/api-keys/${key.id}/roll`, { grace_hours: 0 })).status).toBe(201);
    await expectEnded(held, since, 'expired');
    await expectRefused(holder().url, key.secret);
  });

  it('ends those of a secret key rolled with grace_hours 0', async () => {
    const merchant = await a.merchant('Rolled Secret');
    const before = client(a.url, merchant.keys.sk_test);
    const held = await hold(holder().url, merchant.keys.sk_test);
    await proveLive(held, before);
    const since = Date.now();
    const rolled = await before.post<{ data: Key }>(`/v1/api-keys/${await secretKeyId(before, merchant.keys.sk_test)}/roll`, { grace_hours: 0 });
    expect(rolled.status).toBe(201);
    await expectEnded(held, since, 'expired');
    await expectRefused(holder().url, merchant.keys.sk_test);
    expect((await client(holder().url, rolled.body.data.secret).get('/v1/events')).status).toBe(200);
  });

  it('ends the request-log stream of a secret key rolled with grace_hours 0, as it ends the event stream', async () => {
    const merchant = await a.merchant('Rolled Log Reader');
    const owner = client(a.url, merchant.keys.sk_test);
    const log = await openRawStream(holder().url, merchant.keys.sk_test, undefined, '/v1/request-log/stream');
    // Live: a request with the key shows on it (each instance streams the requests it answered).
    await eventually(async () => {
      await client(holder().url, merchant.keys.sk_test).get('/v1/customers?size=1');
      return log.messages.find((m) => m.event === 'request' && m.data.path === '/v1/customers') ? true : undefined;
    }, 10_000);
    const since = Date.now();
    expect((await owner.post(`/v1/api-keys/${await secretKeyId(owner, merchant.keys.sk_test)}/roll`, { grace_hours: 0 })).status).toBe(201);
    await eventually(() => log.endedAt(), BOUND_MS + 5_000);
    const last = log.messages.at(-1);
    expect(last?.event).toBe('error');
    expect(last?.data).toMatchObject({ error: { type: 'authentication_error', code: 'api_key_invalid' } });
    expect(log.endedAt()! - since).toBeLessThan(BOUND_MS);
  });

  it('keeps a rolled key’s connections through its grace and ends them when it is over', async () => {
    const key = await restrictedKey(owner);
    const held = await hold(holder().url, key.secret);
    // 0.001 h = 3.6 s of grace.
    const rolled = await owner.post<{ data: Key }>(`/v1/api-keys/${key.id}/roll`, { grace_hours: 0.001 });
    expect(rolled.status).toBe(201);
    const expiresAt = Date.parse(rolled.body.data.replaced!.expires_at);
    await proveLive(held, owner);
    expect(held.stream.endedAt()).toBeUndefined();
    await expectEnded(held, expiresAt, 'expired');
    // Not a moment before the grace was over (the clocks are the same machine's).
    expect(held.stream.endedAt()!).toBeGreaterThanOrEqual(expiresAt - 20);
    expect(held.agent.closed()!.at).toBeGreaterThanOrEqual(expiresAt - 20);
  });

  it('ends those of a secret key that `pos admin keys roll --grace-hours 0` rolls from another process', async () => {
    const merchant = await a.merchant('Admin Rolled');
    const held = await hold(holder().url, merchant.keys.sk_test);
    await proveLive(held, client(a.url, merchant.keys.sk_test));
    const rolled = await posAdmin(a.dataDir, ['keys', 'roll', '--merchant', merchant.merchant.id, '--mode', 'test', '--grace-hours', '0', '--json']);
    // The bound counts from the command's end: the roll commits just before it exits.
    const since = Date.now();
    expect(rolled.status, rolled.stderr).toBe(0);
    await expectEnded(held, since, 'expired');
    await expectRefused(holder().url, merchant.keys.sk_test);
  });

  it('leaves the connections of other keys of the merchant open', async () => {
    const kept = await restrictedKey(owner);
    const revoked = await restrictedKey(owner);
    const keptHeld = await hold(holder().url, kept.secret);
    const revokedHeld = await hold(holder().url, revoked.secret);
    const since = Date.now();
    expect((await owner.post(`/v1/api-keys/${revoked.id}/revoke`)).status).toBe(200);
    await expectEnded(revokedHeld, since, 'revoked');
    await proveLive(keptHeld, owner);
    expect(keptHeld.stream.endedAt()).toBeUndefined();
    keptHeld.stream.close();
    keptHeld.agent.close();
  });
}

describe('on the instance that revokes or rolls the key', () => {
  promises(() => a);

  it('stops `pos listen` with the server’s reason (exit 1) instead of reconnecting with a dead key', async () => {
    const m = await a.merchant('Listening');
    const owner = client(a.url, m.keys.sk_test);
    const key = await restrictedKey(owner);
    const listen = spawn(process.execPath, [POS_BIN, 'listen', '--server', a.url], { env: { ...process.env, NO_COLOR: '1', POS_CONFIG_DIR: THROWAWAY_CONFIG_DIR, POS_API_KEY: key.secret } });
    let stderr = '';
    listen.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => listen.once('exit', resolve));
    try {
      await eventually(() => (stderr.includes('Ready!') ? true : undefined), 10_000);
      expect((await owner.post(`/v1/api-keys/${key.id}/revoke`)).status).toBe(200);
      const status = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running'), BOUND_MS))]);
      expect(status).toBe(1);
      expect(stderr).toContain('revoked');
      expect(stderr).not.toContain('reconnecting');
    } finally {
      listen.kill('SIGKILL');
    }
  });
});

/**
 * Two in-process servers on one PostgreSQL schema, as instances behind a load balancer: the key is
 * revoked or rolled on one, the connections are held by the other.
 */
describe.skipIf(!TEST_DATABASE_URL)('on another PostgreSQL instance', () => {
  let b: TestServer;
  beforeAll(async () => {
    // Every instance on one database holds its main key (docs/keys.md): here, the first one's key file.
    b = await startTestServer({ databaseUrl: TEST_DATABASE_URL!, databaseSchema: schemaFor(a.dataDir), masterKeyFile: join(a.dataDir, 'master.key') });
  });
  afterAll(async () => {
    await b?.stop();
  });
  promises(() => b);
});
