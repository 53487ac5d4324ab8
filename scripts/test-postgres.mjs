#!/usr/bin/env node
// The PostgreSQL pass of `npm test`: the whole suite again with every ledger in PostgreSQL (and the
// multi-instance tests that only make sense there). Skipped, saying so, where no server answers:
// a newcomer's machine needs no PostgreSQL. POS_TEST_POSTGRES=0 skips it on purpose.
import { spawnSync } from 'node:child_process';
import pg from 'pg';

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

console.log(`PostgreSQL pass: the suite again on ${url.replace(/:[^:@/]*@/, ':***@')}`);
const result = spawnSync('npx', ['vitest', 'run'], { stdio: 'inherit', env: { ...process.env, POS_TEST_DATABASE_URL: url } });
process.exit(result.status ?? 1);
