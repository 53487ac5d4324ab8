import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sqlitePath } from '../server/db/sqlite.js';
import { createMerchant, startPos } from './processes.js';

/**
 * Figures that are counts, not rates: what a payment costs in processor calls and in bytes of the
 * store. They do not depend on the machine's load, so one measurement per run is enough.
 */

/** Requests about payments and readers, by endpoint: not the platform's balance (readiness) nor account reads. */
async function paymentCalls(simulatorUrl: string): Promise<Map<string, number>> {
  const report = (await (await fetch(`${simulatorUrl}/_sim/rate_limits`)).json()) as { endpoints: { endpoint: string; requests: number }[] };
  const about = /\/v1\/(payment_intents|charges|terminal|test_helpers\/terminal)/;
  return new Map(report.endpoints.filter((e) => about.test(e.endpoint)).map((e) => [e.endpoint, e.requests]));
}

function total(before: Map<string, number>, after: Map<string, number>): number {
  let sum = 0;
  for (const [endpoint, count] of after) sum += count - (before.get(endpoint) ?? 0);
  return sum;
}

/** Time for the processor's events about a payment to be delivered and handled: the simulator sends them within milliseconds. */
const EVENTS_SETTLE_MS = 1_500;

async function call<T>(url: string, key: string, method: 'GET' | 'POST', body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(url, {
    method,
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as T };
}

export interface ProcessorCalls {
  card: number;
  terminal: number;
}

/**
 * Processor calls per payment on a running `pos server` with its embedded simulator: an online card
 * payment confirmed on creation, and a reader payment from create to the simulated tap, each
 * counted once the processor's events about it have been handled.
 */
export async function processorCallsPerPayment(posUrl: string, secretKey: string): Promise<ProcessorCalls> {
  const merchant = await call<{ data: { processor: { api_base: string } } }>(`${posUrl}/v1/merchant`, secretKey, 'GET');
  const sim = merchant.body.data.processor.api_base;
  // The connected account is made and read on the first payment: not a per-payment cost.
  await call(`${posUrl}/v1/transactions`, secretKey, 'POST', { amount: 100, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
  await call(`${posUrl}/v1/terminal/locations`, secretKey, 'POST', { display_name: 'Bench counter', address: { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' } });
  const reader = await call<{ data: { id: string; processor_terminal_id: string } }>(`${posUrl}/v1/terminals`, secretKey, 'POST', { name: 'Bench till', registration_code: 'simulated-wpe' });
  await sleep(EVENTS_SETTLE_MS);

  let before = await paymentCalls(sim);
  const card = await call<{ data: { status: string } }>(`${posUrl}/v1/transactions`, secretKey, 'POST', { amount: 4750, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
  if (card.status !== 201 || card.body.data.status !== 'succeeded') throw new Error(`card payment answered ${card.status}`);
  await sleep(EVENTS_SETTLE_MS);
  const cardCalls = total(before, await paymentCalls(sim));

  before = await paymentCalls(sim);
  const created = await call<{ data: { id: string; payment_intent_id: string } }>(`${posUrl}/v1/terminal/create-payment`, secretKey, 'POST', { amount: 1500, terminal_id: reader.body.data.id });
  if (created.status !== 201) throw new Error(`terminal create-payment answered ${created.status}`);
  await call(`${posUrl}/v1/terminal/process-payment`, secretKey, 'POST', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader.body.data.processor_terminal_id });
  await call(`${posUrl}/v1/terminal/simulate-payment`, secretKey, 'POST', { reader_id: reader.body.data.processor_terminal_id });
  for (let i = 0; i < 50; i++) {
    const txn = await call<{ data: { status: string } }>(`${posUrl}/v1/transactions/${created.body.data.id}`, secretKey, 'GET');
    if (txn.body.data.status === 'succeeded') break;
    await sleep(100);
  }
  await sleep(EVENTS_SETTLE_MS);
  return { card: cardCalls, terminal: total(before, await paymentCalls(sim)) };
}

/** Bytes of every table and index in a stopped server's SQLite store, WAL folded in first, by name. */
export function storeBytesByObject(file: string): Map<string, number> {
  const db = new Database(file);
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
    const rows = db.prepare('select name, sum(pgsize) as bytes from dbstat group by name').all() as { name: string; bytes: number }[];
    return new Map(rows.map((r) => [r.name, r.bytes]));
  } finally {
    db.close();
  }
}

export interface BytesPerPayment {
  bytesPerPayment: number;
  /** Growth per payment of each table and index that grew, largest first. */
  byObject: { name: string; bytesPerPayment: number }[];
}

/**
 * Bytes in pos.db per payment: a fresh store whose merchant has made one payment (its connected
 * account, first rows of every table), then `count` more, each measured on the stopped store.
 * Pages are whole (4 KiB), so a few hundred payments are needed for a figure that does not move.
 */
export async function measureBytesPerPayment(count: number, placement: { cpu: number; cores: number }): Promise<BytesPerPayment> {
  const dir = mkdtempSync(join(tmpdir(), 'pos-bench-bytes-'));
  try {
    const shop = createMerchant(dir, 'Bench Bytes');
    let server = await startPos(dir, placement.cpu, placement.cores);
    try {
      await createPayments(server.url, shop.secretKey, 1, 1);
    } finally {
      await server.stop();
    }
    const before = storeBytesByObject(sqlitePath(dir));
    server = await startPos(dir, placement.cpu, placement.cores);
    try {
      await createPayments(server.url, shop.secretKey, count);
    } finally {
      await server.stop();
    }
    const after = storeBytesByObject(sqlitePath(dir));
    let grown = 0;
    const byObject: { name: string; bytesPerPayment: number }[] = [];
    for (const [name, bytes] of after) {
      const delta = bytes - (before.get(name) ?? 0);
      grown += delta;
      if (delta !== 0) byObject.push({ name, bytesPerPayment: Math.round(delta / count) });
    }
    for (const [name, bytes] of before) if (!after.has(name)) grown -= bytes;
    byObject.sort((a, b) => b.bytesPerPayment - a.bytesPerPayment);
    return { bytesPerPayment: Math.round(grown / count), byObject };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Makes `count` card payments through the API, `inFlight` at a time. */
export async function createPayments(posUrl: string, secretKey: string, count: number, inFlight = 8): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      next++;
      // With an Idempotency-Key, as every client that retries sends one: its stored answer is part of the cost.
      const res = await fetch(`${posUrl}/v1/transactions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${secretKey}`, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
        body: JSON.stringify({ amount: 4750, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, description: 'Bench payment' }),
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`create answered ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
}
