import { type ChildProcess, spawn } from 'node:child_process';
import { afterEach } from 'vitest';
import { Writable } from 'node:stream';
import pino from 'pino';
import Stripe from 'stripe';
import { loadServerConfig, type Env, type ServerFlags } from '../../shared/config.js';
import type { RunningServer } from '../../server/main.js';
import { startStack, type Stack, type StackOptions } from '../../cli/stack.js';
import { createMerchant, type CreatedMerchant } from '../../server/accounts/merchants.js';
import { systemClock } from '../../shared/time.js';
import { POS_BIN, pos, type PosResult, runCli } from './cli.js';
import { backendEnv, backendFlags, releaseDataDir, seedDataDir } from './db.js';
import { tempDir } from './tmp.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../simulator/index.js';

export interface TestServer {
  url: string;
  dataDir: string;
  server: RunningServer;
  stack: Stack;
  merchant(name?: string): Promise<CreatedMerchant>;
  /**
   * Stops this server as `pos server` stops and starts another on the same data dir (and schema),
   * with `flags` instead of this one's: a restart without leaving the process. The new server owns
   * the data dir from then on; this one must not be used again.
   */
  restart(flags?: ServerFlags, options?: StackOptions, env?: Env): Promise<TestServer>;
  stop(): Promise<void>;
}

/**
 * An in-process server on a real port and a temporary data dir, configured from flags and `env` as
 * `pos server` is (never from this process's own environment).
 */
export async function startTestServer(flags: ServerFlags = {}, options: StackOptions = {}, env: Env = {}): Promise<TestServer> {
  const dir = tempDir();
  seedDataDir(dir.path);
  return startOn(dir, flags, options, env);
}

async function startOn(dir: { path: string; cleanup(): void }, flags: ServerFlags, options: StackOptions, env: Env): Promise<TestServer> {
  const config = loadServerConfig({ port: 0, dataDir: dir.path, logLevel: 'silent', ...backendFlags(dir.path), ...flags }, env);
  const stack = await startStack(config, { logger: pino({ level: 'silent' }), ...options });
  const server = stack.server;
  return {
    url: server.url,
    dataDir: dir.path,
    server,
    stack,
    merchant: (name = 'Test Shop') => createMerchant(server.store, systemClock, { businessName: name }),
    async restart(nextFlags = {}, nextOptions = {}, nextEnv = {}) {
      await stack.close();
      return startOn(dir, nextFlags, nextOptions, nextEnv);
    },
    async stop() {
      await stack.close();
      await releaseDataDir(dir.path);
      dir.cleanup();
    },
  };
}

/** Log lines a test reads: a pino logger at `level` writing into `lines`, one JSON object a line. */
export function capturedLogger(lines: string[], level: pino.Level = 'info'): pino.Logger {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return pino({ level }, sink);
}

/** The `pos admin <args>` binary on a data dir, its ledger on the suite's backend (helpers/db.ts) like a server's on it. */
export function posAdmin(dataDir: string, args: string[], env: Record<string, string> = {}): Promise<PosResult> {
  return pos(['admin', ...args, '--data-dir', dataDir], { ...backendEnv(dataDir), ...env });
}

/** A merchant made by `pos admin merchant create` on a data dir, with its keys. */
export interface AdminMerchant {
  id: string;
  business_name: string;
  country: string;
  default_currency: string;
  api_keys: { sk_test: string; sk_live: string; pk_test: string; pk_live: string };
}

/** Run in this process: the binary's admin commands are lifecycle.test.ts's to test. */
export async function adminMerchant(dataDir: string, businessName: string): Promise<AdminMerchant> {
  const made = await runCli(['admin', 'merchant', 'create', '--business-name', businessName, '--json', '--data-dir', dataDir], { env: backendEnv(dataDir) });
  if (made.status !== 0) throw new Error(`pos admin merchant create exited ${made.status}: ${made.stderr}`);
  return JSON.parse(made.stdout) as AdminMerchant;
}

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  logs: string[];
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>;
}

