import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { loadServerConfig, type ServerFlags } from '../../shared/config.js';
import type { RunningServer } from '../../server/main.js';
import { startStack, type Stack, type StackOptions } from '../../cli/stack.js';
import { createMerchant, type CreatedMerchant } from '../../server/accounts/merchants.js';
import { systemClock } from '../../shared/time.js';
import { backendEnv, backendFlags, dropSchemaOf } from './db.js';
import { tempDir } from './tmp.js';

export const POS_BIN = fileURLToPath(new URL('../../bin/pos.js', import.meta.url));

/**
 * The `pos` profile directory of every CLI a test spawns unless the test names its own: empty and
 * this worker's, so no test reads the developer's ~/.config/pos (a `pos up` run before `npm test`
 * leaves a profile there) or writes to it.
 */
export const THROWAWAY_CONFIG_DIR = mkdtempSync(join(tmpdir(), 'pos-test-config-'));

export interface TestServer {
  url: string;
  dataDir: string;
  server: RunningServer;
  stack: Stack;
  merchant(name?: string): Promise<CreatedMerchant>;
  stop(): Promise<void>;
}

/** An in-process server on a real port and a temporary data dir. */
export async function startTestServer(flags: ServerFlags = {}, options: StackOptions = {}): Promise<TestServer> {
  const dir = tempDir();
  const config = loadServerConfig({ port: 0, dataDir: dir.path, logLevel: 'silent', ...backendFlags(dir.path), ...flags }, {});
  const stack = await startStack(config, { logger: pino({ level: 'silent' }), ...options });
  const server = stack.server;
  return {
    url: server.url,
    dataDir: dir.path,
    server,
    stack,
    merchant: (name = 'Test Shop') => createMerchant(server.store, systemClock, { businessName: name }),
    async stop() {
      await stack.close();
      await dropSchemaOf(dir.path);
      dir.cleanup();
    },
  };
}

/** A command naming `--data-dir D` gets D's ledger on the suite's backend (see helpers/db.ts). */
function dataDirBackend(args: string[]): Record<string, string> {
  const at = args.indexOf('--data-dir');
  const dir = at >= 0 ? args[at + 1] : undefined;
  return dir ? backendEnv(dir) : {};
}

/** Runs the real `pos` executable to completion. */
export function runPos(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [POS_BIN, ...args], { encoding: 'utf8', env: { ...process.env, POS_CONFIG_DIR: THROWAWAY_CONFIG_DIR, ...dataDirBackend(args), ...env }, timeout: 20_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  logs: string[];
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/** Starts `pos server` as a real child process on an ephemeral port; the URL comes from its JSON log. */
export async function spawnServer(dataDir: string, extraArgs: string[] = [], env: Record<string, string> = {}, options: { startTimeoutMs?: number } = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [POS_BIN, 'server', '--port', '0', '--data-dir', dataDir, ...extraArgs], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...backendEnv(dataDir), ...env },
  });
  const logs: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${logs.join('\n')}`)), options.startTimeoutMs ?? 15_000);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        logs.push(line);
        try {
          const entry = JSON.parse(line) as { url?: string; msg?: string };
          if (entry.msg === 'pos server listening' && entry.url) {
            clearTimeout(timer);
            resolve(entry.url);
          }
        } catch {
          // not a log line
        }
        newline = buffer.indexOf('\n');
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => logs.push(chunk));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}: ${logs.join('\n')}`));
    });
  });
  return { child, url, logs, exited };
}
