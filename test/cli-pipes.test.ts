import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './helpers/api.js';
import { POS_BIN, runCli, THROWAWAY_CONFIG_DIR } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';

// @backend-once what the binary does with a closed pipe and on errors, as a shell sees it.

/** A page of 100 payments as pretty JSON is about 150 KB: more than a 64 KB pipe buffer holds. */
const PAYMENTS = 100;

let t: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestServer();
  const { keys } = await t.merchant('Pipe Shop');
  const api = client(t.url, keys.sk_test);
  for (let i = 0; i < PAYMENTS; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) => api.post('/v1/transactions', { amount: 1000 + i + j, metadata: { order: `order-${i + j}-${'x'.repeat(400)}` } })));
  }
  env = { POS_SERVER_URL: t.url, POS_API_KEY: keys.sk_test };
}, 60_000);
afterAll(() => t.stop());

/** Runs `pos <args> | head -1` in a real shell and reports pos's own exit status and stderr. */
function piped(args: string[], extraEnv: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const quoted = [process.execPath, POS_BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  // A pipeline's status is head's: pos's own goes out on fd 3, the shell's stdout. pos's stderr is
  // the shell's stderr, which the test reads.
  const script = `exec 3>&1; { ${quoted}; echo "$?" >&3; } | head -1 >/dev/null`;
  const child = spawn('sh', ['-c', script], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1', POS_CONFIG_DIR: THROWAWAY_CONFIG_DIR, ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolve) =>
    child.once('close', () => {
      resolve({ status: Number(stdout.trim()), stdout, stderr });
    }),
  );
}

describe('pos writing to a closed pipe', () => {
  it('ends quietly with exit 0 when the reader goes away: tables, --json and the event log', async () => {
    for (const args of [
      ['transactions', 'list', '--size', '100'],
      ['transactions', 'list', '--size', '100', '--json'],
      ['events', 'list', '--size', '100', '--json'],
    ]) {
      const result = await piped(args);
      expect(result.stderr, args.join(' ')).toBe('');
      expect(result.status, args.join(' ')).toBe(0);
    }
  });
});

describe('errors without DEBUG', () => {
  it('are one line on stderr, no stack', async () => {
    const result = await runCli(['transactions', 'get', 'txn_doesnotexist'], { env });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^pos: [^\n]+\n$/);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('stay one line when the server cannot be reached', async () => {
    const result = await runCli(['transactions', 'list'], { env: { ...env, POS_SERVER_URL: 'http://127.0.0.1:9' } });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^pos: [^\n]+\n$/);
  });

  it('show the stack with DEBUG=1', async () => {
    const result = await runCli(['transactions', 'get', 'txn_doesnotexist'], { env: { ...env, DEBUG: '1' } });
    expect(result.stderr).toMatch(/\n\s+at /);
  });
});
