import { createHash } from 'node:crypto';
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';

/**
 * The backend the suite runs on: the embedded SQLite by default, PostgreSQL when
 * POS_TEST_DATABASE_URL is set (`.ci/run` runs the suite once each way). On PostgreSQL every data
 * dir gets its own schema, so tests stay as isolated as they are with one SQLite file each.
 */
export const TEST_DATABASE_URL = process.env.POS_TEST_DATABASE_URL || undefined;

export function schemaFor(dataDir: string): string {
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
 * On SQLite, gives a new data dir the database migrated once for the run (test/global-setup.ts), so
 * opening it finds every migration applied instead of running them all; on PostgreSQL each schema is
 * still migrated as it is opened. Without a template (vitest started with another config) the store
 * migrates as usual.
 */
export function seedDataDir(dataDir: string): void {
  const template = process.env.POS_TEST_SQLITE_TEMPLATE;
  if (TEST_DATABASE_URL || !template) return;
  for (const file of ['pos.db', 'pos.db-wal']) {
    if (existsSync(join(template, file))) copyFileSync(join(template, file), join(dataDir, file));
  }
}

/**
 * Empties a test schema of every row, leaving its tables and the record of its migrations: as it
 * was just after migrating, since migrations seed no rows (they only derive rows from existing ones).
 */
export async function emptySchema(schema: string): Promise<void> {
  if (!TEST_DATABASE_URL) throw new Error('emptySchema is for the PostgreSQL run');
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>("select tablename as name from pg_tables where schemaname = $1 and tablename not like 'kysely\\_%'", [schema]);
    if (rows.length > 0) await client.query(`truncate ${rows.map(({ name }) => `"${schema}"."${name}"`).join(', ')} restart identity cascade`);
  } finally {
    await client.end();
  }
}

export async function dropSchemaOf(dataDir: string): Promise<void> {
  if (!TEST_DATABASE_URL) return;
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schemaFor(dataDir)}" cascade`);
  } finally {
    await client.end();
  }
}

export interface TestDb {
  /** First column of the first row, as a number (`select count(*) …`). */
  count(sql: string, ...params: unknown[]): Promise<number>;
  all<T>(sql: string, ...params: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

/** Reads a data dir's ledger on whichever backend holds it; SQL uses `?` placeholders. */
export async function openTestDb(dataDir: string): Promise<TestDb> {
  if (TEST_DATABASE_URL) {
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL, options: `-c search_path="${schemaFor(dataDir)}"` });
    await client.connect();
    const run = async <T>(sql: string, params: unknown[]): Promise<T[]> => {
      let n = 0;
      const result = await client.query(sql.replace(/\?/g, () => `$${++n}`), params);
      return result.rows as T[];
    };
    return {
      async count(sql, ...params) {
        const [row] = await run<Record<string, unknown>>(sql, params);
        return Number(row ? Object.values(row)[0] : 0);
      },
      all: (sql, ...params) => run(sql, params),
      close: () => client.end(),
    };
  }
  const db = new Database(join(dataDir, 'pos.db'), { readonly: true, fileMustExist: true });
  return {
    count: async (sql, ...params) => Number(db.prepare(sql).pluck().get(...params) as number | bigint),
    all: async <T>(sql: string, ...params: unknown[]) => db.prepare(sql).all(...params) as T[],
    close: async () => {
      db.close();
    },
  };
}
