import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  Kysely,
  SqliteDialect,
  SqliteDriver,
  type Driver,
  type SqliteDatabase,
  type SqliteStatement,
  type ControlledTransaction,
} from 'kysely';
import { privateDir, privateSqliteFile, type LooseFileReport } from '../../shared/files.js';
import { LocalListeners, openNotices, takeNotices } from './notify.js';
import { registerDirectReads, runUnitStatements, type UnitStatements } from './prepared.js';
import type { Tables } from './schema.js';

import { type Db, migrateToLatest, type Store, type Trx } from './store.js';

/**
 * How long a writer waits for another process's write lock (the admin CLI writing while the server
 * runs) before SQLite gives up with SQLITE_BUSY. Our own transactions are milliseconds long, so
 * five seconds is only reached when something is badly wrong.
 */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Prepared statements kept per connection. Kysely compiles each query shape to the same SQL text,
 * so the working set is the number of distinct query shapes in the code (a few hundred at most);
 * the bound stops a pathological caller (e.g. IN lists of varying length) from growing it forever.
 */
const STATEMENT_CACHE_SIZE = 500;

/**
 * better-sqlite3 wrapped so that each SQL text is prepared once and reused. Every statement, from
 * Kysely or a direct read, is fetched here just before it runs, so `counted` sees each one.
 */
function cachingDatabase(raw: Database.Database, counted: () => void): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => raw.close(),
    prepare(text: string): SqliteStatement {
      counted();
      const hit = cache.get(text);
      if (hit) {
        // Refresh recency: Map iteration order is insertion order, so the first key is the oldest.
        cache.delete(text);
        cache.set(text, hit);
        return hit;
      }
      const stmt = raw.prepare(text) as unknown as SqliteStatement;
      cache.set(text, stmt);
      if (cache.size > STATEMENT_CACHE_SIZE) {
        const oldest = cache.keys().next().value;
        if (oldest !== undefined) cache.delete(oldest);
      }
      return stmt;
    },
  };
}

/**
 * Statements run at once on the connection, skipping the driver: the reads outside a write
 * transaction (`registerDirectReads`) and every statement of a unit while it holds the connection
 * in a batch (`runUnitStatements`). Each read's rows are built from SQLite's raw values by a
 * function made for its columns: better-sqlite3 builds a row object one property at a time from
 * C++, which for a payment's 60 columns took longer than the read itself; an object literal of the
 * same keys in the same order (a later duplicate name winning, as there) is the same row, made at
 * once. Statements are kept as `cachingDatabase` keeps them, and counted as they run.
 */
function directStatements(raw: Database.Database, counted: () => void): { read: (text: string, parameters: readonly unknown[]) => unknown[]; run: UnitStatements } {
  type Entry = { stmt: Database.Statement<unknown[], unknown>; row: ((values: unknown[]) => unknown) | undefined };
  const cache = new Map<string, Entry>();
  const entryOf = (text: string): Entry => {
    let entry = cache.get(text);
    if (!entry) {
      const stmt = raw.prepare<unknown[], unknown>(text);
      const names = stmt.reader ? stmt.columns().map((column) => column.name) : [];
      // A literal's "__proto__" key would set the prototype rather than make a field: such a
      // statement keeps better-sqlite3's own rows.
      if (stmt.reader && !names.includes('__proto__')) {
        stmt.raw(true);
        // The names are SQLite's column names, written as JSON string literals.
        entry = { stmt, row: new Function('v', `return {${names.map((name, i) => `${JSON.stringify(name)}: v[${i}]`).join(', ')}};`) as (values: unknown[]) => unknown };
      } else entry = { stmt, row: undefined };
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
      cache.set(text, entry);
    }
    return entry;
  };
  const rowsOf = ({ stmt, row }: Entry, parameters: readonly unknown[]): unknown[] =>
    row ? (stmt.all(...parameters) as unknown[][]).map(row) : stmt.all(...parameters);
  const read = (text: string, parameters: readonly unknown[]): unknown[] => {
    counted();
    return rowsOf(entryOf(text), parameters);
  };
  // What Kysely's SQLite connection answers for the statement, so a caller cannot tell the two apart.
  const run: UnitStatements = (text, parameters) => {
    counted();
    const entry = entryOf(text);
    if (entry.stmt.reader) return { rows: rowsOf(entry, parameters) };
    const { changes, lastInsertRowid } = entry.stmt.run(...parameters);
    return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
  };
  return { read, run };
}

