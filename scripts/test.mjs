#!/usr/bin/env node
// The two passes of `npm test`: the whole suite on SQLite, then again on PostgreSQL
// (scripts/test-postgres.mjs, which says when and why it is skipped). Both run even when the first
// fails, so one run shows every failure; the command fails if either pass did.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const sqlite = spawnSync('npx', ['vitest', 'run'], { stdio: 'inherit', env: { ...process.env, POS_TEST_DATABASE_URL: '' } });
const postgres = spawnSync(process.execPath, [fileURLToPath(new URL('./test-postgres.mjs', import.meta.url))], { stdio: 'inherit', env: process.env });
const failed = [sqlite.status !== 0 ? 'SQLite' : null, postgres.status !== 0 ? 'PostgreSQL' : null].filter(Boolean);
if (failed.length > 0) {
  console.error(`npm test: the ${failed.join(' and ')} pass failed`);
  process.exit(1);
}
