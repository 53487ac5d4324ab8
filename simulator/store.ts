import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../shared/config.js';
import { describeKeySource, makeDefaultKeyFile } from '../shared/crypto/key-source.js';
import { isSealed, keyIdOf, type Keyring } from '../shared/crypto/keyring.js';
import { privateDir, privateSqliteFile, type LooseFileReport } from '../shared/files.js';

/**
 * Persistence of the simulator: one SQLite file in the data directory. Everything a restart must not
 * lose lives here — Stripe objects, idempotent responses, timers (authorisation windows, ACH
 * settlements, funds becoming available, disputes, payouts) and webhook deliveries — so the process
 * can be killed at any point.
 *
 * Objects are stored as the JSON Stripe would return (`body`) plus simulator-only state that never
 * goes on the wire (`internal`). better-sqlite3 is synchronous: a request handler runs from start to
 * finish inside one transaction without yielding, which is what makes concurrent duplicate
 * idempotent requests create one object.
 *
 * What would let a copy of the file forge or read the platform's traffic is sealed under the main
 * key (shared/crypto/keyring.ts, docs/keys.md): the platform keys, webhook endpoints' signing
 * secrets (their `internal`), and the stored answers of webhook endpoint requests (which show a
 * new endpoint's secret). The file's key check says which key that is.
 */

/** Which side of Stripe an object lives on: test or live mode, platform (`null`) or a connected account. */
export interface Scope {
  livemode: boolean;
  account: string | null;
}

export interface StoredObject<TBody, TInternal> {
  seq: number;
  id: string;
  type: string;
  livemode: boolean;
  account: string | null;
  body: TBody;
  internal: TInternal;
}

export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

export interface PageRequest {
  limit: number;
  startingAfter?: string | undefined;
  endingBefore?: string | undefined;
}

/** Equality filters on top-level body fields (`payment_intent`, `location`, `status`, …). */
export type Filters = Record<string, string | number | boolean | null | undefined>;

export interface BalanceTotal {
  currency: string;
  status: string;
  sourceType: string;
  net: number;
}

export interface TimerRow {
  id: string;
  kind: string;
  dueAt: number;
  payload: unknown;
}

export type DeliveryStatus = 'pending' | 'held' | 'delivered' | 'failed' | 'dropped';

export interface DeliveryRow {
  id: number;
  eventId: string;
  endpointId: string;
  status: DeliveryStatus;
  attempts: number;
  nextAt: number;
  ord: number;
  lastError: string | null;
}

export interface IdempotentResponse {
  method: string;
  path: string;
  paramsHash: string;
  status: number;
  body: string;
}

/**
 * How long a stored idempotent response is replayed. 24 hours is Stripe's documented retention:
 * after that a key may be reused for a new request.
 */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

const SCHEMA = `
create table if not exists meta (key text primary key, value text not null);
create table if not exists objects (
  seq integer primary key autoincrement,
  id text not null unique,
  type text not null,
  livemode integer not null,
  account text,
  body text not null,
  internal text not null
);
create index if not exists objects_scope on objects (type, livemode, account, seq);
create table if not exists idempotency (
  scope text not null,
  key text not null,
  method text not null,
  path text not null,
  params_hash text not null,
  status integer not null,
  body text not null,
  created_at integer not null,
  primary key (scope, key)
);
create table if not exists timers (id text primary key, kind text not null, due_at integer not null, payload text not null);
create index if not exists timers_due on timers (due_at, id);
create table if not exists deliveries (
  id integer primary key autoincrement,
  event_id text not null,
  endpoint_id text not null,
  status text not null,
  attempts integer not null default 0,
  next_at integer not null,
  ord integer not null default 0,
  last_error text
);
create index if not exists deliveries_due on deliveries (status, next_at, ord);
`;

interface ObjectDbRow {
  seq: number;
  id: string;
  type: string;
  livemode: number;
  account: string | null;
  body: string;
  internal: string;
}