/**
 * Every write transaction starts with BEGIN IMMEDIATE: it takes the write lock up front, so two
 * processes never both read under a deferred transaction and then deadlock upgrading to write.
 */
class ImmediateSqliteDriver extends SqliteDriver implements Driver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #database: SqliteDatabase;
  constructor(database: SqliteDatabase) {
    super({ database });
    this.#database = database;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver({ database: this.#database });
  }
}

export function sqlitePath(dataDir: string): string {
  return join(dataDir, 'pos.db');
}

/** Opens the ledger, owner-only with its -wal and -shm files (shared/files.ts). */
export function openSqliteDatabase(file: string, report?: LooseFileReport): Database.Database {
  privateSqliteFile(file, report);
  const raw = new Database(file);
  raw.pragma('journal_mode = WAL');
  // The bundled build defaults to NORMAL in WAL mode, which can lose acknowledged commits on
  // power loss; a payments ledger acknowledges only what is on disk.
  raw.pragma('synchronous = FULL');
  raw.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  raw.pragma('foreign_keys = ON');
  // What an update or delete frees is zeroed in the pages it writes anyway (no extra I/O): a
  // plaintext value sealed later, or a value under a retired key, does not linger in the file.
  raw.pragma('secure_delete = FAST');
  return raw;
}

/** What one group commit did; reported to `SqliteStoreOptions.onBatch`. */
export interface BatchReport {
  /** Units that ran in the batch's transaction (including ones that failed or must run again). */
  readonly units: number;
  /** Units that threw: rolled back with the whole batch, or alone to their savepoint in a contained batch. */
  readonly failed: number;
  /** Units that had run before a unit threw, sent back to the queue to run again, first in the next batch. */
  readonly requeued: number;
  /** Whether each unit ran inside a savepoint of its own (the batches after one where a unit threw). */
  readonly contained: boolean;
  /** Whether a COMMIT reached the disk (false: BEGIN or COMMIT failed, or the transaction was lost). */
  readonly committed: boolean;
}

export interface SqliteStoreOptions {
  /** Observes every batch; tests and the benchmark count commits with it. */
  onBatch?: (report: BatchReport) => void;
  /**
   * Turn a `transaction` call made inside a running unit (which would wait forever for the batch
   * holding it) into an error. It needs AsyncLocalStorage, which makes Node track every promise
   * (about a tenth of a payment's CPU, measured), so it is for development and tests: on when
   * POS_CHECK_UNITS=1, which the test suite sets.
   */
  checkNesting?: boolean;
  /** Told of the data dir or a database file found open to other users (and tightened if ours). */
  onLooseFile?: LooseFileReport;
  /** False: open the database as it is (`pos migrate status`); default true. */
  migrate?: boolean;
}

/**
 * Units per shared transaction. A batch runs synchronously on the event loop (better-sqlite3 blocks)
 * and holds the write lock, so the cap bounds how long requests and the admin CLI can be stalled by
 * one batch. Measured here (`npm run bench`, group commit table, when units still ran in
 * savepoints): a payment-shaped unit (counter bump, insert, savepoint pair) costs ~70 us inside a
 * batch and the COMMIT's fsync ~0.5 ms, so 128 units stall the loop ~10 ms and the fsync adds ~4 us
 * (5%) to each; doubling the cap would save ~2 us per unit and double the stall. 50 connections
 * never fill it; it matters for bursts (imports, replays).
 */
const MAX_BATCH_UNITS = 128;

/**
 * How often a process with listeners looks whether another process committed to the file (the
 * admin CLI: `pos admin keys roll`, which must end the old key's streams and agent sockets within
 * seconds). Its notices never reach this process, so on such a commit every listener looks again.
 * The look is a stat of the database file and its WAL, which asks the database nothing; only when
 * they changed is data_version read. So an idle process sends no statement, and a second bounds how
 * late another process's commit is seen.
 */
