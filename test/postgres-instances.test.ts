import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../simulator/index.js';
import { client, type Json } from './helpers/api.js';
import { dropSchemaOf, openTestDb, seedDataDir, TEST_DATABASE_URL } from './helpers/db.js';
import { connectUpstreamAgent, openEventStream } from './helpers/live.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { adminMerchant, spawnServer, type ServerProcess } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';

/**
 * Several `pos server` processes on one PostgreSQL database, sharing one standalone
 * processor simulator, as a platform behind a load balancer would share Stripe. Runs only on the
 * PostgreSQL pass of the suite (POS_TEST_DATABASE_URL); the SQLite pass skips it and says so.
 */
if (!TEST_DATABASE_URL) {
  console.info('postgres-instances: skipped, POS_TEST_DATABASE_URL is not set (the PostgreSQL pass of npm test runs it)');
}

describe.skipIf(!TEST_DATABASE_URL)('several server instances on one PostgreSQL database', () => {
  const dir = tempDir('pos-pg-');
  const simDir = tempDir('pos-pg-sim-');
  let sim: RunningSimulator;
  let instances: ServerProcess[] = [];
  let key: string;
  let receiver: Receiver;
  let webhookSecret: string;

  const apis = () => instances.map((s) => client(s.url, key));
  const pick = (i: number) => apis()[i % instances.length]!;

  beforeAll(async () => {
    sim = await startSimulator({ dataDir: simDir.path, authorizationDelayMs: 100, logger: () => undefined });
    const platform = new Stripe(sim.keys.secretTest, { host: sim.host, port: sim.port, protocol: 'http' });
    // The processor's events go to one instance, as to a load balancer; any instance can apply them.
    const hook = await platform.webhookEndpoints.create({ url: 'http://127.0.0.1:9/', enabled_events: ['*'] });
    seedDataDir(dir.path);
    key = (await adminMerchant(dir.path, 'Many Instances')).api_keys.sk_test;
    const env = {
      POS_PROCESSOR: 'stripe',
      STRIPE_API_BASE: sim.url,
      STRIPE_SECRET_KEY_TEST: sim.keys.secretTest,
      STRIPE_SECRET_KEY_LIVE: sim.keys.secretLive,
      STRIPE_PUBLISHABLE_KEY_TEST: sim.keys.publishableTest,
      STRIPE_PUBLISHABLE_KEY_LIVE: sim.keys.publishableLive,
      STRIPE_WEBHOOK_SECRET: hook.secret ?? '',
    };
    const args = ['--reconcile-interval-ms', '200', '--terminal-stale-ms', '1500', '--webhook-retry-scale', '0.01', '--rate-limit', '1000000'];
    instances = await Promise.all([0, 1, 2].map(() => spawnServer(dir.path, args, env)));
    await platform.webhookEndpoints.update(hook.id, { url: `${instances[0]!.url}/processor/webhooks` });
    receiver = await startReceiver();
    const ep = await pick(0).post<{ data: { secret: string } }>('/v1/webhook-endpoints', { url: receiver.url });
    webhookSecret = ep.body.data.secret;
  }, 60_000);

  afterAll(async () => {
    for (const s of instances) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
    await receiver?.close();
    await sim?.close();
    await dropSchemaOf(dir.path);
    dir.cleanup();
    simDir.cleanup();
  });

  async function count(sql: string, ...params: unknown[]): Promise<number> {
    const db = await openTestDb(dir.path);
    try {
      return await db.count(sql, ...params);
    } finally {
      await db.close();
    }
  }

  it('revokes a restricted key on one instance and stops it on every other at once, though they remember it', async () => {
    const made = await pick(0).post<{ data: { id: string; secret: string } }>('/v1/api-keys', { name: 'Elsewhere', preset: 'counter' });
    expect(made.status).toBe(201);
    const on = (i: number) => client(instances[i]!.url, made.body.data.secret);
    // Each instance has used (and so remembers) the key before it is revoked.
    for (const i of [0, 1, 2]) expect((await on(i).get('/v1/merchant')).status).toBe(200);
    expect((await pick(2).post(`/v1/api-keys/${made.body.data.id}/revoke`)).status).toBe(200);
    for (const i of [0, 1, 2]) expect((await on(i).get('/v1/merchant')).status).toBe(401);
  });

  it('creates one payment per Idempotency-Key whichever instance gets each duplicate', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => pick(i).post<{ data: { id: string } }>('/v1/transactions', { amount: 2500 }, { 'Idempotency-Key': 'multi-1' })));
    expect(results.map((r) => r.status).sort()).toEqual([...Array<number>(29).fill(200), 201]);
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
    expect(await count("select count(*) from transactions where amount = 2500")).toBe(1);
    expect(await count("select count(*) from idempotency_keys where key = 'multi-1'")).toBe(1);
  });

  it('never refunds more than was paid when refunds race across instances', async () => {
    const paid = await pick(0).post<{ data: { id: string } }>('/v1/transactions', { amount: 1000, payment_method: 'pm_card_visa', confirm: true });
    expect(paid.status).toBe(201);
    const refunds = await Promise.all(Array.from({ length: 12 }, (_, i) => pick(i).post(`/v1/transactions/${paid.body.data.id}/refunds`, { amount: 100 })));
    expect(refunds.filter((r) => r.status === 201)).toHaveLength(10);
    expect(refunds.filter((r) => r.status >= 500)).toHaveLength(0);
    const txn = await pick(1).get<{ data: { status: string; amount_refunded: number } }>(`/v1/transactions/${paid.body.data.id}`);
    expect(txn.body.data).toMatchObject({ status: 'refunded', amount_refunded: 1000 });
    expect(await count("select count(*) from refunds where transaction_id = ? and status = 'succeeded'", paid.body.data.id)).toBe(10);
  });

  it('lets exactly one of a cancel and a capture racing on two instances win', async () => {
    for (let round = 0; round < 4; round++) {
      const held = await pick(round).post<{ data: { id: string } }>('/v1/transactions', { amount: 1800, payment_method: 'pm_card_visa', confirm: true, capture_method: 'manual' });
      const [cancel, capture] = await Promise.all([pick(round).post(`/v1/transactions/${held.body.data.id}/cancel`, {}), pick(round + 1).post(`/v1/transactions/${held.body.data.id}/capture`, {})]);
      expect([cancel.status, capture.status].filter((s) => s === 200)).toHaveLength(1);
      expect([cancel.status, capture.status].filter((s) => s >= 500)).toHaveLength(0);
      const final = await pick(round + 2).get<{ data: { status: string } }>(`/v1/transactions/${held.body.data.id}`);
      expect(final.body.data.status).toBe(cancel.status === 200 ? 'canceled' : 'succeeded');
      expect(await count("select count(*) from events where object_id = ? and type in ('payment.canceled', 'payment.succeeded')", held.body.data.id)).toBe(1);
    }
  });

  it('keeps the instances together within the processor rate limits: a burst of payments across all three earns no 429', async () => {
    await sim.control.resetRateLimits();
    // 60 creates at once: each instance alone would send its 20 within a second, 60 in all, over
    // test mode's 25; drawing on one budget in the database, they send 25 at most.
    const made = await Promise.all(Array.from({ length: 60 }, (_, i) => pick(i).post('/v1/transactions', { amount: 3_000 + i })));
    expect(made.map((r) => r.status)).toEqual(Array<number>(60).fill(201));
    const report = await sim.control.rateLimits();
    expect(report.endpoints.find((e) => e.endpoint === 'POST /v1/payment_intents')?.requests).toBe(60);
    expect(report.rateLimited).toBe(0);
  });

  it('delivers each webhook event once although every instance runs a delivery worker', async () => {
    const made = await Promise.all(Array.from({ length: 12 }, (_, i) => pick(i).post<{ data: { id: string } }>('/v1/transactions', { amount: 900 + i, payment_method: 'pm_card_visa', confirm: true })));
    const ids = made.map((r) => r.body.data.id);
    const expected = await eventually(async () => {
      const n = await count(`select count(*) from events where object_id in (${ids.map(() => '?').join(',')})`, ...ids);
      const got = new Set(receiver.acceptedIds());
      const db = await openTestDb(dir.path);
      try {
        const rows = await db.all<{ id: string }>(`select id from events where object_id in (${ids.map(() => '?').join(',')})`, ...ids);
        return n === 24 && rows.every((r) => got.has(r.id)) ? rows.map((r) => r.id) : undefined;
      } finally {
        await db.close();
      }
    }, 20_000);
    const deliveries = receiver.received.filter((r) => expected.includes(r.id));
    expect(deliveries).toHaveLength(24);
    for (const r of deliveries) expect(receiver.verify(webhookSecret, r)).toBeTruthy();
  });

  it('runs the stale terminal sweep once, not once per instance', async () => {
    const api = pick(0);
    await api.post('/v1/terminal/locations', { display_name: 'Counter', address: { line1: '1 Main St', city: 'Austin', postal_code: '78701', country: 'US' } });
    const reader = (await api.post<{ data: { processor_terminal_id: string } }>('/v1/terminals', { name: 'Till', registration_code: 'simulated-wpe' })).body.data;
    const created = await api.post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 3000 });
    await pick(1).post('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader.processor_terminal_id });
    await eventually(async () => ((await pick(2).get<{ data: { status: string } }>(`/v1/transactions/${created.body.data.id}`)).body.data.status === 'canceled' ? true : undefined), 15_000);
    // Give the other instances' passes time to (not) act again.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await count("select count(*) from events where object_id = ? and type = 'payment.canceled'", created.body.data.id)).toBe(1);
  });

  it('streams an event written on one instance to a client of another, and pushes it to an agent on a third', async () => {
    // Nothing polls: only the writer's NOTIFY, heard on each instance's listening connection, wakes
    // these two (each process's safety check runs every 30 s, far beyond this test's waits).
    const stream = await openEventStream(instances[1]!.url, key);
    const agent = await connectUpstreamAgent(instances[2]!.url, key, 60_000);
    try {
      const made = await pick(0).post<{ data: { id: string } }>('/v1/transactions', { amount: 777 });
      expect(made.status).toBe(201);
      expect((await stream.event(made.body.data.id, 3_000)).type).toBe('payment.created');
      await agent.next('transaction', (m) => (m.transaction as { id?: string }).id === made.body.data.id, 0, 3_000);
    } finally {
      stream.close();
      agent.close();
    }
  });

  it('takes a silent agent’s reader offline at its deadline, once, though every instance has a timer for it', async () => {
    const api = pick(0);
    await api.post('/v1/terminal/locations', { display_name: 'Back room', address: { line1: '2 Main St', city: 'Austin', postal_code: '78701', country: 'US' } });
    const reader = (await api.post<{ data: { id: string; processor_terminal_id: string } }>('/v1/terminals', { name: 'Till 2', registration_code: 'simulated-wpe' })).body.data;
    // A 100 ms heartbeat: presence lasts 300 ms after the one heartbeat this agent sends.
    const agent = await connectUpstreamAgent(instances[1]!.url, key, 100);
    agent.send({ type: 'heartbeat', readers: [{ reader: { processor_terminal_id: reader.processor_terminal_id }, status: 'online' }] });
    await agent.next('presence');
    agent.close();
    await eventually(async () => {
      const list = await pick(2).get<{ data: { id: string; status: string }[] }>('/v1/terminal/readers');
      return list.body.data.find((r) => r.id === reader.id)?.status === 'offline' ? true : undefined;
    }, 5_000);
    // Every instance's timer has fired by now; the conditional expiry let one of them act.
    await new Promise((r) => setTimeout(r, 500));
    expect(await count("select count(*) from events where object_id = ? and type = 'terminal.reader.offline'", reader.id)).toBe(1);
  });

  it('pushes a reader state changed by an event on one instance to an agent connected to another', async () => {
    const api = pick(0);
    await api.post('/v1/terminal/locations', { display_name: 'Front', address: { line1: '3 Main St', city: 'Austin', postal_code: '78701', country: 'US' } });
    const reader = (await api.post<{ data: { processor_terminal_id: string } }>('/v1/terminals', { name: 'Till 3', registration_code: 'simulated-wpe' })).body.data.processor_terminal_id;
    const agent = await connectUpstreamAgent(instances[2]!.url, key, 60_000);
    try {
      await agent.next('reader_states', (m) => (m.readers as { processor_terminal_id: string }[]).some((r) => r.processor_terminal_id === reader));
      const created = await pick(1).post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 4200 });
      await pick(1).post('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader });
      const from = agent.messages.length;
      // The tap goes straight to the processor: its events reach instance 0 only, which applies
      // them; instance 2 hears of it through NOTIFY and pushes the approval to its agent.
      const platform = new Stripe(sim.keys.secretTest, { host: sim.host, port: sim.port, protocol: 'http' });
      await platform.testHelpers.terminal.readers.presentPaymentMethod(reader);
      const approved = await agent.next('reader_state', (m) => (m.reader as { activity: string }).activity === 'approved', from, 10_000);
      expect(approved.reader).toMatchObject({ processor_terminal_id: reader, action: { transaction_id: created.body.data.id, status: 'succeeded' } });
    } finally {
      agent.close();
    }
  });

  it('answers the same reader list from every instance', async () => {
    const lists = await Promise.all(apis().map((api) => api.get<{ data: Json[] }>('/v1/terminal/readers')));
    const shapes = lists.map((l) => JSON.stringify(l.body.data.map((r) => [r.id, r.status])));
    expect(new Set(shapes).size).toBe(1);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('rate limits shared by instances on one database', () => {
  it('counts one merchant’s requests across instances', async () => {
    const dir = tempDir('pos-pg-rl-');
    const simDir = tempDir('pos-pg-rl-sim-');
    const sim = await startSimulator({ dataDir: simDir.path, logger: () => undefined });
    const servers: ServerProcess[] = [];
    try {
      seedDataDir(dir.path);
      const key = (await adminMerchant(dir.path, 'Limited')).api_keys.sk_test;
      const env = { POS_PROCESSOR: 'stripe', STRIPE_API_BASE: sim.url, STRIPE_SECRET_KEY_TEST: sim.keys.secretTest, STRIPE_PUBLISHABLE_KEY_TEST: sim.keys.publishableTest, STRIPE_WEBHOOK_SECRET: 'whsec_unused' };
      for (let i = 0; i < 2; i++) servers.push(await spawnServer(dir.path, ['--rate-limit', '10', '--rate-window', '3600'], env));
      const statuses: number[] = [];
      for (let i = 0; i < 14; i++) statuses.push((await client(servers[i % 2]!.url, key).get('/v1/customers')).status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(4);
    } finally {
      for (const s of servers) {
        s.child.kill('SIGTERM');
        await s.exited;
      }
      await sim.close();
      await dropSchemaOf(dir.path);
      dir.cleanup();
      simDir.cleanup();
    }
  }, 60_000);
});

