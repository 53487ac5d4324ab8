import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { simulatorConnection } from '../cli/stack.js';
import { createMerchant, type CreatedMerchant } from '../server/accounts/merchants.js';
import { startServer, type RunningServer } from '../server/main.js';
import { loadServerConfig } from '../shared/config.js';
import { systemClock } from '../shared/time.js';
import { startSimulator, type RunningSimulator } from '../simulator/index.js';
import { backendFlags, dropSchemaOf, openTestDb, seedDataDir } from './helpers/db.js';
import { eventually, tempDir } from './helpers/tmp.js';

/**
 * A stopping server closes its store only once the requests it took are done, those whose clients
 * already left included (docs/operations.md, "Stopping"): their processor calls come back and
 * their transactions commit. The server reaches the simulator through a proxy here that can hold a
 * PaymentIntent create until the test lets it go, so a handler is at work while the server stops.
 */

type Log = { level: number; msg: string; [key: string]: unknown };

let sim: RunningSimulator;
let proxy: Server;
/** Set: the next PaymentIntent creates wait here until released. */
let holding = false;
let held: (() => void)[] = [];
let arrived: (() => void) | undefined;

function startProxy(target: { host: string; port: number }): Promise<Server> {
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const upstream = request({ host: target.host, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  };
  const s = createServer((req, res) => {
    if (holding && req.method === 'POST' && req.url?.split('?')[0] === '/v1/payment_intents') {
      // The body is read later, when it is forwarded: paused until then.
      req.pause();
      held.push(() => forward(req, res));
      arrived?.();
      return;
    }
    forward(req, res);
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

function release(): void {
  holding = false;
  const waiting = held;
  held = [];
  for (const go of waiting) go();
}

interface Started {
  server: RunningServer;
  dir: { path: string; cleanup(): void };
  logs: Log[];
  merchant: CreatedMerchant;
}

const started: Started[] = [];

async function start(drainTimeoutMs?: number): Promise<Started> {
  const dir = tempDir();
  seedDataDir(dir.path);
  const config = loadServerConfig({ port: 0, dataDir: dir.path, logLevel: 'info', ...backendFlags(dir.path) }, {});
  const logs: Log[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line) as Log);
      done();
    },
  });
  const port = (proxy.address() as AddressInfo).port;
  const server = await startServer(config, {
    processor: { ...simulatorConnection(sim), endpoint: { host: '127.0.0.1', port, protocol: 'http' } },
    logger: pino({ level: 'info' }, sink),
    ...(drainTimeoutMs === undefined ? {} : { drainTimeoutMs }),
  });
  const merchant = await createMerchant(server.store, systemClock, { businessName: 'Drain Café' });
  const s = { server, dir, logs, merchant };
  started.push(s);
  // The merchant's connected account is made on its first payment: not held.
  expect((await pay(s, 'first')).status).toBe(201);
  return s;
}

function pay(s: Started, key: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${s.server.url}/v1/transactions`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${s.merchant.keys.sk_test}`, 'Content-Type': 'application/json', 'Idempotency-Key': key },
    body: JSON.stringify({ amount: 2500, currency: 'usd', payment_method: 'pm_card_visa', confirm: true }),
    ...(signal ? { signal } : {}),
  });
}

/** Sends a payment whose processor call is held, and hangs up once it is: its handler is at work with no client. */
async function abandonedPayment(s: Started, key: string): Promise<void> {
  holding = true;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  const client = new AbortController();
  const answered = pay(s, key, client.signal).catch(() => undefined);
  await reached;
  client.abort();
  await answered;
}

beforeAll(async () => {
  const dir = tempDir();
  started.length = 0;
  sim = await startSimulator({ dataDir: join(dir.path, 'simulator') });
  proxy = await startProxy(sim);
});

afterEach(() => {
  release();
});

afterAll(async () => {
  for (const s of started) {
    await s.server.close();
    await dropSchemaOf(s.dir.path);
    s.dir.cleanup();
  }
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await sim?.close();
});

describe('stopping with a handler still at work', () => {
  it('closes the store only once a handler whose client left has committed its answer', async () => {
    const s = await start();
    // What start-up says (a new main key file on PostgreSQL) is not this test's business.
    const mark = s.logs.length;
    await abandonedPayment(s, 'left-early');
    const closing = s.server.close();
    await eventually(() => s.logs.find((l) => l.msg === 'waiting for requests whose clients left'), 10_000);
    release();
    await closing;

    const troubles = s.logs.slice(mark).filter((l) => l.level >= 40);
    expect(troubles).toEqual([]);
    const db = await openTestDb(s.dir.path);
    try {
      const [key] = await db.all<{ recovery_point: string; response_status: number | string | null }>(
        'select recovery_point, response_status from idempotency_keys where merchant_id = ? and key = ?',
        s.merchant.merchant.id,
        'left-early',
      );
      expect(key && { point: key.recovery_point, status: Number(key.response_status) }).toEqual({ point: 'finished', status: 201 });
      const payments = await db.all<{ status: string }>("select status from transactions where merchant_id = ? and amount = 2500 and status = 'succeeded'", s.merchant.merchant.id);
      expect(payments).toHaveLength(2);
    } finally {
      await db.close();
    }
  });

  it('still ends when a handler never finishes, once the drain timeout has passed', async () => {
    const s = await start(200);
    await abandonedPayment(s, 'never-done');
    await s.server.close();
    expect(s.logs.find((l) => l.msg === 'requests still running at the drain timeout; closing the store under them')).toMatchObject({ level: 40, requests: 1 });
  });
});
