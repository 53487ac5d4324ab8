#!/usr/bin/env node
// The PostgreSQL pass of `npm test`: the test files whose behaviour depends on the backend
// (scripts/backend-tests.mjs: those that open the pos store) again with every ledger in PostgreSQL,
// and the multi-instance tests that only make sense there. The rest ran on SQLite and would run the
// same here; the pass names them. Skipped, saying so, where no server answers: a newcomer's machine
// needs no PostgreSQL. POS_TEST_POSTGRES=0 skips it on purpose; POS_TEST_POSTGRES=all runs every file;
// `node scripts/test-postgres.mjs test/some.test.ts …` runs just the files named.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { backendTestFiles } from './backend-tests.mjs';

const url = process.env.POS_TEST_DATABASE_URL || 'postgres://root@127.0.0.1:5432/test';

if (process.env.POS_TEST_POSTGRES === '0') {
  console.log('PostgreSQL pass skipped: POS_TEST_POSTGRES=0');
  process.exit(0);
}

// Two seconds: a local server answers in milliseconds; anything slower is not there.
const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
try {
  await client.connect();
  await client.query('select 1');
  await client.end();
} catch (err) {
  if (process.env.POS_TEST_REQUIRE_POSTGRES === '1') {
    console.error(`PostgreSQL pass required (POS_TEST_REQUIRE_POSTGRES=1) but no PostgreSQL at ${url.replace(/:[^:@/]*@/, ':***@')}: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
  console.log(`PostgreSQL pass skipped: no PostgreSQL at ${url.replace(/:[^:@/]*@/, ':***@')} (${err instanceof Error ? err.message : String(err)}); set POS_TEST_DATABASE_URL to run it`);
  process.exit(0);
}

const shown = url.replace(/:[^:@/]*@/, ':***@');
const root = fileURLToPath(new URL('..', import.meta.url));
// Arguments after the script's name go to vitest: options (`--reporter=json`, as `npm test` passes
// them, each one word) and file filters. Filters given run those files alone on PostgreSQL, as
// `vitest run <filters>` does on SQLite; with none, the pass picks its files itself.
const args = process.argv.slice(2);
const filters = args.filter((arg) => !arg.startsWith('-'));
let files = [];
if (filters.length > 0) {
  console.log(`PostgreSQL pass: the test files matching ${filters.join(', ')}, on ${shown}`);
} else if (process.env.POS_TEST_POSTGRES === 'all') {
  console.log(`PostgreSQL pass: the whole suite again on ${shown} (POS_TEST_POSTGRES=all)`);
} else {
  const { backend, once, declared } = backendTestFiles(root);
  console.log(`PostgreSQL pass: the ${backend.length} test files that open the pos store, again on ${shown}.`);
  console.log(`Not run again (they do not depend on the backend; POS_TEST_POSTGRES=all runs them too), ${once.length} files: ${once.join(', ')}`);
  for (const { file, reason } of declared) console.log(`  ${file} opens the store but asserts ${reason}`);
  // Absolute paths: vitest matches a filter anywhere in a file's path.
  files = backend.map((file) => join(root, file));
}
// As many files at once as the SQLite pass (vitest.config.ts): the PostgreSQL server's share of the
// cores fits in the time the tests spend waiting.
const result = spawnSync('npx', ['vitest', 'run', ...args, ...files], { stdio: 'inherit', env: { ...process.env, POS_TEST_DATABASE_URL: url } });
process.exit(result.status ?? 1);
