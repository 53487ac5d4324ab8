import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stack } from '../cli/stack.js';
import { createMerchant } from '../server/accounts/merchants.js';
import type { Store } from '../server/db/store.js';
import { recordEvent, type EventType } from '../server/webhooks/outbox.js';
import { systemClock } from '../shared/time.js';
import { client } from './helpers/api.js';
import { TEST_DATABASE_URL } from './helpers/db.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startRoleStacks, startTestServer, type RoleStacks, type TestServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';

/**
 * A burst of events, several about each object and written one transaction at a time as a payment
 * writes them, reaches an endpoint exactly once per event and in order per object while every core
 * of the machine is busy with something else: the delivery workers' claims, leases and wake-ups
 * must not depend on being scheduled promptly. On PostgreSQL two worker instances share the queue;
 * on SQLite one server's worker has it alone.
 */

/** Objects per burst, and the events each gets in order: 240 deliveries, each later one waiting for its predecessor. */
const OBJECTS = 80;
const KINDS: EventType[] = ['payment.created', 'payment.authorized', 'payment.succeeded'];
/** Transactions writing at once: well within the store's connection pool. */
const WRITERS = 4;
/** Up to this long between an object's events: about as long as a delivery takes, so they cross. */
const EVENT_GAP_MS = 20;
/** Bursts per run: each one a new chance for a claim and a completion to cross. */
const BURSTS = 3;

/**
 * The request timeout at its maximum makes a lease 35 s or more: a delivery that waited for its
 * lease to run out (a missed wake-up) cannot arrive within the bound below, which a burst of a few
 * hundred deliveries meets with room to spare even on a loaded machine.
 */
const TIMEOUT_MS = 30_000;
const BURST_BOUND_MS = 25_000;

/** One busy child process per core, for the whole file: killed by pid when the file is done. */
function burnCpus(): ChildProcess[] {
  return Array.from({ length: availableParallelism() }, () => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}

/**
 * The data of a real payment's event, made by `key` through the API: the burst's events carry it
 * (each with its own object id), so every delivery is a body the document allows.
 */
async function paymentData(url: string, key: string): Promise<Record<string, unknown>> {
  const shop = client(url, key);
  expect((await shop.post('/v1/transactions', { amount: 1_250, payment_method: 'pm_card_visa', confirm: true })).status).toBe(201);
  return eventually(async () => (await shop.get<{ data: { data: Record<string, unknown> }[] }>('/v1/events?type=payment.succeeded')).body.data[0]?.data, 20_000);
}

async function burst(store: Store, merchantId: string, template: Record<string, unknown>): Promise<string[]> {
  const objects = Array.from({ length: OBJECTS }, () => randomUUID());
  const write = (type: EventType, id: string) => store.transaction((trx) => recordEvent(trx, { merchantId, mode: 'test' }, type, id, { ...template, id }, Date.now()));
  // A few writers at once, each taking its objects one after another through their events, each
  // event in its own transaction and a moment after the last, as a payment writes them: a later
  // event is written while the worker may be sending or storing the earlier one.
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = w; i < objects.length; i += WRITERS) {
        for (const type of KINDS) {
          await write(type, objects[i]!);
          await new Promise((r) => setTimeout(r, Math.floor(Math.random() * EVENT_GAP_MS)));
        }
      }
    }),
  );
  return objects;
}

async function expectDeliveredOnceInOrder(receiver: Receiver, objects: string[]): Promise<void> {
  const wanted = new Set(objects);
  const ours = () => receiver.received.filter((r) => r.accepted && wanted.has(String(r.event.data.id)));
  await eventually(() => (ours().length >= objects.length * KINDS.length ? true : undefined), BURST_BOUND_MS, 50);
  // Give a second copy every chance to arrive before asserting there is none.
  await new Promise((r) => setTimeout(r, 500));
  const got = ours();
  expect(got).toHaveLength(objects.length * KINDS.length);
  expect(new Set(got.map((r) => r.event.id)).size).toBe(objects.length * KINDS.length);
  for (const id of objects) expect(got.filter((r) => r.event.data.id === id).map((r) => r.type)).toEqual(KINDS);
}

describe.skipIf(!TEST_DATABASE_URL)('two worker instances on one PostgreSQL database, on a loaded machine', () => {
  const dir = tempDir('pos-workers-');
  const simDir = tempDir('pos-workers-sim-');
  let stacks: RoleStacks | undefined;
  let api: Stack;
  let workers: Stack[] = [];
  let receiver: Receiver;
  let merchantId: string;
  let template: Record<string, unknown>;
  let burners: ChildProcess[] = [];

  beforeAll(async () => {
    stacks = await startRoleStacks(dir.path, simDir.path, { webhookTimeoutMs: TIMEOUT_MS });
    ({ api, workers } = stacks);
    const merchant = await createMerchant(api.server.store, systemClock, { businessName: 'Two Workers' });
    merchantId = merchant.merchant.id;
    receiver = await startReceiver();
    expect((await client(api.server.url, merchant.keys.sk_test).post('/v1/webhook-endpoints', { url: receiver.url })).status).toBe(201);
    template = await paymentData(api.server.url, merchant.keys.sk_test);
    burners = burnCpus();
  }, 60_000);

  afterAll(async () => {
    for (const b of burners) b.kill('SIGKILL');
    await receiver?.close();
    await stacks?.close();
    dir.cleanup();
    simDir.cleanup();
  });

  it('delivers each event of a burst exactly once, in order per object, from whichever worker claims it', async () => {
    for (let i = 0; i < BURSTS; i++) await expectDeliveredOnceInOrder(receiver, await burst(api.server.store, merchantId, template));
    // Every answered request the workers count is one the receiver got, and no event came twice.
    expect(workers.reduce((n, w) => n + w.server.webhooks.stats.delivered, 0)).toBe(receiver.acceptedIds().length);
    expect(new Set(receiver.acceptedIds()).size).toBe(receiver.acceptedIds().length);
  }, 120_000);
});

describe.skipIf(TEST_DATABASE_URL)('one server on SQLite, on a loaded machine', () => {
  let t: TestServer;
  let receiver: Receiver;
  let merchantId: string;
  let template: Record<string, unknown>;
  let burners: ChildProcess[] = [];

  beforeAll(async () => {
    t = await startTestServer({ webhookTimeoutMs: TIMEOUT_MS });
    const merchant = await t.merchant('Loaded');
    merchantId = merchant.merchant.id;
    receiver = await startReceiver();
    expect((await client(t.url, merchant.keys.sk_test).post('/v1/webhook-endpoints', { url: receiver.url })).status).toBe(201);
    template = await paymentData(t.url, merchant.keys.sk_test);
    burners = burnCpus();
  }, 60_000);

  afterAll(async () => {
    for (const b of burners) b.kill('SIGKILL');
    await t?.stop();
    await receiver?.close();
  });

  it('delivers each event of a burst exactly once, in order per object', async () => {
    for (let i = 0; i < BURSTS; i++) await expectDeliveredOnceInOrder(receiver, await burst(t.server.store, merchantId, template));
    expect(t.server.webhooks.stats.delivered).toBe(receiver.acceptedIds().length);
    expect(new Set(receiver.acceptedIds()).size).toBe(receiver.acceptedIds().length);
  }, 120_000);
});
