import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiConnectionError, ApiRequestError } from '../shared/api/errors.js';
import type { CreateTransactionParams, Transaction } from '../shared/api/types.js';
import { MAX_OFFLINE_AGE_MS, MAX_OFFLINE_SALES, OfflineLimitReached, OfflineSales, type SaleRecorder } from './offline-sales.js';
import { AgentState } from './state.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const silent = pino({ level: 'silent' });

/** A hand-moved clock. */
function clock(start = Date.UTC(2026, 10, 27, 9, 0, 0)) {
  let now = start;
  return { now: () => now, move: (ms: number) => (now += ms) };
}

/**
 * The server as the queue sees it: POST /v1/transactions, idempotent on its key as the API is, with
 * switches for an outage and for an answer lost after the sale was recorded.
 */
class Server implements SaleRecorder {
  readonly recorded: { key: string; body: CreateTransactionParams }[] = [];
  readonly #byKey = new Map<string, Transaction>();
  down = false;
  /** The next N answers are lost after the sale is recorded (a reset connection). */
  loseAnswers = 0;
  refuse: ((body: CreateTransactionParams) => boolean) | undefined;

  async createTransaction(body: CreateTransactionParams, options: { idempotencyKey?: string }): Promise<{ data: Transaction }> {
    if (this.down) throw new ApiConnectionError('http://server', new Error('connect ECONNREFUSED'));
    const key = options.idempotencyKey!;
    if (this.refuse?.(body)) throw new ApiRequestError(400, { type: 'invalid_request_error', code: 'parameter_invalid', message: 'refused' });
    let txn = this.#byKey.get(key);
    if (!txn) {
      txn = { id: `txn-${this.recorded.length + 1}`, reference: `txn_${this.recorded.length + 1}` } as Transaction;
      this.#byKey.set(key, txn);
      this.recorded.push({ key, body });
    }
    if (this.loseAnswers > 0) {
      this.loseAnswers -= 1;
      throw new ApiConnectionError('http://server', new Error('socket hang up'));
    }
    return { data: txn };
  }
}

async function open(dir?: string) {
  const path = dir ?? mkdtempSync(join(tmpdir(), 'pos-offline-unit-'));
  if (!dir) dirs.push(path);
  const state = await AgentState.open(path);
  return { path, state };
}

const sale = (amount: number): CreateTransactionParams => ({ amount, payment_method_type: 'cash', location_id: '00000000-0000-4000-8000-000000000001' });