interface DeliveryDbRow {
  id: number;
  event_id: string;
  endpoint_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_at: number;
  ord: number;
  last_error: string | null;
}

/** Meta values kept sealed. */
const SEALED_META = new Set(['platform_keys']);
/** Object types whose `internal` is kept sealed: a webhook endpoint's holds its signing secret. */
const SEALED_TYPES = new Set(['webhook_endpoint']);
/** Requests whose stored answers are kept sealed: creating an endpoint answers with its secret. */
const SEALED_PATH = /^\/v1\/webhook_endpoints/;
const KEY_CHECK_META = 'key_check';
const KEY_CHECK = 'pos simulator key check';

/** Where a sealed meta value is bound to (its associated data). */
export const metaPlace = (key: string) => `simulator.meta.value:${key}`;
const internalPlace = (id: string) => `simulator.objects.internal:${id}`;
const idempotencyPlace = (scope: string, key: string) => `simulator.idempotency.body:${scope}:${key}`;

interface TimerDbRow {
  id: string;
  kind: string;
  due_at: number;
  payload: string;
}

function toTimer(row: TimerDbRow): TimerRow {
  return { id: row.id, kind: row.kind, dueAt: row.due_at, payload: JSON.parse(row.payload) as unknown };
}

function toDelivery(row: DeliveryDbRow): DeliveryRow {
  return {
    id: row.id,
    eventId: row.event_id,
    endpointId: row.endpoint_id,
    status: row.status,
    attempts: row.attempts,
    nextAt: row.next_at,
    ord: row.ord,
    lastError: row.last_error,
  };
}

/** A group commit in progress: who waits for it, and why it failed if it did. */
interface Batch {
  settled: ((failure: unknown) => void)[];
  failure: unknown;
  finished: boolean;
}

/** Objects `peek` keeps at most; past it, it starts over (a platform's connected accounts, mostly). */
const PEEKED = 1_000;

/** Top-level JSON field names used in filters come from our code, never from a request. */
const FIELD_NAME = /^[a-z_]+$/;

export class Store {
  private readonly db: Database.Database;
  /**
   * What `all` read, by type, until a write touches that type; what the meta table holds, by key,
   * until it is written. Every event reads the webhook endpoints and the delivery faults: from
   * here, rather than a query, a parse and a secret opened per endpoint. One process holds the
   * state (lock.ts), so its own writes are the only ones; a rolled-back transaction forgets both.
   */
  readonly #allOf = new Map<string, readonly StoredObject<unknown, unknown>[]>();
  readonly #meta = new Map<string, string | undefined>();
  /**
   * What `peek` read, by id, until a write touches that object (see PEEKED); a rolled-back
   * transaction forgets them all, as it does the two above.
   */
  readonly #peeked = new Map<string, StoredObject<unknown, unknown>>();

  /**
   * Opens the file and checks the main key against it: a key that is not the one its values are
   * sealed under is a ConfigError, never garbage. Values not under the primary key (plaintext of
   * an older simulator, an older key after a rotation) are sealed again. `onLooseFile` hears of the
   * data dir or a database file found open to other users (tightened if ours).
   */
  constructor(
    dataDir: string,
    private readonly keyring: Keyring,
    onLooseFile?: LooseFileReport,
  ) {
    // Platform keys, customers and payments: owner-only.
    const file = join(dataDir, 'simulator.db');
    privateDir(dataDir, onLooseFile);
    privateSqliteFile(file, onLooseFile);
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    // NORMAL in WAL mode survives a process crash or restart (the promise the simulator makes);
    // only a power cut can drop the last commits, which a stand-in for Stripe may lose, unlike
    // our ledger (FULL). FULL here cost one fsync per processor call on the payment path.
    this.db.pragma('synchronous = NORMAL');
    // Sealed values replaced (plaintext of an older simulator, an old key's) leave no copy in freed space.
    this.db.pragma('secure_delete = FAST');
    this.db.exec(SCHEMA);
    try {
      this.#checkKey();
      this.resealAll();
    } catch (err) {
      this.db.close();
      throw err;
    }
  }

