import { createHash } from 'node:crypto';
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
      async run(sql, ...params) {
        if (!options.writable) throw new Error('openTestDb: open it { writable: true } to change rows');
        let n = 0;
        return (await client.query(sql.replace(/\?/g, () => `$${++n}`), params)).rowCount ?? 0;
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