const EXTERNAL_CHECK_MS = 1_000;

/** What a commit by any connection changes: the WAL's (and, after a checkpoint, the database's) size and mtime. */
function fileStamp(file: string): string {
  return [file, `${file}-wal`]
    .map((path) => {
      try {
        const s = statSync(path, { bigint: true });
        return `${s.ino}:${s.size}:${s.mtimeNs}`;
      } catch {
        return '-';
      }
    })
    .join('|');
}

/**
 * Batches run contained after a unit threw, counted from the last batch where one did: a unit that
 * fails once a second keeps every batch contained, one that fails once a minute costs one rollback.
 */
const CONTAINED_BATCHES = 16;

/** Savepoint name for the unit running now; units run one at a time, so one name suffices. */
const UNIT_SAVEPOINT = 'unit' as const;

/** Marks the async context of a running unit (with `checkNesting`); made on first use. */
let insideUnit: AsyncLocalStorage<true> | undefined;

interface QueuedUnit {
  readonly run: (trx: Trx) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit: units that arrive together share one BEGIN IMMEDIATE ... COMMIT, so one fsync
 * acknowledges many of them. A unit that throws gets its error at once, the units after it never
 * see its writes, and every other unit's promise settles only after the COMMIT returned.
 *
 * Units run without a savepoint each: a SAVEPOINT and its RELEASE per unit, and SQLite copying
 * every page a unit touches into its statement journal (which spills to a temporary file past
 * 64 KiB, a few units into a batch), cost a payment create 4.5 statements, ~85 of its ~135 write
 * calls and 3-13 % of the server's instructions (callgrind, the bench's split mode; the write
 * calls' kernel time comes on top). So a unit that throws takes the whole batch down: the batch
 * is rolled back, the thrower rejected, and the units that ran before it, never acknowledged and
 * touching only the database, run again first in the next batch, followed by those not yet
 * started. The batches after a failure are contained (each unit in a savepoint, rolled back alone;
 * see CONTAINED_BATCHES), so a burst of failing units costs each unit at most one run again, and a
 * steady stream of them (refused refunds, say) costs what savepoints cost, no more.
 *
 * A batch starts from `setImmediate`, not at once: better-sqlite3 is synchronous, so a batch started
 * the moment the first unit arrives would run and commit before the event loop could read the next
 * request, and no two units would ever share a commit. Waiting for the check phase lets every
 * request the poll phase just read enqueue its unit first; when idle, that costs one loop turn.
 */
class GroupCommitter {
  readonly #db: Db;
  readonly #inTransaction: () => boolean;
  readonly #onBatch: ((report: BatchReport) => void) | undefined;
  readonly #deliver: (keys: Set<string>) => void;
  readonly #nesting: AsyncLocalStorage<true> | undefined;
  readonly #statements: UnitStatements;
  #queue: QueuedUnit[] = [];
  /** Batches still to run contained (each unit in a savepoint), since a unit last threw. */
  #containedLeft = 0;
  #scheduled = false;
  #closed = false;
  #drained: Promise<void> = Promise.resolve();
  #markDrained: () => void = () => {};

  constructor(
    db: Db,
    inTransaction: () => boolean,
    onBatch: ((report: BatchReport) => void) | undefined,
    checkNesting: boolean,
    deliver: (keys: Set<string>) => void,
    statements: UnitStatements,
  ) {
    this.#db = db;
    this.#statements = statements;
    this.#inTransaction = inTransaction;
    this.#onBatch = onBatch;
    this.#deliver = deliver;
    this.#nesting = checkNesting ? (insideUnit ??= new AsyncLocalStorage<true>()) : undefined;
  }