  #checkKey(): void {
    const check = this.#rawMeta(KEY_CHECK_META);
    if (check === undefined) {
      if (this.keyring.size === 0) {
        // Made here, or by a process starting at the same moment: read it either way.
        makeDefaultKeyFile(this.keyring.source);
        this.keyring.reload();
      }
      if (this.keyring.size === 0) throw new ConfigError(`no main key in ${describeKeySource(this.keyring.source)}`);
      return;
    }
    const id = keyIdOf(check) ?? '?';
    if (!this.keyring.has(id)) {
      const source = describeKeySource(this.keyring.source);
      throw new ConfigError(
        this.keyring.size === 0
          ? `no main key: the simulator's secrets are encrypted under main key ${id}, and ${source} does not exist. Give that key with POS_MASTER_KEY or --master-key-file, or restore the key file from its backup (docs/keys.md)`
          : `wrong main key: the simulator's secrets are encrypted under main key ${id}, but ${source} holds ${this.keyring.ids().join(', ')}. Start with the key they were encrypted with (docs/keys.md)`,
      );
    }
    let opened: string | undefined;
    try {
      opened = this.keyring.open(metaPlace(KEY_CHECK_META), check);
    } catch {
      opened = undefined;
    }
    if (opened !== KEY_CHECK) throw new ConfigError(`main key ${id} does not open the simulator store's check of it: the key or the file was altered`);
  }

  /**
   * Seals again, under the keyring's primary key, every sealed value that is not under it or is
   * still plaintext; returns how many. A handful of rows: the platform keys and the endpoints.
   */
  resealAll(): number {
    const primary = this.keyring.primaryId;
    const stale = (stored: string) => !isSealed(stored) || keyIdOf(stored) !== primary;
    return this.transaction(() => {
      let n = 0;
      const check = this.#rawMeta(KEY_CHECK_META);
      if (check === undefined || stale(check)) this.#setRawMeta(KEY_CHECK_META, this.keyring.seal(metaPlace(KEY_CHECK_META), KEY_CHECK));
      for (const key of SEALED_META) {
        const stored = this.#rawMeta(key);
        if (stored === undefined || !stale(stored)) continue;
        this.#setRawMeta(key, this.keyring.seal(metaPlace(key), this.keyring.open(metaPlace(key), stored)));
        n++;
      }
      for (const type of SEALED_TYPES) {
        for (const row of this.#prepare('select id, internal from objects where type = ?').all(type) as { id: string; internal: string }[]) {
          if (!stale(row.internal)) continue;
          const next = this.keyring.seal(internalPlace(row.id), this.keyring.open(internalPlace(row.id), row.internal));
          this.#allOf.delete(type);
          this.#peeked.delete(row.id);
          this.#prepare('update objects set internal = ? where id = ?').run(next, row.id);
          n++;
        }
      }
      for (const row of this.#prepare('select scope, key, path, body from idempotency').all() as { scope: string; key: string; path: string; body: string }[]) {
        if (!SEALED_PATH.test(row.path) || !stale(row.body)) continue;
        const place = idempotencyPlace(row.scope, row.key);
        this.#prepare('update idempotency set body = ? where scope = ? and key = ?').run(this.keyring.seal(place, this.keyring.open(place, row.body)), row.scope, row.key);
        n++;
      }
      return n;
    });
  }

  #toObject<TBody, TInternal>(row: ObjectDbRow): StoredObject<TBody, TInternal> {
    const internal = SEALED_TYPES.has(row.type) ? this.keyring.open(internalPlace(row.id), row.internal) : row.internal;
    return {
      seq: row.seq,
      id: row.id,
      type: row.type,
      livemode: row.livemode === 1,
      account: row.account,
      body: JSON.parse(row.body) as TBody,
      internal: JSON.parse(internal) as TInternal,
    };
  }

  #internalText(type: string, id: string, internal: unknown): string {
    const text = JSON.stringify(internal);
    return SEALED_TYPES.has(type) ? this.keyring.seal(internalPlace(id), text) : text;
  }

  /** Statements by SQL text: preparing costs more than running most of them. Filter queries vary, so it is bounded. */
  readonly #statements = new Map<string, Database.Statement>();

  #prepare(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      if (this.#statements.size >= 200) this.#statements.clear();
      statement = this.db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  close(): void {
    if (this.#batch) this.#finish(this.#batch);
    this.#statements.clear();
    this.db.close();
  }

  /**
   * The open group commit: one write transaction that the units of requests arriving in the same
   * turn of the event loop share, committed once they have all run. A commit writes the tail
   * pages of every table and index it touched, and the units of one batch mostly touch the same
   * ones, so a shared commit writes each of them once rather than once per request.
   */
  #batch: Batch | undefined;
  #inUnit = false;

  /**
   * Runs `work` as one unit of the open batch, opening one if there is none, inside a savepoint: a
   * throw takes back this unit's writes and no one else's. Nothing the unit read or wrote may reach
   * a caller until `settled` is called, once the batch has committed (with `undefined`) or failed
   * to (with why): after this turn's units have run, or sooner if work outside requests takes a
   * transaction of its own. A unit inside a unit joins it.
   */
  unit<T>(work: () => T, settled: (failure: unknown) => void): T {
    if (this.#inUnit) return work();
    let batch = this.#batch;
    if (!batch) {
      try {
        if (this.db.inTransaction) throw new Error('a request unit cannot start inside a transaction');
        this.#prepare('begin immediate').run();
      } catch (error) {
        setImmediate(() => settled(error));
        throw error;
      }
      const opened: Batch = { settled: [], failure: undefined, finished: false };
      this.#batch = batch = opened;
      setImmediate(() => this.#finish(opened));
    }
    batch.settled.push(settled);
    this.#prepare('savepoint unit').run();
    this.#inUnit = true;
    try {
      const result = work();
      this.#prepare('release unit').run();
      return result;
    } catch (error) {
      this.#forget();
      if (this.db.inTransaction) {
        this.#prepare('rollback to unit').run();
        this.#prepare('release unit').run();
      } else {
        // SQLite gave up the whole transaction (a full disk, an I/O error): the units before this
        // one are gone with it, and their callers must hear so.
        this.#batch = undefined;
        batch.failure = error;
      }
      throw error;
    } finally {
      this.#inUnit = false;
    }
  }

  /**
   * Resolves once what has been written is durable and the requests that wrote it are answered: at
   * once if no batch is open, else after the open one has committed and told its units. For what
   * leaves the process on its own (a webhook), which must neither tell of a request a crash could
   * undo nor overtake that request's answer.
   */
  durable(): Promise<void> {
    const batch = this.#batch;
    if (!batch || this.#inUnit) return Promise.resolve();
    return new Promise((resolve) => batch.settled.push(() => resolve()));
  }

  /** Commits `batch` if it is still open, then tells each of its units how it went, once. */
  #finish(batch: Batch): void {
    if (batch.finished) return;
    batch.finished = true;
    if (this.#batch === batch) {
      this.#batch = undefined;
      try {
        this.#prepare('commit').run();
      } catch (error) {
        if (this.db.inTransaction) this.db.exec('rollback');
        this.#forget();
        batch.failure = error;
      }
    }
    for (const settled of batch.settled) settled(batch.failure);
  }

  /** What the remembered reads hold may be what a rolled-back write left: read it again. */
  #forget(): void {
    this.#allOf.clear();
    this.#meta.clear();
    this.#peeked.clear();
  }

  /**
   * Runs `work` atomically; a throw rolls every write back. Nested calls join the outer
   * transaction. An open batch commits first, so work outside requests (timers, deliveries, the
   * control API) keeps a transaction of its own that is durable when it returns.
   */
  transaction<T>(work: () => T): T {
    if (this.#batch && !this.#inUnit) this.#finish(this.#batch);
    if (this.db.inTransaction) return work();
    try {
      return this.db.transaction(work).immediate();
    } catch (error) {
      this.#forget();
      throw error;
    }
  }

  #rawMeta(key: string): string | undefined {
    if (this.#meta.has(key)) return this.#meta.get(key);
    const row = this.#prepare('select value from meta where key = ?').get(key) as { value: string } | undefined;
    this.#meta.set(key, row?.value);
    return row?.value;
  }

  #setRawMeta(key: string, value: string): void {
    this.#meta.delete(key);
    this.#prepare('insert into meta (key, value) values (?, ?) on conflict(key) do update set value = excluded.value').run(key, value);
  }

  getMeta(key: string): string | undefined {
    const stored = this.#rawMeta(key);
    return stored !== undefined && SEALED_META.has(key) ? this.keyring.open(metaPlace(key), stored) : stored;
  }

  setMeta(key: string, value: string): void {
    this.#setRawMeta(key, SEALED_META.has(key) ? this.keyring.seal(metaPlace(key), value) : value);
  }

  insert<TBody extends { id: string }, TInternal>(type: string, scope: Scope, body: TBody, internal: TInternal): StoredObject<TBody, TInternal> {
    this.#allOf.delete(type);
    this.#peeked.delete(body.id);
    const info = this.#prepare('insert into objects (id, type, livemode, account, body, internal) values (?, ?, ?, ?, ?, ?)')
      .run(body.id, type, scope.livemode ? 1 : 0, scope.account, JSON.stringify(body), this.#internalText(type, body.id, internal));
    return { seq: Number(info.lastInsertRowid), id: body.id, type, livemode: scope.livemode, account: scope.account, body, internal };
  }

  /** Any object by id, whatever its scope (ids are globally unique). */
  find<TBody, TInternal>(id: string): StoredObject<TBody, TInternal> | undefined {
    const row = this.#prepare('select * from objects where id = ?').get(id) as ObjectDbRow | undefined;
    return row ? this.#toObject<TBody, TInternal>(row) : undefined;
  }

  /**
   * `find` for reading only: the same object is handed to every caller until that object is
   * written, so read it, never change it. For what most requests read and few write, and that
   * costs a parse each time: a Connect account, whose JSON is the largest a payment reads.
   */
  peek<TBody, TInternal>(id: string): StoredObject<TBody, TInternal> | undefined {
    let object = this.#peeked.get(id);
    if (!object) {
      object = this.find(id);
      if (!object) return undefined;
      if (this.#peeked.size >= PEEKED) this.#peeked.clear();
      this.#peeked.set(id, object);
    }
    return object as StoredObject<TBody, TInternal>;
  }

  save<TBody, TInternal>(object: StoredObject<TBody, TInternal>): void {
    this.#allOf.delete(object.type);
    this.#peeked.delete(object.id);
    this.#prepare('update objects set body = ?, internal = ? where id = ?')
      .run(JSON.stringify(object.body), this.#internalText(object.type, object.id, object.internal), object.id);
  }

  /**
   * One webhook of an event was delivered: its `pending_webhooks` goes down by one (never below
   * zero), in place, without reading the event's body into objects and writing it back.
   */
  eventDelivered(id: string): void {
    this.#allOf.delete('event');
    this.#peeked.delete(id);
    this.#prepare(`update objects set body = json_set(body, '$.pending_webhooks', max(0, json_extract(body, '$.pending_webhooks') - 1)) where id = ? and type = 'event'`).run(id);
  }

  remove(id: string): void {
    this.#allOf.clear();
    this.#peeked.delete(id);
    this.#prepare('delete from objects where id = ?').run(id);
  }

  /** Objects of one type in one scope, newest first, paginated the way Stripe lists are. */
  list<TBody, TInternal>(type: string, scope: Scope, filters: Filters, page: PageRequest): Page<StoredObject<TBody, TInternal>> {
    const where = ['type = ?', 'livemode = ?', 'account is ?'];
    const args: (string | number | null)[] = [type, scope.livemode ? 1 : 0, scope.account];
    for (const [field, value] of Object.entries(filters)) {
      if (value === undefined) continue;
      if (!FIELD_NAME.test(field)) throw new Error(`bad filter field ${field}`);
      if (value === null) {
        where.push(`json_extract(body, '$.${field}') is null`);
      } else {
        where.push(`json_extract(body, '$.${field}') = ?`);
        args.push(typeof value === 'boolean' ? (value ? 1 : 0) : value);
      }
    }
    let order = 'desc';
    const cursorId = page.startingAfter ?? page.endingBefore;
    if (cursorId !== undefined) {
      const cursor = this.#prepare('select seq from objects where id = ?').get(cursorId) as { seq: number } | undefined;
      if (cursor) {
        where.push(page.startingAfter !== undefined ? 'seq < ?' : 'seq > ?');
        args.push(cursor.seq);
      }
      if (page.endingBefore !== undefined && page.startingAfter === undefined) order = 'asc';
    }
    const rows = this.#prepare(`select * from objects where ${where.join(' and ')} order by seq ${order} limit ?`)
      .all(...args, page.limit + 1) as ObjectDbRow[];
    const hasMore = rows.length > page.limit;
    const kept = rows.slice(0, page.limit);
    if (order === 'asc') kept.reverse();
    return { data: kept.map((row) => this.#toObject<TBody, TInternal>(row)), hasMore };
  }

  /**
   * Net amounts of a scope's balance transactions by currency, status (`pending`/`available`) and
   * source type: what `GET /v1/balance` reports, summed in SQL so a long history is never loaded.
   */
  balanceTotals(scope: Scope): BalanceTotal[] {
    const rows = this.#prepare(
      `select json_extract(body, '$.currency') as currency, json_extract(body, '$.status') as status,
              json_extract(internal, '$.sourceType') as source_type, sum(json_extract(body, '$.net')) as net
       from objects where type = 'balance_transaction' and livemode = ? and account is ?
       group by currency, status, source_type order by currency`,
    ).all(scope.livemode ? 1 : 0, scope.account) as { currency: string; status: string; source_type: string | null; net: number }[];
    return rows.map((row) => ({ currency: row.currency, status: row.status, sourceType: row.source_type ?? 'card', net: row.net }));
  }

  /**
   * Every object of a type in every scope (small sets only: endpoints, readers). The same objects
   * are handed to every caller until the type is written: read them, never change them.
   */
  all<TBody, TInternal>(type: string): readonly StoredObject<TBody, TInternal>[] {
    let objects = this.#allOf.get(type);
    if (!objects) {
      const rows = this.#prepare('select * from objects where type = ? order by seq').all(type) as ObjectDbRow[];
      objects = rows.map((row) => this.#toObject(row));
      this.#allOf.set(type, objects);
    }
    return objects as readonly StoredObject<TBody, TInternal>[];
  }

  getIdempotent(scope: string, key: string, now: number): IdempotentResponse | undefined {
    const row = this.#prepare('select method, path, params_hash, status, body from idempotency where scope = ? and key = ? and created_at > ?')
      .get(scope, key, now - IDEMPOTENCY_RETENTION_MS) as
      | { method: string; path: string; params_hash: string; status: number; body: string }
      | undefined;
    if (!row) return undefined;
    const body = SEALED_PATH.test(row.path) ? this.keyring.open(idempotencyPlace(scope, key), row.body) : row.body;
    return { method: row.method, path: row.path, paramsHash: row.params_hash, status: row.status, body };
  }

  putIdempotent(scope: string, key: string, response: IdempotentResponse, now: number): void {
    this.#prepare(
        `insert into idempotency (scope, key, method, path, params_hash, status, body, created_at) values (?, ?, ?, ?, ?, ?, ?, ?)
         on conflict(scope, key) do update set method = excluded.method, path = excluded.path, params_hash = excluded.params_hash,
         status = excluded.status, body = excluded.body, created_at = excluded.created_at`,
      )
      .run(scope, key, response.method, response.path, response.paramsHash, response.status, SEALED_PATH.test(response.path) ? this.keyring.seal(idempotencyPlace(scope, key), response.body) : response.body, now);
  }

  pruneIdempotency(now: number): void {
    this.#prepare('delete from idempotency where created_at <= ?').run(now - IDEMPOTENCY_RETENTION_MS);
  }

  addTimer(timer: TimerRow): void {
    this.#prepare('insert into timers (id, kind, due_at, payload) values (?, ?, ?, ?)')
      .run(timer.id, timer.kind, timer.dueAt, JSON.stringify(timer.payload));
  }

  /** Deletes the timer; false when it had already fired or been cancelled. */
  takeTimer(id: string): boolean {
    return this.#prepare('delete from timers where id = ?').run(id).changes === 1;
  }

  /** Every pending timer, earliest first. */
  timers(): TimerRow[] {
    return (this.#prepare('select id, kind, due_at, payload from timers order by due_at, id').all() as TimerDbRow[]).map(toTimer);
  }

  /**
   * Timers due by `now`, earliest first. Timers can be many and days ahead (funds waiting to
   * become available): reading only what is due, and only the next one to arm, keeps each pass
   * from loading them all.
   */
  dueTimers(now: number): TimerRow[] {
    return (this.#prepare('select id, kind, due_at, payload from timers where due_at <= ? order by due_at, id').all(now) as TimerDbRow[]).map(toTimer);
  }

  nextTimer(): TimerRow | undefined {
    const row = this.#prepare('select id, kind, due_at, payload from timers order by due_at, id limit 1').get() as TimerDbRow | undefined;
    return row ? toTimer(row) : undefined;
  }

  addDelivery(eventId: string, endpointId: string, status: DeliveryStatus, nextAt: number): number {
    const info = this.#prepare('insert into deliveries (event_id, endpoint_id, status, next_at) values (?, ?, ?, ?)')
      .run(eventId, endpointId, status, nextAt);
    const id = Number(info.lastInsertRowid);
    this.#prepare('update deliveries set ord = ? where id = ?').run(id, id);
    return id;
  }

  nextDueDelivery(now: number): DeliveryRow | undefined {
    const row = this.#prepare(`select * from deliveries where status = 'pending' and next_at <= ? order by next_at, ord limit 1`)
      .get(now) as DeliveryDbRow | undefined;
    return row ? toDelivery(row) : undefined;
  }

  earliestPendingDelivery(): number | undefined {
    const row = this.#prepare(`select min(next_at) as at from deliveries where status = 'pending'`).get() as { at: number | null };
    return row.at ?? undefined;
  }

  updateDelivery(id: number, change: { status: DeliveryStatus; attempts: number; nextAt: number; lastError: string | null }): void {
    this.#prepare('update deliveries set status = ?, attempts = ?, next_at = ?, last_error = ? where id = ?')
      .run(change.status, change.attempts, change.nextAt, change.lastError, id);
  }

  deliveries(): DeliveryRow[] {
    return (this.#prepare('select * from deliveries order by id').all() as DeliveryDbRow[]).map(toDelivery);
  }

  /** Releases held deliveries, newest first, so the receiver sees them in reverse order. */
  releaseHeldReversed(now: number): number {
    const held = this.#prepare(`select id from deliveries where status = 'held' order by ord`).all() as { id: number }[];
    const ords = held.map((row) => row.id);
    held.forEach((row, index) => {
      this.#prepare(`update deliveries set status = 'pending', next_at = ?, ord = ? where id = ?`)
        .run(now, ords[held.length - 1 - index] ?? row.id, row.id);
    });
    return held.length;
  }

  countHeld(): number {
    return (this.#prepare(`select count(*) as n from deliveries where status = 'held'`).get() as { n: number }).n;
  }

  /** Makes every pending delivery (retries, delayed ones) due now. */
  hurryDeliveries(now: number): void {
    this.#prepare(`update deliveries set next_at = ? where status = 'pending' and next_at > ?`).run(now, now);
  }
}
