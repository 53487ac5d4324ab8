import { createServer, type Server } from 'node:http';
import { lookup } from 'node:dns/promises';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import pino from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { startStack, type Stack } from '../cli/stack.js';
import { createMerchant } from '../server/accounts/merchants.js';
import { loadServerConfig, type ServerFlags } from '../shared/config.js';
import { systemClock } from '../shared/time.js';
import { client, type Json } from './helpers/api.js';
import { backendFlags, dropSchemaOf } from './helpers/db.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';

/** Retries 1,000× faster than in production, new events picked up within 20 ms. */
const FAST: ServerFlags = { webhookRetryScale: 0.001 };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(flags: ServerFlags = {}): Promise<TestServer> {
  const t = await startTestServer({ ...FAST, ...flags });
  cleanups.push(() => t.stop());
  return t;
}

/** A loopback receiver that records the path of every request and answers with `answer`. */
interface Spy {
  port: number;
  paths: string[];
  answer: (path: string) => { status: number; headers?: Record<string, string> };
}

async function spy(): Promise<Spy> {
  const s: Spy = { port: 0, paths: [], answer: () => ({ status: 200 }) };
  const http: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      s.paths.push(req.url ?? '');
      const { status, headers } = s.answer(req.url ?? '');
      res.writeHead(status, headers).end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', () => resolve()));
  s.port = (http.address() as AddressInfo).port;
  cleanups.push(async () => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });
  return s;
}