  transaction<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    const nesting = this.#nesting;
    if (nesting?.getStore()) {
      return Promise.reject(new Error('store.transaction called inside another unit of work: units cannot nest (the connection is held by the outer unit); pass its trx down instead'));
    }
    if (this.#closed) return Promise.reject(new Error('store is closed'));
    return new Promise<T>((resolve, reject) => {
      // Checking nesting, each unit runs in its caller's async context, marked as inside a unit.
      const run = nesting ? AsyncResource.bind((trx: Trx) => nesting.run(true, () => work(trx))) : work;
      this.#queue.push({ run, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  /** Refuses new units, lets the queued ones commit, then resolves. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#drained;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#drained = new Promise((resolve) => (this.#markDrained = resolve));
    setImmediate(() => void this.#next());
  }

  async #next(): Promise<void> {
    const batch = this.#queue.splice(0, MAX_BATCH_UNITS);
    await this.#runBatch(batch);
    this.#scheduled = false;
    // Units that arrived meanwhile (e.g. a request's next step) go in the next batch, again after
    // the event loop has read whatever else is waiting.
    if (this.#queue.length > 0) this.#schedule();
    else this.#markDrained();
  }

  async #runBatch(batch: QueuedUnit[]): Promise<void> {
    const contained = this.#containedLeft > 0;
    if (contained) this.#containedLeft--;
    let trx: ControlledTransaction<Tables>;
    try {
      trx = await this.#db.startTransaction().execute();
    } catch (error) {
      for (const unit of batch) unit.reject(error);
      this.#report({ units: 0, failed: 0, requeued: 0, committed: false, contained });
      return;
    }
    const succeeded: Array<{ unit: QueuedUnit; value: unknown }> = [];
    const notices = new Set<string>();
    let failed = 0;
    for (let i = 0; i < batch.length; i++) {
      const unit = batch[i]!;
      const outcome = await this.#runUnit(trx, unit, contained);
      if (outcome.ok) {
        succeeded.push({ unit, value: outcome.value });
        for (const key of outcome.notices) notices.add(key);
        continue;
      }
      failed++;
      this.#containedLeft = CONTAINED_BATCHES;
      if (outcome.contained) {
        unit.reject(outcome.error);
        continue;
      }
      // The unit's writes cannot be undone alone: it ran without a savepoint, or SQLite abandoned
      // the whole transaction (an OR ROLLBACK conflict, a full disk, an I/O error). The units before
      // it lose their writes through no fault of their own; they were never acknowledged and touch
      // only the database, so they simply run again, first in the next batch, followed by the
      // units not yet started. Queued before the thrower hears of its error, so whatever it does
      // next comes after them.
      this.#queue.unshift(...succeeded.map((s) => s.unit), ...batch.slice(i + 1));
      unit.reject(outcome.error);
      await trx.rollback().execute().catch(() => undefined);
      this.#report({ units: i + 1, failed, requeued: succeeded.length, committed: false, contained });
      return;
    }
    try {
      await trx.commit().execute();
    } catch (error) {
      // Nothing in the batch is on disk: every unit that had succeeded fails with the COMMIT's error.
      await trx.rollback().execute().catch(() => undefined);
      for (const { unit } of succeeded) unit.reject(error);
      this.#report({ units: batch.length, failed, requeued: 0, committed: false, contained });
      return;
    }
    for (const { unit, value } of succeeded) unit.resolve(value);
    // Only now, with the batch on disk, do listeners hear of it; a rolled-back unit's notices went with it.
    if (notices.size > 0) this.#deliver(notices);
    this.#report({ units: batch.length, failed, requeued: 0, committed: true, contained });
  }

  /**
   * Runs one unit on a transaction object of its own (what it binds to its `trx`, its notices and
   * its request's origin, stays its own), inside a savepoint when `contained`. `contained` in the
   * outcome says whether a failure was rolled back to the savepoint with the shared transaction
   * intact; when it is false the transaction must go.
   */
  async #runUnit(
    trx: ControlledTransaction<Tables>,
    unit: QueuedUnit,
    contained: boolean,
  ): Promise<{ ok: true; value: unknown; notices: Set<string> } | { ok: false; error: unknown; contained: boolean }> {
    if (!contained) {
      // A new object on the same connection: no statement is sent.
      const own = trx.withTables<Record<never, never>>();
      openNotices(own);
      const ended = runUnitStatements(own, this.#statements);
      try {
        const value = await unit.run(own);
        return { ok: true, value, notices: takeNotices(own) };
      } catch (error) {
        takeNotices(own);
        return { ok: false, error, contained: false };
      } finally {
        ended();
      }
    }
    let inSavepoint: ControlledTransaction<Tables, [typeof UNIT_SAVEPOINT]>;
    try {
      inSavepoint = await trx.savepoint(UNIT_SAVEPOINT).execute();
    } catch (error) {
      return { ok: false, error, contained: false };
    }
    openNotices(inSavepoint);
    const ended = runUnitStatements(inSavepoint, this.#statements);
    try {
      let value: unknown;
      try {
        value = await unit.run(inSavepoint);
      } finally {
        ended();
      }
      await inSavepoint.releaseSavepoint(UNIT_SAVEPOINT).execute();
      return { ok: true, value, notices: takeNotices(inSavepoint) };
    } catch (error) {
      takeNotices(inSavepoint);
      if (!this.#inTransaction()) return { ok: false, error, contained: false };
      try {
        await inSavepoint.rollbackToSavepoint(UNIT_SAVEPOINT).execute();
        // ROLLBACK TO keeps the savepoint on the stack; release it so the stack stays one deep.
        await inSavepoint.releaseSavepoint(UNIT_SAVEPOINT).execute();
        return { ok: false, error, contained: true };
      } catch {
        return { ok: false, error, contained: false };
      }
    }
  }

  #report(report: BatchReport): void {
    try {
      this.#onBatch?.(report);
    } catch {
      // An observer that throws must not leave the committer stuck with every writer waiting.
    }
  }
}

/** Opens (creating if needed) the embedded SQLite store under the data dir and migrates it. */
export async function openSqliteStore(dataDir: string, options: SqliteStoreOptions = {}): Promise<Store> {
  privateDir(dataDir, options.onLooseFile);
  const file = sqlitePath(dataDir);
  const raw = openSqliteDatabase(file, options.onLooseFile);
  let sent = 0;
  const statements = cachingDatabase(raw, () => void sent++);
  const db = new Kysely<Tables>({ dialect: new ImmediateSqliteDialect(statements) });
  const migrations = options.migrate === false ? undefined : await migrateToLatest(db);
  const direct = directStatements(raw, () => void sent++);
  registerDirectReads(db, (text, parameters) => (raw.inTransaction ? undefined : direct.read(text, parameters)));
  // SQLite bumps data_version when a commit by another connection becomes visible to this one.
  // Read at most once a millisecond: at thousands of requests a second the pragma showed up.
  const dataVersion = raw.prepare('pragma data_version').pluck();
  let version = 0;
  let readAt = -Infinity;
  const externalChanges = (): number => {
    const now = performance.now();
    if (now - readAt >= 1) {
      sent++;
      version = dataVersion.get() as number;
      readAt = now;
    }
    return version;
  };
  let externalCheck: NodeJS.Timeout | undefined;
  const listeners = new LocalListeners(() => {
    let seen = externalChanges();
    let stamp = fileStamp(file);
    externalCheck = setInterval(() => {
      const files = fileStamp(file);
      if (files === stamp) return;
      stamp = files;
      const now = externalChanges();
      if (now !== seen) listeners.deliverAll();
      seen = now;
    }, EXTERNAL_CHECK_MS);
    externalCheck.unref();
  });
  const committer = new GroupCommitter(db, () => raw.inTransaction, options.onBatch, options.checkNesting ?? false, (keys) => listeners.deliver(keys), direct.run);
  return {
    dialect: 'sqlite',
    db,
    ...(migrations ? { migrations } : {}),
    transaction: (work) => committer.transaction(work),
    externalChanges,
    readNow: (text, parameters) => statements.prepare(text).all(parameters) as unknown[],
    notifications: listeners,
    statements: () => sent,
    close: async () => {
      clearInterval(externalCheck);
      await committer.close();
      await db.destroy();
    },
  };
}
