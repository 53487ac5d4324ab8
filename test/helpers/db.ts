import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { seedSqliteDataDir } from './template.js';

export { seedSqliteDataDir };

/**
 * The backend the suite runs on: the embedded SQLite by default, PostgreSQL when
 * POS_TEST_DATABASE_URL is set (`.ci/run` runs the suite once each way). On PostgreSQL every data
 * dir gets its own schema, so tests stay as isolated as they are with one SQLite file each.
 */
export const TEST_DATABASE_URL = process.env.POS_TEST_DATABASE_URL || undefined;

/**
 * Whether this is the SQLite pass. A block that never reaches the backend under test (a pure rule,
 * an in-memory ledger, SQLite opened by hand) says `describe.runIf(SQLITE_PASS)`: the PostgreSQL
 * pass would run it again exactly as it ran, for nothing.
 */
export const SQLITE_PASS = !TEST_DATABASE_URL;

/**
 * Schemas this worker migrated, emptied again when their tests were done, for its next data dirs
 * (seedDataDir): migrating a schema takes a second or more. The run drops them at its end
 * (test/global-setup.ts), with every other schema of its prefix.
 */
const spareSchemas: string[] = [];
/** The data dirs of this worker that were given a spare schema rather than one of their own. */
const givenSchemas = new Map<string, string>();

export function schemaFor(dataDir: string): string {
  const given = givenSchemas.get(dataDir);
  if (given) return given;
  const prefix = process.env.POS_TEST_SCHEMA_PREFIX || 't_';
  return `${prefix}${createHash('sha256').update(dataDir).digest('hex').slice(0, 20)}`;
}

/** Server/admin flags that put a data dir's ledger on the suite's backend. */
export function backendFlags(dataDir: string): { databaseUrl?: string; databaseSchema?: string } {
  return TEST_DATABASE_URL ? { databaseUrl: TEST_DATABASE_URL, databaseSchema: schemaFor(dataDir) } : {};
}

/** The same, as environment for a `pos` child process. */
export function backendEnv(dataDir: string): Record<string, string> {
  return TEST_DATABASE_URL ? { DATABASE_URL: TEST_DATABASE_URL, POS_DATABASE_SCHEMA: schemaFor(dataDir) } : {};
}

/**
 * Makes a new data dir's ledger start migrated, without migrating: on SQLite a copy of the database
 * migrated once for the run (test/global-setup.ts); on PostgreSQL one of this worker's spare schemas
 * when it has one, else a new schema that the store migrates as it opens it. Without a template
 * (vitest started with another config) the store migrates as usual.
 */
export function seedDataDir(dataDir: string): void {
  if (TEST_DATABASE_URL) {
    const spare = spareSchemas.pop();
    if (spare) givenSchemas.set(dataDir, spare);
    return;
  }
  seedSqliteDataDir(dataDir);
}


/**
 * When a data dir's tests are done and whatever used its ledger has closed: on PostgreSQL its
 * schema, emptied, becomes a spare for the worker's next data dir, or is dropped when it cannot be
 * emptied at once (a connection still holds a lock on it).
 */
export async function releaseDataDir(dataDir: string): Promise<void> {
  if (!TEST_DATABASE_URL) return;
  const schema = schemaFor(dataDir);
  givenSchemas.delete(dataDir);
  if (await emptySchema(schema)) spareSchemas.push(schema);
  else await dropSchemaOf(dataDir, schema);
}

/**
 * Empties a migrated test schema of every row, keeping its tables and the record of its
 * migrations: as it was just after migrating, since migrations seed no rows (they only derive rows
 * from existing ones). False when the schema was never migrated, or is still locked.
 */
async function emptySchema(schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    // Two seconds: a closed server holds no lock; one still holding it is not waited for.
    await client.query("set lock_timeout = '2s'");
    const { rows } = await client.query<{ name: string }>('select tablename as name from pg_tables where schemaname = $1', [schema]);
    if (!rows.some(({ name }) => name === 'kysely_migration')) return false;
    const tables = rows.filter(({ name }) => !name.startsWith('kysely_'));
    if (tables.length > 0) await client.query(`truncate ${tables.map(({ name }) => `"${schema}"."${name}"`).join(', ')} restart identity cascade`);
    return true;
  } catch {
    return false;
  } finally {
    await client.end();
  }
}

export async function dropSchemaOf(dataDir: string, schema = schemaFor(dataDir)): Promise<void> {
  if (!TEST_DATABASE_URL) return;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

export interface TestDb {
  /** First column of the first row, as a number (`select count(*) …`). */
  count(sql: string, ...params: unknown[]): Promise<number>;
  all<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** A statement that changes rows (only on a database opened `writable`); returns how many it changed. */
  run(sql: string, ...params: unknown[]): Promise<number>;
  close(): Promise<void>;
}

/**
 * Reads a data dir's ledger on whichever backend holds it; SQL uses `?` placeholders. `writable`
 * is for tests that play someone with database access (tampering with rows behind the server).
 */
export async function openTestDb(dataDir: string, options: { writable?: boolean } = {}): Promise<TestDb> {
  if (TEST_DATABASE_URL) {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path="${schemaFor(dataDir)}"` });
    await client.connect();
    // One client runs one query at a time: tests that read several tables at once (Promise.all)
    // queue here instead of overlapping on the connection, which pg deprecates.
    let last: Promise<unknown> = Promise.resolve();
    const query = (sql: string, params: unknown[]) => {
      let n = 0;
      const next = last.catch(() => undefined).then(() => client.query(sql.replace(/\?/g, () => `$${++n}`), params));
      last = next;
      return next;
    };
    const run = async <T>(sql: string, params: unknown[]): Promise<T[]> => (await query(sql, params)).rows as T[];
    return {
      async count(sql, ...params) {
        const [row] = await run<Record<string, unknown>>(sql, params);
        return Number(row ? Object.values(row)[0] : 0);
      },
      all: (sql, ...params) => run(sql, params),
      async run(sql, ...params) {
        if (!options.writable) throw new Error('openTestDb: open it { writable: true } to change rows');
        return (await query(sql, params)).rowCount ?? 0;
      },
      close: () => client.end(),
    };
  }
  const db = new Database(join(dataDir, 'pos.db'), { readonly: !options.writable, fileMustExist: true });
  if (options.writable) db.pragma('busy_timeout = 5000');
  return {
    count: async (sql, ...params) => Number(db.prepare(sql).pluck().get(...params) as number | bigint),
    all: async <T>(sql: string, ...params: unknown[]) => db.prepare(sql).all(...params) as T[],
    run: async (sql, ...params) => db.prepare(sql).run(...params).changes,
    close: async () => {
      db.close();
    },
  };
}
