import { type DatabaseIntrospector, type DatabaseMetadata, Kysely, PostgresDialect, type SchemaMetadata, sql, type TableMetadata } from 'kysely';
import { createHash } from 'node:crypto';
import pg from 'pg';
import { LocalListeners, openNotices, takeNotices } from './notify.js';
import type { Tables } from './schema.js';
import { migrateToLatest, type Store } from './store.js';

/**
 * Connections per server process. Requests hold a connection only for one short transaction (never
 * across a processor call), so ten keep two cores busy; several instances on one database stay far
 * below PostgreSQL's default max_connections of 100.
 */
const POOL_SIZE = 10;

/** A connection that cannot be had in this long means the database is down or saturated: fail the request. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * The listening connection is reconnected after this long, doubling up to RECONNECT_MAX_MS: the
 * first retry comes before anyone waiting notices, and a database that is down for longer is not
 * hammered (every process retries on its own).
 */
const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

/**
 * How often the listening connection is proved alive by a query on it. A connection that died
 * without a FIN (a NAT or firewall dropping it, a database host gone) says nothing and delivers
 * nothing; TCP keepalive would notice only after minutes. Every 30 s is one trivial query per
 * process, and bounds how long its listeners could miss notices before the reconnect wakes them.
 */
const LISTEN_CHECK_MS = 30_000;

/** A live connection answers `select 1` within milliseconds; this long without an answer counts as dead. */
const LISTEN_CHECK_TIMEOUT_MS = 5_000;

/**
 * bigint (int8) columns hold epoch milliseconds and minor units, all far below 2^53, so they are
 * read as numbers like SQLite gives them rather than as strings.
 */
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

