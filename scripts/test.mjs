#!/usr/bin/env node
// `npm test`: the build, then the whole suite on SQLite with the type check and the dependency rules
// running beside it, then the suite again on PostgreSQL (scripts/test-postgres.mjs, which says when
// and why it is skipped). The checks need the client the build generates from the OpenAPI document
// (test/generated/), and nothing the tests need: each is one single-threaded process, and beside
// the SQLite pass they use the time its two workers leave idle (tests waiting on sockets, timers and
// fsyncs) instead of holding up its start by half a minute. Every part runs even when another
// fails, so one run shows every failure; the command fails if any did.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Runs a command; resolves with whether it passed. `quiet` keeps its output for the caller. */
function run(command, args, { env = process.env, quiet = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit', env });
    const output = [];
    child.stdout?.on('data', (chunk) => output.push(chunk));
    child.stderr?.on('data', (chunk) => output.push(chunk));
    child.on('close', (status) => resolve({ ok: status === 0, output: Buffer.concat(output).toString('utf8').trim() }));
  });
}

/** An npm script with its output kept and printed whole once it ends, so it does not cut into vitest's. */
async function check(script) {
  const { ok, output } = await run('npm', ['run', '--silent', script], { quiet: true });
  return { ok, report: `${ok ? 'ok' : 'FAILED'}: npm run ${script}${output ? `\n${output}` : ''}` };
}

const build = await check('build');
console.log(build.report);
if (!build.ok) {
  console.error('npm test: the build failed; no test was run');
  process.exit(1);
}

// Each pass also writes vitest's JSON report, so the failures are named again at the very end:
// a CI log is often read from its tail, where a failure of the first pass has scrolled away.
const reports = mkdtempSync(join(tmpdir(), 'pos-test-report-'));
const reportArgs = (name) => ['--reporter=default', '--reporter=json', `--outputFile.json=${join(reports, `${name}.json`)}`];

const checks = Promise.all(['typecheck', 'check:deps'].map(check));
const sqlite = await run('npx', ['vitest', 'run', ...reportArgs('sqlite')], { env: { ...process.env, POS_TEST_DATABASE_URL: '' } });
const checked = await checks;
for (const { report } of checked) console.log(report);
const postgres = await run(process.execPath, [fileURLToPath(new URL('./test-postgres.mjs', import.meta.url)), ...reportArgs('postgres')]);

/** The failed tests of a pass's JSON report, one line each with the first line of the error. */
function failures(name) {
  let report;
  try {
    report = JSON.parse(readFileSync(join(reports, `${name}.json`), 'utf8'));
  } catch {
    return [];
  }
  const root = fileURLToPath(new URL('..', import.meta.url));
  const lines = [];
  for (const file of report.testResults ?? []) {
    const path = relative(root, file.name);
    const failed = (file.assertionResults ?? []).filter((t) => t.status === 'failed');
    for (const test of failed) lines.push(`  ${path} > ${test.fullName}: ${String(test.failureMessages?.[0] ?? '').split('\n')[0]}`);
    // A file that failed outside any test (an import, a hook) has no failed test to name.
    if (failed.length === 0 && file.status === 'failed') lines.push(`  ${path}: ${String(file.message ?? '').split('\n')[0]}`);
  }
  return lines;
}
for (const name of ['sqlite', 'postgres']) {
  const lines = failures(name);
  if (lines.length > 0) console.error(`Failed in the ${name === 'sqlite' ? 'SQLite' : 'PostgreSQL'} pass:\n${lines.join('\n')}`);
}
rmSync(reports, { recursive: true, force: true });

const failed = [
  ...checked.filter((c) => !c.ok).map((c) => c.report.split('\n')[0].replace('FAILED: ', '')),
  sqlite.ok ? null : 'the SQLite pass',
  postgres.ok ? null : 'the PostgreSQL pass',
].filter(Boolean);
if (failed.length > 0) {
  console.error(`npm test failed: ${failed.join(', ')}`);
  process.exit(1);
}