async function pay(url: string, key: string): Promise<string> {
  const res = await client(url, key).post<{ data: { id: string } }>('/v1/transactions', { amount: 1250, payment_method: 'pm_card_visa', confirm: true });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

interface Attempt {
  status_code: number | null;
  error: string | null;
}

/** Every delivery of the newest payment.succeeded event, once each has been attempted `attempts` times. */
async function attemptsOfLatestSuccess(url: string, key: string, endpoints: number): Promise<Attempt[][]> {
  const api = client(url, key);
  return eventually(async () => {
    const list = await api.get<{ data: { id: string }[] }>('/v1/events?type=payment.succeeded');
    const latest = list.body.data[0];
    if (!latest) return undefined;
    const detail = await api.get<{ data: { deliveries: { attempts: Attempt[] }[] } }>(`/v1/events/${latest.id}`);
    const deliveries = detail.body.data.deliveries;
    return deliveries.length === endpoints && deliveries.every((d) => d.attempts.length > 0) ? deliveries.map((d) => d.attempts) : undefined;
  }, 10_000);
}

/** The machine's own name, if it resolves only to loopback (it does where /etc/hosts says so): a name no URL check can see through. */
async function loopbackName(): Promise<string | undefined> {
  const name = hostname().toLowerCase();
  try {
    const addresses = await lookup(name, { all: true });
    return addresses.length > 0 && addresses.every((a) => a.address.startsWith('127.')) ? name : undefined;
  } catch {
    return undefined;
  }
}

/** Spellings of 127.0.0.1 (and its neighbours) that a receiver on 127.0.0.1 answers. */
const LOOPBACK_SPELLINGS = ['127.0.0.1', '127.1', '2130706433', '0x7f.1', '0177.0.0.1', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', 'localhost'];

/** Non-public addresses in every form, refused when an endpoint is created under --webhook-egress public. */
const REFUSED_AT_CREATION = [
  ...LOOPBACK_SPELLINGS,
  '127.0.0.1.',
  '0x7f000001',
  '[::1]',
  '[::]',
  '[::127.0.0.1]',
  '[64:ff9b::7f00:1]',
  '[64:ff9b:1:7f00:0:100::]',
  '[2002:7f00:1::1]',
  '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
  '[fd00::1]',
  '[fe80::1]',
  '10.0.0.5',
  '172.16.0.1',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '0.0.0.0',
  '0',
  '224.0.0.1',
  '255.255.255.255',
  '240.0.0.1',
  'api.localhost',
  'printer.local',
  'metadata.google.internal',
];

describe('webhook egress under --webhook-egress public', () => {
  it.each(REFUSED_AT_CREATION)('refuses an endpoint at %s when it is created, naming url', async (host) => {
    const t = await sharedStrict();
    const res = await client(t.url, t.key).post<{ error: Json }>('/v1/webhook-endpoints', { url: `http://${host}:8080/hooks` });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'url' });
    expect(res.body.error.message).toMatch(/must be a public address/);
  });

  it('accepts public addresses, also plain http for test mode', async () => {
    const t = await sharedStrict();
    for (const url of ['https://shop.example.com/hooks', 'http://8.8.8.8/hooks', 'https://[2606:4700::1111]/hooks', 'https://[::ffff:8.8.8.8]/hooks']) {
      const res = await client(t.url, t.key).post('/v1/webhook-endpoints', { url });
      expect(res.status, url).toBe(201);
      expect((await client(t.url, t.key).delete(`/v1/webhook-endpoints/${(res.body as { data: { id: string } }).data.id}`)).status).toBe(200);
    }
  });

  it('refuses an endpoint updated to a loopback address', async () => {
    const t = await sharedStrict();
    const created = await client(t.url, t.key).post<{ data: { id: string } }>('/v1/webhook-endpoints', { url: 'https://shop.example.com/hooks' });
    const res = await client(t.url, t.key).post<{ error: Json }>(`/v1/webhook-endpoints/${created.body.data.id}`, { url: 'http://[::ffff:7f00:1]/hooks' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
    await client(t.url, t.key).delete(`/v1/webhook-endpoints/${created.body.data.id}`);
  });

  it('sends nothing to endpoints saved under a looser setting, in any spelling, nor to names that resolve to loopback', async () => {
    const receiver = await spy();
    const name = await loopbackName();
    const hosts = name ? [...LOOPBACK_SPELLINGS, name] : LOOPBACK_SPELLINGS;
    const dir = tempDir();
    cleanups.push(async () => {
      await dropSchemaOf(dir.path);
      dir.cleanup();
    });
    const start = (flags: ServerFlags): Promise<Stack> =>
      startStack(loadServerConfig({ port: 0, dataDir: dir.path, logLevel: 'silent', ...backendFlags(dir.path), ...FAST, ...flags }, {}), { logger: pino({ level: 'silent' }) });

    // Under the default setting a test endpoint may point at this machine: every spelling reaches the receiver.
    const loose = await start({});
    const { keys } = await createMerchant(loose.server.store, systemClock, { businessName: 'Egress Shop' });
    try {
      for (const host of hosts) {
        const res = await client(loose.server.url, keys.sk_test).post('/v1/webhook-endpoints', { url: `http://${host}:${receiver.port}/${encodeURIComponent(host)}`, events: ['payment.succeeded'] });
        expect(res.status, host).toBe(201);
      }
      await pay(loose.server.url, keys.sk_test);
      await eventually(() => (receiver.paths.length === hosts.length ? true : undefined), 10_000);
      expect(new Set(receiver.paths).size).toBe(hosts.length);
    } finally {
      await loose.close();
    }

    // The same endpoints under the strict setting: every attempt is refused before a connection.
    receiver.paths.length = 0;
    const strict = await start({ webhookEgress: 'public' });
    try {
      await pay(strict.server.url, keys.sk_test);
      const attempts = await attemptsOfLatestSuccess(strict.server.url, keys.sk_test, hosts.length);
      expect(receiver.paths).toEqual([]);
      for (const tries of attempts) {
        for (const attempt of tries) {
          expect(attempt.status_code).toBeNull();
          expect(attempt.error).toMatch(/must be a public address|resolves to 127\.\S+ \(loopback\)/);
        }
      }
      if (name) expect(attempts.flat().some((a) => a.error?.includes(`${name} resolves to 127.`))).toBe(true);
    } finally {
      await strict.close();
    }
  }, 60_000);
});

describe('webhook egress by mode', () => {
  it('asks live endpoints for a public https URL, saying why, and lets test endpoints point at this machine', async () => {
    const t = await server();
    const { keys } = await t.merchant();
    const live = client(t.url, keys.sk_live);
    for (const url of ['http://shop.example.com/hooks', 'https://127.0.0.1/hooks', 'https://[::ffff:7f00:1]/hooks', 'https://localhost/hooks']) {
      const res = await live.post<{ error: Json }>('/v1/webhook-endpoints', { url });
      expect(res.status, url).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'url' });
    }
    expect((await live.post<{ error: Json }>('/v1/webhook-endpoints', { url: 'http://shop.example.com/hooks' })).body.error.message).toMatch(/must use https: live-mode events carry real payments/);
    expect((await live.post('/v1/webhook-endpoints', { url: 'https://shop.example.com/hooks' })).status).toBe(201);
    expect((await client(t.url, keys.sk_test).post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks' })).status).toBe(201);
  });

  it('lets live endpoints follow the test rule when the server is told to', async () => {
    const t = await server({ liveEndpointsFollowTestRule: true });
    const { keys } = await t.merchant();
    expect((await client(t.url, keys.sk_live).post('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks' })).status).toBe(201);
  });

  it('does not follow a redirect to another address', async () => {
    const t = await server();
    const [first, second] = [await spy(), await spy()];
    first.answer = () => ({ status: 302, headers: { location: `http://127.0.0.1:${second.port}/elsewhere` } });
    const { keys } = await t.merchant();
    expect((await client(t.url, keys.sk_test).post('/v1/webhook-endpoints', { url: `http://127.0.0.1:${first.port}/hooks`, events: ['payment.succeeded'] })).status).toBe(201);
    await pay(t.url, keys.sk_test);
    const [attempts] = await attemptsOfLatestSuccess(t.url, keys.sk_test, 1);
    expect(attempts?.[0]).toMatchObject({ status_code: 302, error: expect.stringMatching(/redirects are not followed/) });
    expect(first.paths.length).toBeGreaterThan(0);
    expect(second.paths).toEqual([]);
  });
});

/** One strict server for the creation checks, which leave nothing behind. */
let strictServer: Promise<TestServer & { key: string }> | undefined;
function sharedStrict(): Promise<TestServer & { key: string }> {
  strictServer ??= (async () => {
    const t = await startTestServer({ webhookEgress: 'public' });
    return Object.assign(t, { key: (await t.merchant()).keys.sk_test });
  })();
  return strictServer;
}
afterAll(async () => (await strictServer)?.stop());
