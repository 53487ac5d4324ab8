import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { simulatorConnection } from '../cli/stack.js';
import { startServer, type RunningServer } from '../server/main.js';
import { createMerchant, type CreatedMerchant } from '../server/accounts/merchants.js';
import { MAX_RECOVERY_ATTEMPTS } from '../server/idempotency/recovery-schedule.js';
import { loadServerConfig } from '../shared/config.js';
import { systemClock } from '../shared/time.js';
import { startSimulator, type RunningSimulator } from '../simulator/index.js';
import { client, type Json } from './helpers/api.js';
import { backendFlags, dropSchemaOf, openTestDb, seedDataDir } from './helpers/db.js';
import { eventually, tempDir } from './helpers/tmp.js';

/**
 * No stuck work (docs/payments.md, "Processor failures"): a create the processor refuses for good
 * ends its key at once; one the processor keeps failing is retried with backoff and then given up,
 * readable as failed, and never touched again. The server reaches the simulator through a proxy
 * here that counts PaymentIntent creates and can answer them itself, as a broken processor would.
 */

type Txn = Json & { id: string; reference: string; status: string; failure_code: string | null };
type ErrorAnswer = { error: Json & { code?: string; transaction?: Txn } };

/** What the proxy does with `POST /v1/payment_intents`; everything else always passes. */
type Mode = { kind: 'pass' } | { kind: 'answer'; status: number; body: Json };

/** Fast passes, and a backoff compressed 500× (first retry 10 ms, give-up age 3.6 s) so the cap is reached in seconds. */
const RECONCILE_MS = 100;
const RETRY_SCALE = 0.002;

let sim: RunningSimulator;
let proxy: Server;
let server: RunningServer;
let dir: { path: string; cleanup(): void };
let mode: Mode = { kind: 'pass' };
/** When set, refund creates reach the simulator but the server is answered 503. */
let refundsLost = false;
let refundCalls = 0;
/** When each PaymentIntent create reached the proxy. */
const creates: number[] = [];
const logs: Json[] = [];

const UNAVAILABLE: Mode = {
  kind: 'answer',
  status: 503,
  body: { error: { type: 'api_error', message: 'The processor is down for maintenance.' } },
};

