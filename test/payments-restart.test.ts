import { afterEach, describe, expect, it } from 'vitest';
import type { CreateTransactionResponse, Transaction } from '../shared/api/types.js';
import { client, type ApiResponse } from './helpers/api.js';
import { intentsByTransaction, openPosDb, pool, simulatorKeysOf, stripeAt } from './helpers/races.js';
import { adminMerchant, spawnServer, type ServerProcess } from './helpers/server.js';
import { seedDataDir } from './helpers/db.js';
import { tempDir } from './helpers/tmp.js';

/**
 * Crash and restart with real processes: `pos server` (with its embedded simulator) is SIGKILLed in
 * the middle of a burst of payment creates, and restarted on the same data dir. Idempotency's
 * recovery points (spec §8) must make every acknowledged payment durable and every unanswered one
 * finishable by a retry with its key, with exactly one payment per key, at the processor too.
 */

const cleanups: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function serverOn(dir: string): Promise<ServerProcess> {
  const server = await spawnServer(dir, ['--log-level', 'info']);
  cleanups.push(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  });
  return server;
}

/**
 * Creates in the burst; 20 in flight is a busy shop's worth of counters all paying at once. 160
 * keeps the whole test near 15 s on two cores while leaving over a hundred creates to be cut off.
 */
const BURST = 160;
const IN_FLIGHT = 20;
/** Answers received before the kill: far enough in that work is in every stage of a create. */
const KILL_AFTER = 50;
/** Two server starts and ~500 requests on a shared two-core machine: past the 30 s default when busy. */
const TEST_TIMEOUT_MS = 60_000;

interface Attempt {
  key: string;
  amount: number;
  response?: ApiResponse<CreateTransactionResponse>;
  error?: unknown;
}

describe('SIGKILL in the middle of a burst of creates', () => {
  it('keeps every acknowledged payment, and a retry with its key finishes every unanswered one exactly once', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    seedDataDir(dir.path);
    const merchant = await adminMerchant(dir.path, 'Crash Café');

    const first = await serverOn(dir.path);
    const api = client(first.url, merchant.api_keys.sk_test);
    const attempts: Attempt[] = Array.from({ length: BURST }, (_, i) => ({ key: `burst-${i}`, amount: 1_000 + i }));
    let answered = 0;
    await pool(
      attempts.map((a) => async () => {
        try {
          a.response = await api.post<CreateTransactionResponse>('/v1/transactions', { amount: a.amount, payment_method: 'pm_card_visa', confirm: true }, { 'Idempotency-Key': a.key });
          answered += 1;
          if (answered === KILL_AFTER) first.child.kill('SIGKILL');
        } catch (err) {
          a.error = err;
        }
      }),
      IN_FLIGHT,
    );
    await first.exited;
    expect(first.child.signalCode).toBe('SIGKILL');

    const acknowledged = attempts.filter((a) => a.response && a.response.status >= 200 && a.response.status < 300);
    const unanswered = attempts.filter((a) => !a.response);
    // Nothing but 201s before the kill, and the kill really cut requests off.
    expect(attempts.filter((a) => a.response && a.response.status !== 201)).toEqual([]);
    expect(acknowledged.length).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(unanswered.length).toBeGreaterThan(0);
    expect(acknowledged.length + unanswered.length).toBe(BURST);

    const second = await serverOn(dir.path);
    const api2 = client(second.url, merchant.api_keys.sk_test);

    // Every acknowledged payment survived, as it was answered, with its payment.created event.
    const db = (await openPosDb(dir.path));
    cleanups.push(db.close);
    for (const a of acknowledged) {
      const id = a.response?.body.data.id as string;
      const read = await api2.get<{ data: Transaction }>(`/v1/transactions/${id}`);
      expect(read.status).toBe(200);
      expect(read.body.data).toMatchObject({ id, amount: a.amount, status: 'succeeded' });
      expect((await db.count("select count(*) from events where object_id = ? and type = 'payment.created'", id))).toBe(1);
    }

    // Every unanswered create finishes on retry with its key: 201 if it never got far, 200 if the
    // recovery pass (or the retry itself) finished the work the dead process had started.
    await pool(
      unanswered.map((a) => async () => {
        a.response = await api2.post<CreateTransactionResponse>('/v1/transactions', { amount: a.amount, payment_method: 'pm_card_visa', confirm: true }, { 'Idempotency-Key': a.key });
      }),
      IN_FLIGHT,
    );
    for (const a of unanswered) {
      expect([200, 201], JSON.stringify(a.response?.body)).toContain(a.response?.status);
      expect(a.response?.body.data).toMatchObject({ amount: a.amount, status: 'succeeded' });
    }
    // And a second retry of everything is a pure replay of the same object.
    const replays = await pool(
      attempts.map((a) => () => api2.post<CreateTransactionResponse>('/v1/transactions', { amount: a.amount, payment_method: 'pm_card_visa', confirm: true }, { 'Idempotency-Key': a.key })),
      IN_FLIGHT,
    );
    replays.forEach((r, i) => {
      expect(r.status).toBe(200);
      expect(r.body.data.id).toBe(attempts[i]?.response?.body.data.id);
    });

    // Exactly one payment per key, here and at the processor.
    const ids = attempts.map((a) => a.response?.body.data.id as string);
    expect(new Set(ids).size).toBe(BURST);
    expect((await db.count('select count(*) from transactions where merchant_id = ?', merchant.id))).toBe(BURST);
    expect((await db.count("select count(*) from transactions where merchant_id = ? and status = 'succeeded'", merchant.id))).toBe(BURST);
    expect((await db.count('select count(*) from idempotency_keys where merchant_id = ?', merchant.id))).toBe(BURST);
    expect((await db.count("select count(*) from idempotency_keys where merchant_id = ? and recovery_point != 'finished'", merchant.id))).toBe(0);
    expect((await db.count("select count(*) from events where merchant_id = ? and type = 'payment.created'", merchant.id))).toBe(BURST);
    expect((await db.count("select count(*) from events where merchant_id = ? and type = 'payment.succeeded'", merchant.id))).toBe(BURST);

    const { data: view } = (await api2.get<{ data: { processor: { api_base: string } } }>('/v1/merchant')).body;
    const intents = await intentsByTransaction(stripeAt(view.processor.api_base, simulatorKeysOf(dir.path).secretTest));
    for (const [i, id] of ids.entries()) {
      expect(intents.get(id)?.map((pi) => [pi.amount, pi.status])).toEqual([[attempts[i]?.amount, 'succeeded']]);
    }
    expect([...intents.values()].flat().filter((pi) => pi.metadata.pos_merchant_id === merchant.id)).toHaveLength(BURST);
  }, TEST_TIMEOUT_MS);
});
