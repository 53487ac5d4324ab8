import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import Stripe from 'stripe';
import ts from 'typescript';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventually } from '../simulator/testing/harness.js';

/**
 * `runSimulator` as the standalone command runs it: a real Node process that prints its URL and
 * keys, serves the SDK, and exits 0 on SIGTERM. Node 20 cannot run TypeScript, so the simulator is
 * transpiled into test/artifacts (git-ignored) first; node_modules resolve from the repository.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = join(root, 'test', 'artifacts', `simulator-process-${process.pid}`);
let dataDir: string;
let child: ChildProcess | undefined;

function transpile(dir: string): void {
  for (const name of readdirSync(join(root, dir))) {
    const path = join(root, dir, name);
    if (statSync(path).isDirectory()) {
      transpile(join(dir, name));
      continue;
    }
    if (!name.endsWith('.ts') || name.endsWith('.test.ts')) continue;
    const output = ts.transpileModule(readFileSync(path, 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
    }).outputText;
    const target = join(outDir, relative(root, path)).replace(/\.ts$/, '.js');
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, output);
  }
}

beforeAll(() => {
  transpile('simulator');
  transpile('shared');
  writeFileSync(join(outDir, 'package.json'), '{"type":"module"}');
  dataDir = mkdtempSync(join(tmpdir(), 'pos-sim-process-'));
});
afterAll(() => {
  child?.kill('SIGKILL');
  rmSync(outDir, { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

/** `runSimulator` in a process of its own with `options` (a JS object literal); its output so far, live. */
function runStandalone(options: string): { stdout: () => string; stderr: () => string; exited: Promise<number | null> } {
  const entry = join(outDir, 'simulator', 'main.js');
  const script = `import(${JSON.stringify(entry)}).then((m) => m.runSimulator({ dataDir: ${JSON.stringify(dataDir)}, port: 0, host: '127.0.0.1', ${options} }))`;
  child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child!.on('close', (code) => resolve(code)));
  return { stdout: () => stdout, stderr: () => stderr, exited };
}

it('starts, prints URL and keys, serves the SDK, logs each request and exits 0 on SIGTERM', async () => {
  const run = runStandalone('');
  const url = await eventually(() => /listening on (http:\/\/\S+)/.exec(run.stdout())?.[1], 'the URL on stdout', 10_000);
  const stdout = run.stdout();
  const secret = /secret key \(test\):\s+(sk_test_\S+)/.exec(stdout)?.[1];
  expect(secret).toBeDefined();
  expect(stdout).toMatch(/publishable key \(live\):\s+pk_live_/);
  expect(stdout).toMatch(/Stripe's rate limits are enforced/);
  const { hostname, port } = new URL(url);
  const stripe = new Stripe(secret!, { host: hostname, port: Number(port), protocol: 'http', maxNetworkRetries: 0 });
  const pi = await stripe.paymentIntents.create({ amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
  expect(pi.status).toBe('succeeded');
  await eventually(() => (/^POST \/v1\/payment_intents 200 req_\w+$/m.test(run.stderr()) ? true : undefined), 'the request line on stderr');
  child!.kill('SIGTERM');
  expect(await run.exited).toBe(0);
});

it('at log level warn writes no line per request', async () => {
  const run = runStandalone("logLevel: 'warn'");
  const url = await eventually(() => /listening on (http:\/\/\S+)/.exec(run.stdout())?.[1], 'the URL on stdout', 10_000);
  const secret = /secret key \(test\):\s+(sk_test_\S+)/.exec(run.stdout())![1]!;
  const { hostname, port } = new URL(url);
  const stripe = new Stripe(secret, { host: hostname, port: Number(port), protocol: 'http', maxNetworkRetries: 0 });
  expect((await stripe.paymentIntents.create({ amount: 1000, currency: 'usd' })).status).toBe('requires_payment_method');
  child!.kill('SIGTERM');
  expect(await run.exited).toBe(0);
  expect(run.stderr()).not.toMatch(/payment_intents/);
});
