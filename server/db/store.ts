import { type Kysely, Migrator, type Transaction, sql } from 'kysely';
import { migrationProvider } from './migration-provider.js';
import type { LooseFileReport } from '../../shared/files.js';
import type { Notifications } from './notify.js';
import type { Tables } from './schema.js';

export type Db = Kysely<Tables>;
export type Trx = Transaction<Tables>;
/** Either the database or an open transaction: services accept both. */
export type Executor = Db | Trx;

export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  readonly db: Db;
  /**
   * One atomic unit of work. Never await anything but the database inside it, and never call
   * `transaction` (or use `db`) from inside it: the single connection is held by the unit.
   * The promise resolves only once the unit's writes are durable.
   */
  transaction<T>(work: (trx: Trx) => Promise<T>): Promise<T>;
  /**
   * A number that changes whenever another connection (another process: the admin CLI) commits to
   * the database, read in microseconds; absent where no such cheap signal exists (PostgreSQL,
   * where other instances write all the time). Lets a process cache what only others change.
   */
  readonly externalChanges?: () => number;
  /**
   * SQLite only: runs a read at once on the store's one connection, inside a running unit too (then
   * it sees the unit's writes). For the rare check that cannot wait for a promise: whether another
   * process switched the main key (server/db/encryption.ts).
   */
  readonly readNow?: (sql: string, parameters: readonly unknown[]) => unknown[];
  /** Notices of committed changes, from every process on the database (server/db/notify.ts). */
  readonly notifications: Notifications;
  /**
   * Statements this store has sent to the database so far, every kind (reads, writes, BEGIN,
   * COMMIT): tests and the benchmark prove with it that idle connections cost the database nothing.
   */
  statements(): number;
  close(): Promise<void>;
}

/**
 * `schema` names the PostgreSQL schema explicitly: Kysely looks its bookkeeping tables up across
 * every schema, so another schema's would otherwise be taken for ours.
 */
export async function migrateToLatest(db: Kysely<Tables>, schema?: string): Promise<void> {
  if (await upToDate(db, schema)) return;
  // Issues land in parallel, so a numbered migration can arrive after a higher one was applied.
  const migrator = new Migrator({ db, provider: migrationProvider, allowUnorderedMigrations: true, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`database migration ${failed ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Whether the database holds exactly the migrations this version has: one read, where Kysely's
 * migrator takes its lock and reads the bookkeeping in several round trips (most of the time a
 * store took to open). Anything else (no bookkeeping yet, one pending, one this version does not
 * know) goes through the migrator, which applies or refuses as before.
 */
export async function upToDate(db: Kysely<Tables>, schema?: string): Promise<boolean> {
  const table = schema ? sql`${sql.id(schema)}.${sql.id('kysely_migration')}` : sql.id('kysely_migration');
  let applied: string[];
  try {
    applied = (await sql<{ name: string }>`select name from ${table}`.execute(db)).rows.map((row) => row.name);
  } catch {
    return false;
  }
  const known = Object.keys(await migrationProvider.getMigrations());
  const done = new Set(applied);
  return applied.length === known.length && known.every((name) => done.has(name));
}

/** A cheap round trip proving the database answers, for /healthz. */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

export interface StoreOptions {
  dataDir: string;
  databaseUrl?: string | undefined;
  databaseSchema?: string | undefined;
  checkUnits?: boolean;
}

/** The store the configuration asks for: PostgreSQL when a database URL is set, else SQLite in the data dir. */
export async function openStore(config: StoreOptions, options: { onLooseFile?: LooseFileReport } = {}): Promise<Store> {
  if (config.databaseUrl) {
    const { openPostgresStore } = await import('./postgres.js');
    return openPostgresStore(config.databaseUrl, config.databaseSchema ? { schema: config.databaseSchema } : {});
  }
  const { openSqliteStore } = await import('./sqlite.js');
  return openSqliteStore(config.dataDir, { checkNesting: config.checkUnits ?? false, onLooseFile: options.onLooseFile });
}
