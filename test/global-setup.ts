import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { openStore } from '../server/db/store.js';

/**
 * On the PostgreSQL run, every schema of this run starts with a prefix of its own (two runs on one
 * database, two developers say, never touch each other's); at the end the run drops what its
 * tests did not get to clean up (a crashed worker, a SIGKILLed server).
 */
async function dropTestSchemas(prefix: string): Promise<void> {
  const url = process.env.POS_TEST_DATABASE_URL;
  if (!url) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>('select nspname from pg_namespace where starts_with(nspname, $1)', [prefix]);
    for (const { nspname } of rows) await client.query(`drop schema if exists "${nspname}" cascade`);
  } finally {
    await client.end();
  }
}

let prefix = '';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** What `npm run build` compiles (tsconfig.build.json) and copies (the pages' assets). */
const SOURCES = ['cli', 'server', 'shared', 'agent', 'simulator', 'bench'];

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(path));
    else if (!/\.test\.tsx?$/.test(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Tests that spawn `pos` run the compiled dist/. A test run alone after an edit
 * (`npx vitest run test/x.test.ts`) would otherwise exercise yesterday's code: when any source is
 * newer than the build, build first, saying so.
 */
function buildIfStale(): void {
  let built = 0;
  try {
    built = statSync(join(ROOT, 'dist', 'cli', 'main.js')).mtimeMs;
  } catch {
    built = 0;
  }
  const newest = Math.max(...SOURCES.map((dir) => newestSource(join(ROOT, dir))));
  if (newest <= built) return;
  console.log('dist/ is older than the sources: running `npm run build` first');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
}

let template: string | undefined;

/**
 * On the SQLite run, one database migrated here for the whole run, which every test's new data dir
 * starts as a copy of (helpers/db.ts, seedDataDir): migrating takes longer than most unit tests do.
 */
async function migrateTemplate(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'pos-test-template-'));
  const store = await openStore({ dataDir: dir });
  // Closing the last connection checkpoints the WAL: the one file then holds everything.
  await store.close();
  return dir;
}

export async function setup(): Promise<void> {
  buildIfStale();
  // Workers are started after this and inherit the environment.
  prefix = `t${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}_`;
  process.env.POS_TEST_SCHEMA_PREFIX = prefix;
  if (!process.env.POS_TEST_DATABASE_URL) {
    template = await migrateTemplate();
    process.env.POS_TEST_SQLITE_TEMPLATE = template;
  }
}

export async function teardown(): Promise<void> {
  if (template) rmSync(template, { recursive: true, force: true });
  await dropTestSchemas(prefix);
}