describe('the offline cash sales queue', () => {
  it('sends sales in the order taken, each once, with its taken_at and local reference, after an outage', async () => {
    const { state } = await open();
    const c = clock();
    const server = new Server();
    server.down = true;
    const q = new OfflineSales(state.db, state.data.agent_id, c, server, silent);
    const taken = [];
    for (let i = 1; i <= 5; i += 1) {
      taken.push(q.take(sale(100 * i), `key-${i}`));
      c.move(60_000);
    }
    expect(taken.map((s) => s.local_reference)).toEqual([1, 2, 3, 4, 5].map((n) => `OFF-${state.data.agent_id.slice(0, 4).toUpperCase()}-000${n}`));
    expect(await q.sync()).toBe(0);
    expect(q.summary()).toMatchObject({ waiting: 5, refused: 0 });

    server.down = false;
    expect(await q.sync()).toBe(5);
    expect(server.recorded.map((r) => r.body.amount)).toEqual([100, 200, 300, 400, 500]);
    expect(server.recorded.map((r) => r.key)).toEqual(['key-1', 'key-2', 'key-3', 'key-4', 'key-5']);
    expect(server.recorded[1]!.body).toMatchObject({ taken_at: new Date(Date.UTC(2026, 10, 27, 9, 1, 0)).toISOString(), offline_reference: taken[1]!.local_reference });
    expect(q.summary().waiting).toBe(0);
    // Nothing is sent twice.
    expect(await q.sync()).toBe(0);
    expect(server.recorded).toHaveLength(5);
    await state.close();
  });

  it('records a sale once when the answer is lost, and across a restart', async () => {
    const { path, state } = await open();
    const c = clock();
    const server = new Server();
    server.down = true;
    const q = new OfflineSales(state.db, state.data.agent_id, c, server, silent);
    q.take(sale(100), 'a');
    q.take(sale(200), 'b');
    q.take(sale(300), 'c');
    server.down = false;
    server.loseAnswers = 1;
    // The first is recorded but its answer lost: the pass stops there, keeping the order.
    expect(await q.sync()).toBe(0);
    expect(server.recorded).toHaveLength(1);
    await state.close();

    const reopened = await open(path);
    const again = new OfflineSales(reopened.state.db, reopened.state.data.agent_id, c, server, silent);
    expect(again.summary().waiting).toBe(3);
    expect(await again.sync()).toBe(3);
    expect(server.recorded.map((r) => r.body.amount)).toEqual([100, 200, 300]);
    expect(again.waiting()).toEqual([]);
    await reopened.state.close();
  });

  it('runs one pass at a time: two syncs at once send each sale once', async () => {
    const { state } = await open();
    const server = new Server();
    const q = new OfflineSales(state.db, state.data.agent_id, clock(), server, silent);
    server.down = true;
    for (let i = 1; i <= 4; i += 1) q.take(sale(100 * i), `k${i}`);
    server.down = false;
    const [a, b] = await Promise.all([q.sync(), q.sync()]);
    expect(a + (a === b ? 0 : b)).toBe(4);
    expect(server.recorded).toHaveLength(4);
    await state.close();
  });

  it('keeps a sale the server refuses for good, out of the way of the next', async () => {
    const { state } = await open();
    const server = new Server();
    const q = new OfflineSales(state.db, state.data.agent_id, clock(), server, silent);
    server.down = true;
    q.take(sale(100), 'x');
    q.take(sale(999), 'y');
    q.take(sale(300), 'z');
    server.down = false;
    server.refuse = (body) => body.amount === 999;
    expect(await q.sync()).toBe(2);
    expect(server.recorded.map((r) => r.body.amount)).toEqual([100, 300]);
    expect(q.summary()).toMatchObject({ waiting: 0, refused: 1 });
    await state.close();
  });

  it('stops taking sales offline at its bound, by count and by age, and says so', async () => {
    const { state } = await open();
    const c = clock();
    const server = new Server();
    server.down = true;
    const q = new OfflineSales(state.db, state.data.agent_id, c, server, silent);
    q.take(sale(100), 'old');
    c.move(MAX_OFFLINE_AGE_MS);
    expect(() => q.take(sale(100), 'late')).toThrow(OfflineLimitReached);
    expect(q.limitReached()).toMatch(/waited 72 hours to sync/);
    server.down = false;
    await q.sync();
    expect(q.limitReached()).toBeNull();

    server.down = true;
    // All but the last as one commit (each take() is its own fsync'd one), then the last by take().
    state.db.transaction(() => {
      const insert = state.db.prepare('INSERT INTO offline_sales (local_reference, idempotency_key, request, taken_at) VALUES (?, ?, ?, ?)');
      for (let i = 1; i < MAX_OFFLINE_SALES; i += 1) insert.run(`FILL-${i}`, `n${i}`, JSON.stringify(sale(100)), c.now());
    })();
    q.take(sale(100), 'last');
    expect(() => q.take(sale(100), 'one-more')).toThrow(/Offline limit reached: 500 cash sales are waiting to sync/);
    await state.close();
  });

  it('keeps the state in an owner-only SQLite file, and takes over an older agent.json', async () => {
    const { path, state } = await open();
    expect(statSync(join(path, 'agent.db')).mode & 0o777).toBe(0o600);
    expect(state.db.pragma('synchronous', { simple: true })).toBe(2);
    await state.close();

    const legacyDir = mkdtempSync(join(tmpdir(), 'pos-offline-legacy-'));
    dirs.push(legacyDir);
    const { writeFileSync, existsSync } = await import('node:fs');
    writeFileSync(join(legacyDir, 'agent.json'), JSON.stringify({ agent_id: 'legacy-agent', cursor: 7, simulated: ['tmr_1'], queue: [{ old: true }] }), { mode: 0o600 });
    const taken = await AgentState.open(legacyDir);
    expect(taken.data).toMatchObject({ agent_id: 'legacy-agent', cursor: 7, simulated: ['tmr_1'], print_queue: [] });
    expect(existsSync(join(legacyDir, 'agent.json'))).toBe(false);
    await taken.close();
    const reread = await AgentState.open(legacyDir);
    expect(reread.data.agent_id).toBe('legacy-agent');
    await reread.close();
  });
});