export interface PostgresStoreOptions {
  /** Schema to live in (created if missing): lets tests and tenants share one database. */
  schema?: string;
  /** False: open the database as it is (`pos migrate status`); default true. */
  migrate?: boolean;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * The PostgreSQL store: the same Kysely queries and migrations as SQLite, through `pg`. Each
 * `transaction` is a real transaction on its own pooled connection; concurrency between instances
 * is handled by conditional updates and row locks in the services, never by in-process locks.
 */
export async function openPostgresStore(url: string, options: PostgresStoreOptions = {}): Promise<Store> {
  const schema = options.schema;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name ${schema}`);
  if (schema) {
    const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    await admin.connect();
    try {
      await admin.query(`create schema if not exists "${schema}"`);
    } finally {
      await admin.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    ...(schema ? { options: `-c search_path="${schema}"` } : {}),
  });
  let sent = 0;
  // Every query of the store goes through a pooled client's query(); counting there sees them all.
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (...args: unknown[]) => {
      sent++;
      return query(...args);
    };
  });
  const db = new Kysely<Tables>({ dialect: new ScopedPostgresDialect({ pool }, schema ?? 'public') });
  const migrations = options.migrate === false ? undefined : await migrateToLatest(db, schema ?? 'public');
  const channel = channelOf(schema ?? 'public');
  const listener = new PostgresListener(url, channel, () => void sent++);
  return {
    dialect: 'postgres',
    db,
    ...(migrations ? { migrations } : {}),
    transaction: (work) =>
      db.transaction().execute(async (trx) => {
        openNotices(trx);
        const value = await work(trx).catch((error: unknown) => {
          takeNotices(trx);
          throw error;
        });
        const keys = takeNotices(trx);
        // The last statement of the transaction: PostgreSQL delivers it to every listening session
        // when, and only if, the transaction commits, and merges duplicates within it.
        if (keys.size > 0) await sql`select pg_notify(${channel}, key) from unnest(${[...keys]}::text[]) as key`.execute(trx);
        return value;
      }),
    notifications: listener.listeners,
    statements: () => sent,
    close: async () => {
      await listener.close();
      await db.destroy();
    },
  };
}

/**
 * The NOTIFY channel of a schema: instances on other schemas of the same database (tenants,
 * tests) hear nothing of ours. A channel name is an identifier of at most 63 bytes.
 */
function channelOf(schema: string): string {
  const name = `pos_${schema}`;
  return name.length <= 63 ? name : `pos_${createHash('sha256').update(schema).digest('hex').slice(0, 32)}`;
}

/**
 * One connection per process that LISTENs on the schema's channel and hands each notice to this
 * process's listeners. Opened when the first listener subscribes (the admin CLI never does),
 * reconnected whenever it is lost; after every (re)connect every listener looks again, since
 * whatever committed while nobody listened went unheard.
 */
class PostgresListener {
  readonly listeners = new LocalListeners(() => void this.#connect());
  #client: pg.Client | undefined;
  #closed = false;
  #retryMs = RECONNECT_MIN_MS;
  #reconnect: NodeJS.Timeout | undefined;
  #check: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly channel: string,
    private readonly counted: () => void,
  ) {}

  async #connect(): Promise<void> {
    if (this.#closed || this.#client) return;
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, keepAlive: true });
    this.#client = client;
    client.on('notification', (message) => {
      if (message.channel === this.channel && message.payload) this.listeners.deliver([message.payload]);
    });
    client.on('error', () => this.#lost(client));
    client.on('end', () => this.#lost(client));
    try {
      await client.connect();
      this.counted();
      await client.query(`listen "${this.channel}"`);
    } catch {
      this.#lost(client);
      return;
    }
    if (this.#client !== client) return;
    this.#retryMs = RECONNECT_MIN_MS;
    this.#check = setInterval(() => void this.#alive(client), LISTEN_CHECK_MS);
    this.#check.unref();
    this.listeners.deliverAll();
  }

  async #alive(client: pg.Client): Promise<void> {
    const timeout = setTimeout(() => this.#lost(client), LISTEN_CHECK_TIMEOUT_MS);
    try {
      this.counted();
      await client.query('select 1');
    } catch {
      this.#lost(client);
    } finally {
      clearTimeout(timeout);
    }
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    clearInterval(this.#check);
    client.end().catch(() => undefined);
    if (this.#closed) return;
    this.#reconnect = setTimeout(() => void this.#connect(), this.#retryMs);
    this.#reconnect.unref();
    this.#retryMs = Math.min(this.#retryMs * 2, RECONNECT_MAX_MS);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#reconnect);
    clearInterval(this.#check);
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }
}

/**
 * Kysely's PostgreSQL introspector (which its migrator uses to find its bookkeeping tables) reads
 * every schema in the database and calls `has_schema_privilege(name)` and
 * `pg_get_serial_sequence(name)` on each: those look the name up again, so a schema dropped by
 * someone else while the query runs (another tenant, another test) fails *our* migration with
 * "schema … does not exist". This one reads our schema only, by catalog joins that never resolve
 * a name, and reports tables without columns (the migrator needs their names only).
 */
class SchemaIntrospector implements DatabaseIntrospector {
  constructor(
    private readonly db: Kysely<unknown>,
    private readonly schema: string,
  ) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ nspname: string }>`select nspname from pg_catalog.pg_namespace where nspname = ${this.schema}`.execute(this.db);
    return rows.map((row) => ({ name: row.nspname }));
  }

  async getTables(): Promise<TableMetadata[]> {
    const { rows } = await sql<{ relname: string; relkind: string }>`
      select c.relname, c.relkind from pg_catalog.pg_class c
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      where ns.nspname = ${this.schema} and c.relkind in ('r', 'v', 'p')`.execute(this.db);
    return rows.map((row) => ({ name: row.relname, schema: this.schema, isView: row.relkind === 'v', columns: [] }));
  }

  async getMetadata(): Promise<DatabaseMetadata> {
    return { tables: await this.getTables() };
  }
}

class ScopedPostgresDialect extends PostgresDialect {
  constructor(
    config: ConstructorParameters<typeof PostgresDialect>[0],
    private readonly schema: string,
  ) {
    super(config);
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SchemaIntrospector(db, this.schema);
  }
}

/** Drops a schema made by `openPostgresStore` (tests clean up after themselves). */
export async function dropPostgresSchema(url: string, schema: string): Promise<void> {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  await admin.connect();
  try {
    await admin.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await admin.end();
  }
}


/**
 * Connections for counters whose loss in a crash costs nothing (rate-limit windows): commits do not
 * wait for the WAL flush. Two connections: each write is one short upsert.
 */
export function openPostgresUnflushed(url: string, options: PostgresStoreOptions = {}): Kysely<Tables> {
  const schema = options.schema ? `-c search_path="${options.schema}" ` : '';
  const pool = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, options: `${schema}-c synchronous_commit=off` });
  return new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
}
