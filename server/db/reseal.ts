import type { Logger } from 'pino';
import { sql } from 'kysely';
import { isSealed, keyIdOf } from '../../shared/crypto/keyring.js';
import { LEGACY_SEALED_SETTING, SEALED_COLUMNS, type SealedColumn, type StoreKeyring, switchPrimaryKey } from './encryption.js';
import type { Store } from './store.js';
import { unpackJson } from './packed-json.js';

/**
 * Sealing what is stored the old way, in bounded batches while the server keeps serving: legacy
 * plaintext at start (values written before encryption at rest), and every value under an older
 * main key during a rotation (`pos admin rotate-master-key`). Each batch is one transaction whose
 * updates are conditional on the value still being the one read, so a write of the running server
 * in between is never overwritten.
 */

/**
 * Rows per transaction. 500 short updates hold SQLite's write lock for a few milliseconds (the
 * server's own units wait no longer than for a busy moment) and cost PostgreSQL one brief
 * transaction, while a million rows still take only 2,000 of them.
 */
export const RESEAL_BATCH = 500;

/**
 * JSON that names a customer's details: a customer object, or a payment's receipt email, a
 * checkout's or link's customer email or name. Columns sealed only when they hold such details (the
 * event log, idempotent requests) are sealed when written by the code that knows; this finds the
 * ones written in plaintext before.
 */
const PERSONAL_JSON = /"(?:receipt_email|customer_email|customer_name)":"|"object":"customer"/;

interface ColumnSpec {
  column: SealedColumn;
  table: string;
  name: string;
  /** The row key the value is bound to. */
  key: string;
  /** Sealed only when the value holds personal details; other columns are sealed whenever not null. */
  personalOnly: boolean;
}

const SPECS: readonly ColumnSpec[] = SEALED_COLUMNS.map((column) => {
  const [table, name] = column.split('.') as [string, string];
  return { column, table, name, key: table === 'processor_settings' ? 'name' : 'id', personalOnly: table === 'events' || table === 'idempotency_keys' };
});

/** Whether a plaintext value of the column is one that is kept sealed. */
function keptSealed(spec: ColumnSpec, plaintext: string): boolean {
  return !spec.personalOnly || PERSONAL_JSON.test(unpackJson(plaintext));
}

export interface ResealOptions {
  batch?: number;
  /** Checked between batches: a server that is closing stops the pass. */
  stopped?: () => boolean;
}

/** Seals again, under the primary key, every value of `spec` that `wants`; returns how many changed. */
async function resealColumn(store: Store, cipher: StoreKeyring, spec: ColumnSpec, wants: (stored: string) => boolean, options: ResealOptions): Promise<number> {
  const batch = options.batch ?? RESEAL_BATCH;
  const key = sql.ref(spec.key);
  const value = sql.ref(spec.name);
  const table = sql.table(spec.table);
  let after = '';
  let changed = 0;
  for (;;) {
    // Key ranges, not a filter: each read touches `batch` rows however few need sealing.
    const { rows } = await sql<{ k: string; v: string | null }>`select ${key} as k, ${value} as v from ${table} where ${key} > ${after} order by ${key} limit ${batch}`.execute(store.db);
    const last = rows[rows.length - 1];
    if (!last) break;
    after = last.k;
    const todo = rows.filter((row): row is { k: string; v: string } => row.v !== null && wants(row.v));
    if (todo.length > 0) {
      changed += await store.transaction(async (trx) => {
        let n = 0;
        for (const row of todo) {
          const next = cipher.seal(spec.column, row.k, cipher.open(spec.column, row.k, row.v));
          const result = await sql`update ${table} set ${value} = ${next} where ${key} = ${row.k} and ${value} = ${row.v}`.execute(trx);
          n += Number(result.numAffectedRows ?? 0n);
        }
        return n;
      });
    }
    if (rows.length < batch || options.stopped?.()) break;
  }
  return changed;
}

/**
 * On SQLite, copies the log into the file and empties it: the log's older page images, with the
 * values just replaced, are dropped rather than left until overwritten. Best effort: a reader still
 * on an old snapshot makes it stop short, and the next checkpoint finishes.
 */
async function truncateLog(store: Store): Promise<void> {
  if (store.dialect === 'sqlite') await sql`pragma wal_checkpoint(TRUNCATE)`.execute(store.db);
}

/**
 * Seals the values stored in plaintext before encryption at rest, column by column; once all are,
 * the database says so and later starts skip the scan. Reading a plaintext value works meanwhile.
 */
