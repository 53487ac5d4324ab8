import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pos, POS_BIN } from './helpers/cli.js';
import { eventually, tempDir } from './helpers/tmp.js';
import { Tmux } from './helpers/tmux.js';
import { haveScript, haveTmux } from './helpers/tools.js';

/**
 * `pos up` as the shop runs it, in an 80×24 terminal: a signal stops it as quitting does, and its
 * data dir is its own while it runs. Spawned, because signals, terminals and a second process on
 * the same files are the point.
 */
const hasTmux = haveTmux() && haveScript();
const dir = tempDir('pos-up-signals-');
const env = { HOME: dir.path, POS_CONFIG_DIR: join(dir.path, 'config') };
const tmux = new Tmux();
afterAll(() => {
  tmux.kill();
  dir.cleanup();
});

const HIDE_CURSOR = '\u001B[?25l';
const SHOW_CURSOR = '\u001B[?25h';

interface LogLine {
  msg: string;
  signal?: string | null;
  url?: string;
}
const logLines = (dataDir: string): LogLine[] =>
  readFileSync(join(dataDir, 'pos-up.log'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

interface Up {
  session: string;
  dataDir: string;
  pid: number;
  port: number;
  /** The exit status, written by the shell around `pos up` (tmux does not always keep it). */
  exitStatus: () => string | undefined;
  /** Every byte `pos up` wrote to its terminal so far, as `script` recorded them. */
  written: () => string;
}

/** `pos up` with its TUI in a tmux session at 80×24; resolves once the counter's intro is on screen. */
async function upInTmux(session: string, dataDir: string, extraArgs: string[], extraEnv: Record<string, string> = {}): Promise<Up> {
  const statusFile = join(dir.path, `${session}.status`);
  const scriptFile = join(dir.path, `${session}.sh`);
  const typescript = join(dir.path, `${session}.typescript`);
  const vars = Object.entries({ ...env, ...extraEnv }).map(([k, v]) => `${k}="${v}"`);
  const command = [...vars, process.execPath, POS_BIN, 'up', '--port', '0', '--data-dir', dataDir, ...extraArgs].map((a) => (a.includes('=') ? a : `"${a}"`)).join(' ');
  writeFileSync(scriptFile, `${command}\n`);
  // `script` between tmux and `pos up` keeps every byte written to the terminal (flushed as written,
  // -f), so what the terminal was told last can be read, not only what tmux shows; -e passes the exit status on.
  tmux.start(session, ['sh', '-c', `script -qfe -c "sh ${scriptFile}" "${typescript}"; echo $? > "${statusFile}"`]);
  await tmux.waitFor(session, 'Press any key to open the counter', 40_000);
  const lock = JSON.parse(readFileSync(join(dataDir, 'pos.lock'), 'utf8')) as { pid: number; port: number | null };
  return {
    session,
    dataDir,
    pid: lock.pid,
    port: lock.port ?? -1,
    exitStatus: () => (existsSync(statusFile) ? readFileSync(statusFile, 'utf8').trim() || undefined : undefined),
    written: () => readFileSync(typescript, 'latin1'),
  };
}

async function stoppedCleanly(up: Up, signal: NodeJS.Signals): Promise<void> {
  const from = logLines(up.dataDir).length;
  const before = up.written();
  // The counter hid the cursor while it ran (else showing it again would prove nothing).
  expect(before).toContain(HIDE_CURSOR);
  process.kill(up.pid, signal);
  // A stop drains the server and closes the agent and the simulator: seconds, more on a busy machine.
  const status = await eventually(up.exitStatus, 40_000);
  expect(status, tmux.screen(up.session)).toBe('0');
  const lines = logLines(up.dataDir).slice(from);
  const msgs = lines.map((l) => l.msg);
  expect(lines.find((l) => l.msg === 'pos up stopping')?.signal).toBe(signal);
  // In order: the agent first, then the server drained, then the last word.
  expect(msgs.indexOf('pos agent stopped')).toBeGreaterThan(msgs.indexOf('pos up stopping'));
  expect(msgs.indexOf('pos server stopped')).toBeGreaterThan(msgs.indexOf('pos agent stopped'));
  expect(msgs.indexOf('pos up stopped')).toBeGreaterThan(msgs.indexOf('pos server stopped'));
  // The terminal is given back: after the signal, the cursor is shown again and not hidden after.
  const after = up.written();
  expect(after.startsWith(before)).toBe(true);
  const tail = after.slice(before.length);
  expect(tail).toContain(SHOW_CURSOR);
  expect(tail.lastIndexOf(SHOW_CURSOR)).toBeGreaterThan(tail.lastIndexOf(HIDE_CURSOR));
  // The data dir is free.
  expect(existsSync(join(up.dataDir, 'pos.lock'))).toBe(false);
}

type Config = { current_profile: string; profiles: Record<string, { server?: string }> };
const config = () => JSON.parse(readFileSync(join(env.POS_CONFIG_DIR, 'config.json'), 'utf8')) as Config;

describe.skipIf(!hasTmux)('pos up on a terminal', () => {
  it('keeps its data dir and profile to itself, and stops as quitting does on SIGTERM and SIGHUP', async () => {
    const shop = join(dir.path, 'shop');
    const agentPort = await freePort();
    const first = await upInTmux('term', shop, [], { POS_AGENT_LISTEN: `127.0.0.1:${agentPort}` });
    expect(first.port).toBeGreaterThan(0);
    expect(logLines(shop).find((l) => l.msg === 'pos agent listening')?.url).toBe(`ws://127.0.0.1:${agentPort}`);

    const refused = await Promise.all([['up', '--no-tui', '--port', '0'], ['server', '--port', '0']].map((args) => pos([...args, '--data-dir', shop], env)));
    for (const second of refused) {
      expect(second.status, second.stderr).toBe(2);
      expect(second.stderr).toContain(`in use by pos up (pid ${first.pid}, port ${first.port})`);
    }
    const before = config();
    expect(before.profiles[before.current_profile]?.server).toBe(`http://127.0.0.1:${first.port}`);

    // Another data dir, whose last holder died without a word: its lock is taken over. The profile
    // stays with the running `pos up` that made it; this one saves to a profile of its own.
    const other = join(dir.path, 'other');
    mkdirSync(other, { recursive: true, mode: 0o700 });
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(other, 'pos.lock'), JSON.stringify({ pid: Number(dead.stdout), port: 4242, command: 'pos up', started_at: new Date().toISOString() }));
    const otherAgent = await freePort();
    const second = await upInTmux('hup', other, ['--agent-listen', `127.0.0.1:${otherAgent}`]);
    expect(second.pid).not.toBe(Number(dead.stdout));
    expect(logLines(other).find((l) => l.msg === 'pos agent listening')?.url).toBe(`ws://127.0.0.1:${otherAgent}`);
    const after = config();
    expect(after.current_profile).toBe(before.current_profile);
    expect(after.profiles[before.current_profile]).toEqual(before.profiles[before.current_profile]);
    expect(after.profiles.local?.server).toBe(`http://127.0.0.1:${second.port}`);

    await stoppedCleanly(second, 'SIGHUP');
    await stoppedCleanly(first, 'SIGTERM');
  }, 240_000);
});
