import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Keyring } from '../../shared/crypto/keyring.js';
import { keySourceOf } from '../../shared/crypto/key-source.js';
import { metaPlace } from '../../simulator/store.js';
import Stripe from 'stripe';
import { budgetedHttpClient } from '../../server/processor/stripe/budget-client.js';
import type { ApiErrorBody, CreateTransactionResponse, Data, Transaction } from '../../shared/api/types.js';
import { client, type ApiResponse, type Json } from './api.js';

/** Helpers shared by the payments race, restart and processor-event tests. */

/** The spec §7 error body, and nothing else at its top level. */
export function expectErrorBody(res: ApiResponse<unknown>, status: number, code: string): void {
  const body = res.body as { error?: ApiErrorBody };
  if (res.status !== status || body?.error?.code !== code || typeof body.error.message !== 'string' || Object.keys(body).length !== 1) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.body)}`);
  }
}

/** Reads the server's ledger (SQLite file or PostgreSQL schema); `count` runs a `select count(*)`. */
export { openTestDb as openPosDb } from './db.js';

/** The simulator's platform keys as it persisted them, sealed under the data dir's key (for a simulator running in another process). */
export function simulatorKeysOf(dataDir: string): { secretTest: string; secretLive: string; publishableTest: string; publishableLive: string } {
  const db = new Database(join(dataDir, 'simulator', 'simulator.db'), { readonly: true, fileMustExist: true });
  try {
    const raw = db.prepare("select value from meta where key = 'platform_keys'").pluck().get() as string;
    return JSON.parse(new Keyring(keySourceOf({ dataDir })).open(metaPlace('platform_keys'), raw)) as ReturnType<typeof simulatorKeysOf>;
  } finally {
    db.close();
  }
}

/**
 * The official SDK pointed at a simulator URL, as the server itself is, and on the same processor
 * budget as a server in this process: a test reading the processor beside the server is one more
 * client of the platform's key and must keep within its rate limits too.
 */
export function stripeAt(url: string, key: string): Stripe {
  const { hostname, port, protocol } = new URL(url);
  return new Stripe(key, { host: hostname, port: Number(port), protocol: protocol === 'https:' ? 'https' : 'http', maxNetworkRetries: 0, httpClient: budgetedHttpClient(key) });
}

/** Every platform PaymentIntent the processor holds for a transaction id (there must be one). */
export async function intentsByTransaction(stripe: Stripe): Promise<Map<string, Stripe.PaymentIntent[]>> {
  const all = await stripe.paymentIntents.list({ limit: 100 }).autoPagingToArray({ limit: 10_000 });
  const byTxn = new Map<string, Stripe.PaymentIntent[]>();
  for (const intent of all) {
    const txn = intent.metadata.pos_transaction_id;
    if (!txn) continue;
    byTxn.set(txn, [...(byTxn.get(txn) ?? []), intent]);
  }
  return byTxn;
}

/** Runs `tasks` with at most `width` in flight, keeping results in task order. */
export async function pool<T>(tasks: (() => Promise<T>)[], width: number): Promise<T[]> {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await (tasks[i] as () => Promise<T>)();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, tasks.length) }, worker));
  return results;
}

/** A merchant's API with a few payment shortcuts. */
export function paymentsApi(url: string, key: string) {
  const api = client(url, key);
  return {
    ...api,
    /** A card payment that succeeds at once. */
    paid: async (amount: number, headers?: Record<string, string>) => {
      const res = await api.post<CreateTransactionResponse>('/v1/transactions', { amount, payment_method: 'pm_card_visa', confirm: true }, headers);
      if (res.status !== 201 || res.body.data.status !== 'succeeded') throw new Error(`payment did not succeed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data;
    },
    /** A manual-capture card payment, authorised and waiting for capture. */
    authorised: async (amount: number) => {
      const res = await api.post<CreateTransactionResponse>('/v1/transactions', { amount, payment_method: 'pm_card_visa', confirm: true, capture_method: 'manual' });
      if (res.status !== 201 || res.body.data.status !== 'requires_capture') throw new Error(`authorisation failed: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body.data;
    },
    transaction: async (id: string) => (await api.get<Data<Transaction>>(`/v1/transactions/${id}`)).body.data,
  };
}

export type { Json };