export async function sealLegacyValues(store: Store, cipher: StoreKeyring, options: ResealOptions & { now: () => number; logger?: Logger | undefined }): Promise<number> {
  const done = await store.db.selectFrom('encryption_settings').select('value').where('name', '=', LEGACY_SEALED_SETTING).executeTakeFirst();
  if (done) return 0;
  let sealed = 0;
  for (const spec of SPECS) {
    sealed += await resealColumn(store, cipher, spec, (stored) => !isSealed(stored) && keptSealed(spec, stored), options);
    if (options.stopped?.()) return sealed;
  }
  const value = String(options.now());
  await store.db.insertInto('encryption_settings').values({ name: LEGACY_SEALED_SETTING, value }).onConflict((oc) => oc.column('name').doNothing()).execute();
  if (sealed > 0) {
    await truncateLog(store);
    options.logger?.info({ sealed }, 'sealed the values stored in plaintext before encryption at rest');
  }
  return sealed;
}

/** Every value not under the primary key (older keys, and plaintext that is kept sealed) sealed under it; counts by column. */
export async function resealAll(store: Store, cipher: StoreKeyring, options: ResealOptions = {}): Promise<Partial<Record<SealedColumn, number>>> {
  const counts: Partial<Record<SealedColumn, number>> = {};
  for (const spec of SPECS) {
    const primary = cipher.primaryId;
    const n = await resealColumn(store, cipher, spec, (stored) => (isSealed(stored) ? keyIdOf(stored) !== primary : keptSealed(spec, stored)), options);
    if (n > 0) counts[spec.column] = n;
  }
  return counts;
}

/**
 * How long after the switch a rotation keeps looking for values sealed under the old key. Every
 * process hears of the switch within milliseconds (a notice, or on SQLite before its next seal),
 * and a unit that sealed just before commits within milliseconds too; 5 s also covers an instance
 * whose notification connection was being re-made (server/db/postgres.ts retries within 5 s).
 */
export const ROTATION_SETTLE_MS = 5_000;

/** Passes after the settle time that may still find old-key values before the rotation gives up. */
const STUBBORN_PASSES = 3;

export interface RotationOptions extends ResealOptions {
  now: () => number;
  settleMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /** Told after each pass. */
  onPass?: (resealed: number) => void;
}

export interface RotationReport {
  keyId: string;
  retired: string[];
  resealed: Partial<Record<SealedColumn, number>>;
}

/**
 * Rotates to main key `keyId` (held by the cipher's keyring): records it as primary, so every
 * process seals under it from then on, then seals every value under an older key again, pass
 * after pass until one finds none at least `settleMs` after the switch; then the older keys are
 * retired: no value needs them any more.
 */
export async function rotateMainKey(store: Store, cipher: StoreKeyring, keyId: string, options: RotationOptions): Promise<RotationReport> {
  const settleMs = options.settleMs ?? ROTATION_SETTLE_MS;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  await store.transaction((trx) => switchPrimaryKey(trx, cipher.keyring, keyId, options.now()));
  if (!cipher.keyring.usePrimary(keyId)) throw new Error(`main key ${keyId} is not loaded`);
  const switchedAt = options.now();
  const resealed: Partial<Record<SealedColumn, number>> = {};
  let stubborn = 0;
  for (;;) {
    const counts = await resealAll(store, cipher, options);
    let n = 0;
    for (const [column, count] of Object.entries(counts) as [SealedColumn, number][]) {
      resealed[column] = (resealed[column] ?? 0) + count;
      n += count;
    }
    options.onPass?.(n);
    const settled = options.now() - switchedAt >= settleMs;
    if (n === 0 && settled) break;
    if (n > 0 && settled && ++stubborn > STUBBORN_PASSES) {
      throw new Error(
        `values are still being sealed under an older main key ${settleMs} ms after the switch: some process did not switch to ${keyId} (it does not hold the key, or hears nothing of the database). Give it the key and run the command again (docs/keys.md)`,
      );
    }
    if (n === 0) await sleep(Math.max(0, settleMs - (options.now() - switchedAt)));
  }
  const retired = await store.db.selectFrom('encryption_keys').select('id').where('id', '!=', keyId).where('retired_at', 'is', null).execute();
  if (retired.length > 0) {
    await store.db
      .updateTable('encryption_keys')
      .set({ retired_at: options.now() })
      .where('id', 'in', retired.map((r) => r.id))
      .execute();
  }
  await truncateLog(store);
  return { keyId, retired: retired.map((r) => r.id), resealed };
}
