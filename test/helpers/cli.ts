import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { run } from '../../cli/main.js';

/**
 * Running `pos`: in this process (runCli), the default, or as the real binary (pos) where the
 * process is the point: signals, pipes, exit codes as the shell sees them, one smoke test per
 * command family. Nothing here opens the pos store or names the suite's database: a test that only
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
  const child = spawn(process.execPath, [POS_BIN, ...args], { env: { ...baseEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
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

/** What every run of `pos` starts from: no colour, a throwaway profile directory, nothing of this process's own. */
function baseEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1', POS_CONFIG_DIR: THROWAWAY_CONFIG_DIR };
}

/** A stream that keeps what is written to it. */
function collector(onWrite?: (chunk: string) => void): { stream: Writable; text: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      chunks.push(text);
      onWrite?.(text);
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

/**
 * Runs `pos` in this process: the program the binary runs (cli/main.ts), on streams it returns and
 * the environment `pos()` would give the binary plus `env`. The exit code is returned, not set on
 * this process. `tty` makes a stream say it is a terminal (a prompt, colour); what depends on being a
 * separate process (signals, a closed pipe, a real terminal) needs `pos()`.
 */
export async function runCli(
  args: string[],
  options: { env?: Record<string, string>; stdin?: string; tty?: { stdin?: boolean; stdout?: boolean; stderr?: boolean }; onStdout?: (chunk: string) => void } = {},
): Promise<PosResult> {
  const stdout = collector(options.onStdout);
  const stderr = collector();
  const stdin = Readable.from(options.stdin === undefined ? [] : [options.stdin]);
  // What a command asks of a terminal is whether it has one (isTTY): a person typing is `stdin`'s text.
  const tty = options.tty ?? {};
  const status = await run(args, {
    stdout: Object.assign(stdout.stream, { isTTY: Boolean(tty.stdout) }),
    stderr: Object.assign(stderr.stream, { isTTY: Boolean(tty.stderr) }),
    stdin: Object.assign(stdin, { isTTY: Boolean(tty.stdin) }),
    env: { ...baseEnv(), ...options.env },
  });
  // Writes already made finish in the same turn; one more lets any queued behind them through.
  await new Promise((resolve) => setImmediate(resolve));
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}

export function json<T = Record<string, unknown>>(r: PosResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${r.status}): ${r.stdout}\n${r.stderr}`);
  }
}
