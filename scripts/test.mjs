#!/usr/bin/env node
// `npm test`: the build, then the type check and the dependency rules side by side (each is one
// single-threaded process; the type check needs the client the build generates from the OpenAPI
// document, test/generated/), then the whole suite on SQLite, then again on PostgreSQL
// (scripts/test-postgres.mjs, which says when and why it is skipped). Both passes run even when
// the first fails, so one run shows every failure; the command fails if a check or either pass did.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Runs an npm script with its output kept, and prints that output whole once it ends. */
function check(script) {
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    child.on('close', (status) => {
      const text = Buffer.concat(output).toString('utf8').trim();
      console.log(`${status === 0 ? 'ok' : 'FAILED'}: npm run ${script}${text ? `\n${text}` : ''}`);
      resolve(status === 0);
    });
  });
}

const checks = [await check('build')];
if (checks[0]) checks.push(...(await Promise.all(['typecheck', 'check:deps'].map(check))));
if (checks.includes(false)) {
  console.error('npm test: a check failed; no test was run');
  process.exit(1);
}

const sqlite = spawnSync('npx', ['vitest', 'run'], { stdio: 'inherit', env: { ...process.env, POS_TEST_DATABASE_URL: '' } });
const postgres = spawnSync(process.execPath, [fileURLToPath(new URL('./test-postgres.mjs', import.meta.url))], { stdio: 'inherit', env: process.env });
const failed = [sqlite.status !== 0 ? 'SQLite' : null, postgres.status !== 0 ? 'PostgreSQL' : null].filter(Boolean);
if (failed.length > 0) {
  console.error(`npm test: the ${failed.join(' and ')} pass failed`);
  process.exit(1);
}