function startProxy(target: { host: string; port: number }): Promise<Server> {
  const s = createServer((req, res) => {
    const isRefund = req.method === 'POST' && req.url?.split('?')[0] === '/v1/refunds';
    if (isRefund && refundsLost) {
      // The refund reaches the processor, but its answer never reaches the server.
      const upstream = request({ host: target.host, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        answer.resume();
        refundCalls++;
        res.writeHead(503, { 'content-type': 'application/json', 'stripe-should-retry': 'false' });
        res.end(JSON.stringify(UNAVAILABLE.kind === 'answer' ? UNAVAILABLE.body : {}));
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
      return;
    }
    const isCreate = req.method === 'POST' && req.url?.split('?')[0] === '/v1/payment_intents';
    if (isCreate) creates.push(Date.now());
    if (isCreate && mode.kind === 'answer') {
      const { status, body } = mode;
      req.resume();
      // Stripe-Should-Retry: false keeps the SDK from retrying on its own, so each attempt is one call.
      res.writeHead(status, { 'content-type': 'application/json', 'stripe-should-retry': 'false', 'request-id': `req_proxy_${creates.length}` });
      res.end(JSON.stringify(body));
      return;
    }
    const upstream = request({ host: target.host, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

beforeAll(async () => {
  dir = tempDir();
  seedDataDir(dir.path);
  sim = await startSimulator({ dataDir: join(dir.path, 'simulator') });
  proxy = await startProxy(sim);
  const port = (proxy.address() as AddressInfo).port;
  const config = loadServerConfig(
    { port: 0, dataDir: dir.path, logLevel: 'warn', reconcileIntervalMs: RECONCILE_MS, recoveryRetryScale: RETRY_SCALE, ...backendFlags(dir.path) },
    {},
  );
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) logs.push(JSON.parse(line) as Json);
      done();
    },
  });
  server = await startServer(config, {
    processor: { ...simulatorConnection(sim), endpoint: { host: '127.0.0.1', port, protocol: 'http' } },
    logger: pino({ level: 'warn' }, sink),
  });
});

afterAll(async () => {
  await server?.close();
  await new Promise((resolve) => proxy?.close(resolve));
  await sim?.close();
  await dropSchemaOf(dir.path);
  dir.cleanup();
});

beforeEach(() => {
  mode = { kind: 'pass' };
  refundsLost = false;
});

async function shop(name: string): Promise<{ m: CreatedMerchant; api: ReturnType<typeof client> }> {
  const m = await createMerchant(server.store, systemClock, { businessName: name });
  return { m, api: client(server.url, m.keys.sk_test) };
}

async function keyRow(merchantId: string, key: string): Promise<{ recovery_point: string; attempts: number; response_status: number | null } | undefined> {
  const db = await openTestDb(dir.path);
  try {
    const [row] = await db.all<{ recovery_point: string; attempts?: number | string; response_status: number | string | null }>(
      'select * from idempotency_keys where merchant_id = ? and key = ?',
      merchantId,
      key,
    );
    return row && { recovery_point: row.recovery_point, attempts: Number(row.attempts), response_status: row.response_status === null ? null : Number(row.response_status) };
  } finally {
    await db.close();
  }
}

async function openKeys(merchantId: string): Promise<number> {
  const db = await openTestDb(dir.path);
  try {
    return await db.count("select count(*) from idempotency_keys where merchant_id = ? and recovery_point != 'finished'", merchantId);
  } finally {
    await db.close();
  }
}

/** Long enough for several reconciler passes to have come and gone. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 6 * RECONCILE_MS));

describe('a processor that refuses for good ends the key', () => {
  const refusals: [string, Mode | 'unknown_payment_method', number, string][] = [
    ["the simulator's own resource_missing (an unknown payment method)", 'unknown_payment_method', 400, 'resource_missing'],
    [
      'an idempotency_error',
      { kind: 'answer', status: 400, body: { error: { type: 'idempotency_error', message: 'Keys for idempotent requests can only be used with the same parameters they were first used with.' } } },
      400,
      'processor_idempotency_error',
    ],
    [
      'a card_error without a PaymentIntent',
      { kind: 'answer', status: 402, body: { error: { type: 'card_error', code: 'card_declined', decline_code: 'do_not_honor', message: 'Your card was declined.' } } },
      402,
      'card_declined',
    ],
  ];

  for (const [what, refusal, status, code] of refusals) {
    it(`during recovery: ${what} fails the payment, the key keeps the answer, and later passes leave it alone`, async () => {
      const { m, api } = await shop(`Refused ${code}`);
      const key = `refused-${code}`;
      const body = { amount: 1_500, confirm: true, payment_method: refusal === 'unknown_payment_method' ? 'pm_does_not_exist' : 'pm_card_visa', metadata: { key } };

      // The first attempt meets an outage and leaves the key half-done, for the recovery pass.
      mode = UNAVAILABLE;
      const first = await api.post<ErrorAnswer>('/v1/transactions', body, { 'Idempotency-Key': key });
      expect(first.status).toBe(502);
      expect((await keyRow(m.merchant.id, key))?.recovery_point).toBe('transaction_created');

      const before = creates.length;
      mode = refusal === 'unknown_payment_method' ? { kind: 'pass' } : refusal;
      await eventually(async () => ((await keyRow(m.merchant.id, key))?.recovery_point === 'finished' ? true : undefined));
      const called = creates.length - before;
      expect(called).toBe(1);

      const replay = await api.post<ErrorAnswer>('/v1/transactions', body, { 'Idempotency-Key': key });
      expect(replay.status).toBe(status);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body.error.code).toBe(code);
      const failed = replay.body.error.transaction;
      expect(failed).toMatchObject({ status: 'failed', failure_code: code, metadata: { key } });
      const read = await api.get<{ data: Txn }>(`/v1/transactions/${failed?.id}`);
      expect(read.body.data).toMatchObject({ id: failed?.id, status: 'failed', failure_code: code });

      // Second, third… passes: nothing more reaches the processor for this key.
      mode = UNAVAILABLE;
      await settle();
      expect(creates.length - before).toBe(called);
      expect(await openKeys(m.merchant.id)).toBe(0);
    });
  }

  it('a field the SDK cannot encode (a lone surrogate) leaves no pending payment and no open key', async () => {
    const { m, api } = await shop('Surrogate Shop');
    const before = creates.length;
    const res = await api.post<ErrorAnswer>('/v1/transactions', { amount: 900, confirm: true, payment_method: 'pm_card_visa\ud800' }, { 'Idempotency-Key': 'lone-surrogate' });
    expect(res.status).toBe(400);
    // Refused at the edge, before a row or a key is written and before the SDK sees it.
    expect(res.body.error).toMatchObject({ code: 'parameter_invalid', param: 'payment_method' });
    expect(res.body.error.transaction).toBeUndefined();
    await settle();
    expect(creates.length).toBe(before);
    expect(await openKeys(m.merchant.id)).toBe(0);
    const pending = await api.get<{ data: Txn[] }>('/v1/transactions?status=pending');
    expect(pending.body.data).toEqual([]);
    // Refused at the edge, the request never ran, so (as at Stripe) its key holds no answer and a
    // corrected retry with the same key goes ahead.
    const retry = await api.post<ErrorAnswer>('/v1/transactions', { amount: 900 }, { 'Idempotency-Key': 'lone-surrogate' });
    expect(retry.status).toBe(201);
  });
});

describe('a processor that stays down', () => {
  it('is retried with growing delays, then the payment is failed with processing_error and left alone', async () => {
    const { m, api } = await shop('Outage Shop');
    const key = 'outage-1';
    const body = { amount: 2_100, confirm: true, payment_method: 'pm_card_visa', metadata: { key } };
    mode = UNAVAILABLE;
    const before = creates.length;
    const first = await api.post<ErrorAnswer>('/v1/transactions', body, { 'Idempotency-Key': key });
    expect(first.status).toBe(502);
    const requestId = first.headers.get('request-id');
    expect(requestId).toBeTruthy();

    const row = await eventually(async () => {
      const r = await keyRow(m.merchant.id, key);
      return r?.recovery_point === 'finished' ? r : undefined;
    }, 15_000);
    const calls = creates.slice(before);
    // Retried, but bounded: never more than the cap, each attempt counted on the key.
    expect(calls.length).toBeGreaterThanOrEqual(3);
    expect(calls.length).toBeLessThanOrEqual(MAX_RECOVERY_ATTEMPTS);
    expect(row.attempts).toBe(calls.length);
    expect(row.response_status).toBe(402);
    // Backoff: the later gaps are longer than the first.
    const gaps = calls.slice(1).map((at, i) => at - (calls[i] ?? at));
    expect(Math.max(...gaps.slice(-2))).toBeGreaterThan(gaps[0] ?? 0);

    // Surfaced: one log line naming the request, the payment readable as failed, the key answering so.
    const line = logs.find((l) => l.request_id === requestId && String(l.msg).includes('given up'));
    expect(line).toMatchObject({ level: 50, operation: 'create_payment', attempts: calls.length });
    const replay = await api.post<ErrorAnswer>('/v1/transactions', body, { 'Idempotency-Key': key });
    expect(replay.status).toBe(402);
    expect(replay.body.error).toMatchObject({ type: 'card_error', code: 'processing_error' });
    const failed = replay.body.error.transaction;
    expect(failed).toMatchObject({ status: 'failed', failure_code: 'processing_error', metadata: { key } });
    const read = await api.get<{ data: Txn }>(`/v1/transactions/${failed?.id}`);
    expect(read.body.data).toMatchObject({ id: failed?.id, status: 'failed', failure_code: 'processing_error' });
    const events = await api.get<{ data: { type: string; data: Json }[] }>('/v1/events?type=payment.failed');
    expect(events.body.data.map((e) => e.data.reference)).toContain(failed?.reference);

    // The recovery pass no longer touches it, down or back up.
    await settle();
    mode = { kind: 'pass' };
    await settle();
    expect(creates.length - before).toBe(calls.length);
    expect(await openKeys(m.merchant.id)).toBe(0);
  }, 30_000);
});

describe('a refund given up while its answers were lost', () => {
  it('fails and frees its amount, then succeeds when the processor’s late news says it went through', async () => {
    const { api } = await shop('Lost Refund Shop');
    const paid = await api.post<{ data: Txn }>('/v1/transactions', { amount: 3_000, confirm: true, payment_method: 'pm_card_visa' });
    expect(paid.body.data.status).toBe('succeeded');
    // Processor events wait until the refund has been given up, as a delayed webhook would.
    await sim.control.setWebhookFaults({ hold: true });
    refundsLost = true;
    try {
      const first = await api.post<ErrorAnswer>(`/v1/transactions/${paid.body.data.id}/refunds`, { amount: 1_000 }, { 'Idempotency-Key': 'lost-refund' });
      expect(first.status).toBe(502);
      const given = await eventually(async () => {
        const list = await api.get<{ data: (Json & { status: string; failure_reason: string | null })[] }>(`/v1/transactions/${paid.body.data.id}/refunds`);
        return list.body.data[0]?.status === 'failed' ? list.body.data[0] : undefined;
      }, 15_000);
      expect(given.failure_reason).toBe('processor_unavailable');
      expect(refundCalls).toBeGreaterThanOrEqual(2);
      const freed = await api.get<{ data: Txn & { amount_refunded: number } }>(`/v1/transactions/${paid.body.data.id}`);
      expect(freed.body.data).toMatchObject({ status: 'succeeded', amount_refunded: 0 });
    } finally {
      refundsLost = false;
      await sim.control.setWebhookFaults({ hold: false });
      await sim.control.releaseHeldWebhooks();
    }
    // The money did go back: the processor's events move the refund and the payment on.
    const after = await eventually(async () => {
      const res = await api.get<{ data: Txn & { amount_refunded: number } }>(`/v1/transactions/${paid.body.data.id}`);
      return res.body.data.amount_refunded === 1_000 ? res.body.data : undefined;
    }, 15_000);
    expect(after.status).toBe('partially_refunded');
    const refunds = await api.get<{ data: (Json & { status: string })[] }>(`/v1/transactions/${paid.body.data.id}/refunds`);
    expect(refunds.body.data.map((r) => r.status)).toEqual(['succeeded']);
  }, 40_000);
});
