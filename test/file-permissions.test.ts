import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgent, type RunningAgent } from '../agent/agent.js';
import { DataDirLock } from '../cli/data-dir-lock.js';
import { startStack } from '../cli/stack.js';
import { loadAgentConfig, loadServerConfig } from '../shared/config.js';
import { json, pos, POS_BIN, runCli } from './helpers/cli.js';
import { backendEnv, backendFlags, dropSchemaOf, TEST_DATABASE_URL } from './helpers/db.js';
import { capturedLogger } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';

// @backend-once the modes of files in the data dir, the simulator's and the CLI's; PostgreSQL keeps none there.

/**
 * Keys, payments and customers' data on disk are readable by their owner only, whatever the umask:
 * the server's stack (with its embedded simulator), `pos simulator`, the agent, the admin commands
 * and a CLI profile, each started under the usual umask 022, which would make everything they
 * create world-readable (0644, directories 0755). The umask is this test worker's, a process of its
 * own: what runs in it and the children it starts (`pos simulator`, `pos config`) make files under it.
 */

const modeOf = (path: string): number => statSync(path).mode & 0o777;

/** Every file and directory under `root` (itself included) with its permission bits, as `0644`. */
function modesUnder(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (path: string): void => {
    const stats = lstatSync(path);
    out[relative(root, path) || '.'] = `0${(stats.mode & 0o777).toString(8)}`;
    if (stats.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(root);
  return out;
}

/** The entries of `modes` that are open to the group or others. */
function openToOthers(modes: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(modes).filter(([, mode]) => (Number.parseInt(mode, 8) & 0o077) !== 0));
}

let umask: number;
let tmp: ReturnType<typeof tempDir>;
beforeAll(() => {
  umask = process.umask(0o022);
  tmp = tempDir('pos-perms-');
});
afterAll(() => {
  process.umask(umask);
  tmp.cleanup();
});

it('under umask 022 a file made without the helper is world-readable (what the rest guards against)', () => {
  const control = join(tmp.path, 'control');
  writeFileSync(control, 'x');
  expect(modeOf(control)).toBe(0o644);
});

describe('the server, its simulator, the admin commands and the agent', () => {
  const dataDir = () => join(tmp.path, 'data');
  /** What `pos server` runs (cli/commands/server-action.ts): its lock on the data dir, then its stack. */
  const serverOn = async (dir: string, logs: string[] = []): Promise<{ url: string; close(): Promise<void> }> => {
    const lock = DataDirLock.acquire(dir, 'pos server');
    try {
      const stack = await startStack(loadServerConfig({ port: 0, dataDir: dir, ...backendFlags(dir) }, {}), { logger: capturedLogger(logs) });
      lock.listening(stack.server.port);
      return {
        url: stack.server.url,
        async close() {
          await stack.close();
          lock.release();
        },
      };
    } catch (err) {
      lock.release();
      throw err;
    }
  };
  const agentDir = () => join(tmp.path, 'agent');
  afterAll(() => dropSchemaOf(dataDir()));

  it('make a fresh data dir and every file in it owner-only, and tighten loose ones on the next start with a warning', async () => {
    const server = await serverOn(dataDir());
    let agent: RunningAgent | undefined;
    try {
      // The admin command writes to the same data dir (its own connection to the ledger).
      const created = await runCli(['admin', 'merchant', 'create', '--business-name', 'Private Shop', '--data-dir', dataDir(), '--json'], { env: backendEnv(dataDir()) });
      expect(created.status, created.stderr).toBe(0);
      expect(created.stderr).toBe('');
      const key = json<{ api_keys: { sk_test: string } }>(created).api_keys.sk_test;
      const agentLog: string[] = [];
      agent = await startAgent(loadAgentConfig({ server: server.url, apiKey: key, dataDir: agentDir(), listen: '127.0.0.1:0', simulate: 1 }, {}), { logger: capturedLogger(agentLog) });
      await eventually(() => (agentLog.some((line) => (JSON.parse(line) as { msg?: string }).msg === 'upstream connected') ? true : undefined), 15_000);

      // While both run: the ledger's -wal and -shm exist only then (SQLite removes them on close).
      const running = modesUnder(dataDir());
      const sqliteFiles = TEST_DATABASE_URL ? [] : ['pos.db', 'pos.db-wal', 'pos.db-shm'];
      expect(Object.keys(running)).toEqual(expect.arrayContaining(['.', 'simulator', 'simulator/simulator.db', 'simulator/simulator.db-wal', 'simulator/simulator.db-shm', ...sqliteFiles]));
      expect(openToOthers(running)).toEqual({});
      expect(running['.']).toBe('0700');
      expect(running['simulator']).toBe('0700');
      for (const file of ['simulator/simulator.db', 'simulator/simulator.db-wal', 'simulator/simulator.db-shm', ...sqliteFiles]) expect(running[file], file).toBe('0600');

      // The agent's SQLite file and the -wal and -shm files SQLite makes beside it: owner-only as well.
      const agentFiles = modesUnder(agentDir());
      expect(agentFiles).toMatchObject({ '.': '0700', 'agent.db': '0600', 'agent.db-wal': '0600', 'agent.db-shm': '0600' });
      expect(openToOthers(agentFiles)).toEqual({});
    } finally {
      await agent?.close();
      await server.close();
    }
    expect(openToOthers(modesUnder(dataDir()))).toEqual({});

    // Files an older version (or a hand) left open: the server makes them owner-only and says so,
    // one warning each naming the file and its old mode.
    const loose = [dataDir(), join(dataDir(), 'simulator', 'simulator.db'), ...(TEST_DATABASE_URL ? [] : [join(dataDir(), 'pos.db')])];
    chmodSync(dataDir(), 0o755);
    for (const file of loose.slice(1)) chmodSync(file, 0o644);
    const logs: string[] = [];
    const again = await serverOn(dataDir(), logs);
    try {
      const warnings = logs.flatMap((line) => {
        try {
          const entry = JSON.parse(line) as { level: number; msg: string; path?: string; mode?: string; tightened?: boolean };
          return entry.tightened === undefined ? [] : [entry];
        } catch {
          return [];
        }
      });
      expect(warnings.map((w) => [w.level, w.path, w.mode, w.tightened]).sort()).toEqual(loose.map((path) => [40, path, path === dataDir() ? '0755' : '0644', true]).sort());
      expect(warnings.find((w) => w.path === dataDir())?.msg).toBe(`${dataDir()} was open to other users (mode 0755); made it owner-only (0700)`);
      expect(openToOthers(modesUnder(dataDir()))).toEqual({});
    } finally {
      await again.close();
    }
  });
});

it('pos simulator on its own makes its data dir and store owner-only', async () => {
  const dataDir = join(tmp.path, 'sim');
  const child = spawn(process.execPath, [POS_BIN, 'simulator', '--port', '0', '--data-dir', dataDir], { stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  try {
    await eventually(() => (/listening on http/.test(output) ? true : undefined), 15_000);
    const modes = modesUnder(dataDir);
    expect(modes).toMatchObject({ '.': '0700', simulator: '0700', 'simulator/simulator.db': '0600', 'simulator/simulator.db-wal': '0600', 'simulator/simulator.db-shm': '0600' });
    expect(openToOthers(modes)).toEqual({});
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
  expect(output).not.toMatch(/warning/);
});

it('a CLI profile is written owner-only, and a loose one is tightened with a warning on stderr', async () => {
  const configDir = join(tmp.path, 'config', 'pos');
  const env = { POS_CONFIG_DIR: configDir };
  const set = await pos(['config', 'set', 'api_key', 'sk_test_notarealkey'], env);
  expect(set.status, set.stderr).toBe(0);
  expect(modesUnder(join(tmp.path, 'config'))).toEqual({ '.': '0700', pos: '0700', 'pos/config.json': '0600' });

  chmodSync(configDir, 0o755);
  chmodSync(join(configDir, 'config.json'), 0o644);
  const list = await pos(['config', 'list'], env);
  expect(list.status, list.stderr).toBe(0);
  const file = join(configDir, 'config.json');
  expect(list.stderr.trim().split('\n')).toEqual([
    `pos: warning: ${configDir} was open to other users (mode 0755); made it owner-only (0700)`,
    `pos: warning: ${file} was open to other users (mode 0644); made it owner-only (0600)`,
  ]);
  expect(modeOf(configDir)).toBe(0o700);
  expect(modeOf(file)).toBe(0o600);
  expect(existsSync(join(configDir, '.config.json.tmp'))).toBe(false);
});
