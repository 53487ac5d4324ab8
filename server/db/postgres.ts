import { Kysely, PostgresDialect } from 'kysely';
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
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  await migrateToLatest(db, schema ?? 'public');
  return {
    dialect: 'postgres',
    db,
    transaction: (work) => db.transaction().execute(work),
    close: () => db.destroy(),
  };
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
