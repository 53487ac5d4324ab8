import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { keySourceOf } from '../../shared/crypto/key-source.js';
import { Keyring } from '../../shared/crypto/keyring.js';
import type { Kernel } from '../engine/kernel.js';
import { Store } from '../store.js';
import { endpoint, type RequestContext } from './endpoint.js';

let dir: string;
let store: Store;
let server: Server;
let url: string;
const scope = { livemode: false, account: null };

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pos-sim-endpoint-'));
  store = new Store(dir, new Keyring(keySourceOf({ dataDir: dir })));
  const kernel = { store, now: () => Date.now() } as unknown as Kernel;
  const app = express();
  app.use((_req, res, next) => {
    const ctx: RequestContext = { scope, requestId: 'req_1', idempotencyKey: null, apiVersion: '2025-01-01', keyKind: 'secret', key: 'sk_test_1' };
    res.locals.ctx = ctx;
    next();
  });
  app.post('/customers/:id', endpoint(kernel, () => undefined, ({ path }) => store.insert('customer', scope, { id: String(path.id) }, {}).body));
  // A body JSON cannot write: the answer fails only once it is sent, after the batch's commit.
  app.post('/unsendable', endpoint(kernel, () => undefined, () => ({ amount: 1n })));
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => res.status(500).json({ error: { type: 'api_error', message: String(error) } }));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await new Promise((resolve) => server.close(resolve));
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

it('answers concurrent requests once their shared commit is done, each with its own object', async () => {
  const answers = await Promise.all(['cus_1', 'cus_2', 'cus_3'].map((id) => fetch(`${url}/customers/${id}`, { method: 'POST' }).then(async (r) => [r.status, await r.json()])));
  expect(answers).toEqual([
    [200, { id: 'cus_1' }],
    [200, { id: 'cus_2' }],
    [200, { id: 'cus_3' }],
  ]);
});

it('answers a reply it cannot send with an error, and goes on serving', async () => {
  const failed = await fetch(`${url}/unsendable`, { method: 'POST' });
  expect(failed.status).toBe(500);
  expect(((await failed.json()) as { error: { message: string } }).error.message).toMatch(/BigInt/);
  const next = await fetch(`${url}/customers/cus_after`, { method: 'POST' });
  expect(await next.json()).toEqual({ id: 'cus_after' });
});
