import { type Kysely, Migrator, type Transaction, sql } from 'kysely';
import { migrationProvider } from './migration-provider.js';
import type { LooseFileReport } from '../../shared/files.js';
import { ConfigError } from '../../shared/config.js';
import { compareVersions, POS_VERSION } from '../../shared/version.js';
import type { Notifications } from './notify.js';
import type { Tables } from './schema.js';

export type Db = Kysely<Tables>;
export type Trx = Transaction<Tables>;
/** Either the database or an open transaction: services accept both. */
export type Executor = Db | Trx;

export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  readonly db: Db;
  /** What opening it did about migrations; absent when it was opened without migrating (`pos migrate status`). */
  readonly migrations?: MigrationReport;
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

/** What a store found and did about migrations as it opened. */
export interface MigrationReport {
  /** Migrations this open applied (empty when the database was already current). */
  readonly appliedNow: readonly string[];
  /** Migrations the database holds now, all of this version's. */
  readonly applied: number;
}

/** Where a database stands against this version's migrations (`pos migrate status`). */
export interface MigrationState {
  /** Applied, oldest first, with when. */
  readonly applied: readonly { name: string; appliedAt: string }[];
  /** This version's migrations the database does not hold yet. */
  readonly pending: readonly string[];
  /** Applied migrations this version does not know: a newer version migrated the database. */
  readonly unknown: readonly string[];
  /** The versions of pos that migrated the database, oldest first (recorded since 0.2.0). */
  readonly versions: readonly { version: string; migratedAt: number; lastMigration: string }[];
}

/**
 * The database was migrated by a newer version of pos: this one would misread what it wrote, so it
 * refuses to open it rather than serve from it. A configuration error (exit 2): the fix is to run
 * the newer version, or restore a backup taken before the upgrade.
 */
export class DatabaseTooNewError extends ConfigError {
  constructor(
    readonly databaseVersion: string | undefined,
    readonly unknownMigrations: readonly string[],
  ) {
    super(
      `the database was migrated by ${databaseVersion ? `pos ${databaseVersion}` : 'a newer version of pos'}, newer than this pos ${POS_VERSION}: ` +
        `it holds ${unknownMigrations.length === 1 ? 'a migration' : 'migrations'} this version does not know (${unknownMigrations.join(', ')}). ` +
        `Run pos ${databaseVersion ?? 'of that version'} or later on it, or restore a backup taken before the upgrade (docs/operations.md)`,
    );
  }
}

function migrationTable(schema?: string) {
  return schema ? sql`${sql.id(schema)}.${sql.id('kysely_migration')}` : sql.id('kysely_migration');
}

/** The names and times of applied migrations; empty on a database never migrated. */
async function appliedMigrations(db: Kysely<Tables>, schema?: string): Promise<{ name: string; timestamp: string }[] | undefined> {
  try {
    return (await sql<{ name: string; timestamp: string }>`select name, timestamp from ${migrationTable(schema)} order by name`.execute(db)).rows;
  } catch {
    return undefined;
  }
}

async function recordedVersions(db: Kysely<Tables>): Promise<MigrationState['versions']> {
  try {
    const rows = await db.selectFrom('store_versions').selectAll().execute();
    return rows
      .map((r) => ({ version: r.version, migratedAt: r.migrated_at, lastMigration: r.last_migration }))
      .sort((a, b) => compareVersions(a.version, b.version));
  } catch {
    // Migrated only by versions before 0.2.0, which kept no record.
    return [];
  }
}

/** Applied, pending and unknown migrations, read without changing anything. */
export async function migrationState(db: Kysely<Tables>, schema?: string): Promise<MigrationState> {
  const known = Object.keys(await migrationProvider.getMigrations());
  const rows = (await appliedMigrations(db, schema)) ?? [];
  const done = new Set(rows.map((r) => r.name));
  const knownSet = new Set(known);
  return {
    applied: rows.map((r) => ({ name: r.name, appliedAt: r.timestamp })),
    pending: known.filter((name) => !done.has(name)),
    unknown: rows.map((r) => r.name).filter((name) => !knownSet.has(name)),
    versions: await recordedVersions(db),
  };
}

/** Whether the database holds exactly this version's migrations, in one read (what /readyz asks). */
export async function migrationsCurrent(db: Kysely<Tables>, schema?: string): Promise<boolean> {
  return upToDate(db, Object.keys(await migrationProvider.getMigrations()), schema);
}

/**
 * `schema` names the PostgreSQL schema explicitly: Kysely looks its bookkeeping tables up across
 * every schema, so another schema's would otherwise be taken for ours.
 */
export async function migrateToLatest(db: Kysely<Tables>, schema?: string): Promise<MigrationReport> {
  const known = Object.keys(await migrationProvider.getMigrations());
  if (await upToDate(db, known, schema)) return { appliedNow: [], applied: known.length };
  const state = await migrationState(db, schema);
  if (state.unknown.length > 0) {
    // The newest version on record migrated it; a database without the record names no version.
    const newest = state.versions.at(-1);
    throw new DatabaseTooNewError(newest && compareVersions(newest.version, POS_VERSION) > 0 ? newest.version : undefined, state.unknown);
  }
  // Issues land in parallel, so a numbered migration can arrive after a higher one was applied.
  const migrator = new Migrator({ db, provider: migrationProvider, allowUnorderedMigrations: true, ...(schema ? { migrationTableSchema: schema } : {}) });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName;
    throw new Error(`database migration ${failed ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  const appliedNow = (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  if (appliedNow.length > 0) await recordVersion(db, known.at(-1) ?? '');
  return { appliedNow, applied: known.length };
}

/** Notes that this version migrated the database, so an older one refusing it can name the version. */
async function recordVersion(db: Kysely<Tables>, lastMigration: string): Promise<void> {
  await db
    .insertInto('store_versions')
    .values({ version: POS_VERSION, migrated_at: Date.now(), last_migration: lastMigration })
    .onConflict((oc) => oc.column('version').doUpdateSet({ migrated_at: Date.now(), last_migration: lastMigration }))
    .execute();
}

/**
 * Whether the database holds exactly the migrations this version has: one read, where Kysely's
 * migrator takes its lock and reads the bookkeeping in several round trips (most of the time a
 * store took to open). Anything else (no bookkeeping yet, one pending, one this version does not
 * know) goes through the checks and the migrator.
 */
async function upToDate(db: Kysely<Tables>, known: readonly string[], schema?: string): Promise<boolean> {
  let applied: string[];
  try {
    applied = (await sql<{ name: string }>`select name from ${migrationTable(schema)}`.execute(db)).rows.map((row) => row.name);
  } catch {
    return false;
  }
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
  /** False: open the database as it is, without applying this version's migrations (or refusing a newer one's). */
  migrate?: boolean;
}

/** The store the configuration asks for: PostgreSQL when a database URL is set, else SQLite in the data dir. */
export async function openStore(config: StoreOptions, options: { onLooseFile?: LooseFileReport } = {}): Promise<Store> {
  if (config.databaseUrl) {
    const { openPostgresStore } = await import('./postgres.js');
    return openPostgresStore(config.databaseUrl, { ...(config.databaseSchema ? { schema: config.databaseSchema } : {}), migrate: config.migrate ?? true });
  }
  const { openSqliteStore } = await import('./sqlite.js');
  return openSqliteStore(config.dataDir, { checkNesting: config.checkUnits ?? false, onLooseFile: options.onLooseFile, migrate: config.migrate ?? true });
}
