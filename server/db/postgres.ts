import { type DatabaseIntrospector, type DatabaseMetadata, Kysely, PostgresDialect, type SchemaMetadata, sql, type TableMetadata } from 'kysely';
import pg from 'pg';
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
 * bigint (int8) columns hold epoch milliseconds and minor units, all far below 2^53, so they are
 * read as numbers like SQLite gives them rather than as strings.
 */
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

export interface PostgresStoreOptions {
  /** Schema to live in (created if missing): lets tests and tenants share one database. */
  schema?: string;
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
  await migrateToLatest(db, schema ?? 'public');
  return {
    dialect: 'postgres',
    db,
    transaction: (work) => db.transaction().execute(work),
    statements: () => sent,
    close: () => db.destroy(),
  };
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
