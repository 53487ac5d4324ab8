import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Running `pos`. Nothing here opens the pos store or names the suite's database: a test that only
 * runs the CLI runs once, not again on the PostgreSQL pass (scripts/backend-tests.mjs). What puts a
 * data dir's ledger on the suite's backend is in helpers/server.ts.
 */

export const POS_BIN = fileURLToPath(new URL('../../bin/pos.js', import.meta.url));

/**
 * The `pos` profile directory of every CLI a test runs unless the test names its own: empty and
 * this worker's, so no test reads the developer's ~/.config/pos (a `pos up` run before `npm test`
 * leaves a profile there) or writes to it.
 */
export const THROWAWAY_CONFIG_DIR = mkdtempSync(join(tmpdir(), 'pos-test-config-'));

export interface PosResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `pos` binary without blocking the event loop, so a server started in this same
 * process (startTestServer) keeps answering it. NO_COLOR and a clean environment keep the output
 * stable; `env` adds POS_CONFIG_DIR, POS_API_KEY and the like. Without a POS_CONFIG_DIR of its own a
 * command gets a throwaway one: a test never reads or writes the developer's own profiles.
 */
export function pos(args: string[], env: Record<string, string> = {}, options: { onStdout?: (chunk: string) => void } = {}): Promise<PosResult> {
  const base: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1', POS_CONFIG_DIR: THROWAWAY_CONFIG_DIR };
  const child = spawn(process.execPath, [POS_BIN, ...args], { env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
    options.onStdout?.(c);
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((resolve) =>
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    }),
  );
}

export function json<T = Record<string, unknown>>(r: PosResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${r.status}): ${r.stdout}\n${r.stderr}`);
  }
}