/**
 * How long a spawned `pos server` may take to say it listens: about a second when the machine is
 * idle, but a fresh clone's suite on a slow 2-core host, three files at once, saw 15 s pass with
 * PostgreSQL migrating for several schemas at once; 25 s stays inside the 30 s hook timeout.
 */
const SPAWN_START_MS = 25_000;

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
    const timer = setTimeout(() => reject(new Error(`server did not start: ${logs.join('\n')}`)), options.startTimeoutMs ?? SPAWN_START_MS);
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

/**
 * Seeded data dirs and spawned `pos server`s for one test file, each removed or killed (SIGKILL,
 * when it has not exited) after every test, so a failed assertion leaves no server behind.
 */
export function spawnedServers(): { dataDir(): string; serverOn(dir: string): Promise<ServerProcess> } {
  const cleanups: (() => void | Promise<void>)[] = [];
  afterEach(async () => {
    for (const fn of cleanups.splice(0).reverse()) await fn();
  });
  return {
    dataDir() {
      const dir = tempDir();
      cleanups.push(dir.cleanup);
      seedDataDir(dir.path);
      return dir.path;
    },
    async serverOn(dir) {
      const server = await spawnServer(dir);
      cleanups.push(async () => {
        if (server.child.exitCode === null) {
          server.child.kill('SIGKILL');
          await server.exited;
        }
      });
      return server;
    },
  };
}

/** An API instance and two workers on one database, pointed at one simulator (server/main.ts roles). */
export interface RoleStacks {
  sim: RunningSimulator;
  /** The platform's webhook endpoint on the simulator, whose secret the instances verify with. */
  hook: Stripe.WebhookEndpoint;
  platform: Stripe;
  api: Stack;
  workers: Stack[];
  close(): Promise<void>;
}

/**
 * Starts a simulator with a platform webhook endpoint, then an `api` instance and two `worker`
 * instances in process on the data dir's backend (PostgreSQL in the suite's PostgreSQL pass);
 * `flags` are added to every instance's. The caller's cleanup calls `close()`, which also releases
 * the data dir.
 */
export async function startRoleStacks(dataDir: string, simDataDir: string, flags: ServerFlags = {}, simulator: Partial<SimulatorOptions> = {}): Promise<RoleStacks> {
  seedDataDir(dataDir);
  const sim = await startSimulator({ dataDir: simDataDir, logger: () => undefined, ...simulator });
  const platform = new Stripe(sim.keys.secretTest, { host: sim.host, port: sim.port, protocol: 'http' });
  const hook = await platform.webhookEndpoints.create({ url: 'http://127.0.0.1:9/', enabled_events: ['*'] });
  const env = {
    POS_PROCESSOR: 'stripe',
    STRIPE_API_BASE: sim.url,
    STRIPE_SECRET_KEY_TEST: sim.keys.secretTest,
    STRIPE_PUBLISHABLE_KEY_TEST: sim.keys.publishableTest,
    STRIPE_WEBHOOK_SECRET: hook.secret ?? '',
  };
  const start = (role: string) =>
    startStack(loadServerConfig({ role, port: 0, dataDir, logLevel: 'silent', ...flags, ...backendFlags(dataDir) }, env), { logger: pino({ level: 'silent' }) });
  // Started one by one so that a failed start closes whatever did start, the simulator included.
  const stacks: Stack[] = [];
  try {
    for (const role of ['api', 'worker', 'worker']) stacks.push(await start(role));
  } catch (err) {
    for (const s of stacks) await s.close();
    await sim.close();
    throw err;
  }
  const [api, ...workers] = stacks as [Stack, ...Stack[]];
  return {
    sim,
    hook,
    platform,
    api,
    workers,
    async close() {
      await api.close();
      for (const w of workers) await w.close();
      await sim.close();
      await releaseDataDir(dataDir);
    },
  };
}
