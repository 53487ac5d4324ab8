import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { pinPid, pinTo } from './wrk.js';

export const POS_BIN = fileURLToPath(new URL('../../bin/pos.js', import.meta.url));
const BASELINE_SERVER = fileURLToPath(new URL('./baseline-server.js', import.meta.url));
const FLOOR_SERVER = fileURLToPath(new URL('./floor-server.js', import.meta.url));
const WEBHOOK_RECEIVER = fileURLToPath(new URL('./webhook-receiver.js', import.meta.url));

/**
 * How long a server may take to print its URL. `pos server` migrates and opens the simulator first;
 * on a cold disk with a 1M-row database that is a few seconds, so 30 s means it is stuck.
 */
const START_TIMEOUT_MS = 30_000;

/** Readiness polling interval while waiting for /healthz: start-up takes ~0.5-2 s. */
const PROBE_INTERVAL_MS = 100;

/** How long a server may take to drain and exit on SIGTERM before it is killed. */
const STOP_TIMEOUT_MS = 10_000;

/** Output lines kept per server for error messages (a server at info logs every request). */
const LOG_TAIL_LINES = 40;

export interface ServerChild {
  url: string;
  /** The server's own process (taskset execs it, so this is node's pid). */
  pid: number;
  /** The last lines of its output (stdout and stderr), for error messages. */
  logs: string[];
  stop(): Promise<void>;
}

/**
 * Spawns a server and resolves once one of its stdout JSON lines carries `url`
 * (`pos server` logs `{"msg":"pos server listening","url":…}`, the baseline prints `{"url":…}`),
 * or, with `probe`, once `probe.url + probe.path` answers 200.
 */
function spawnServer(
  argv: string[],
  isReady: (entry: { msg?: string; url?: string }) => boolean,
  probe?: { url: string; path: string },
  env: Record<string, string> = {},
): Promise<ServerChild> {
  const child: ChildProcess = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const logs: string[] = [];
  const keep = (line: string): void => {
    logs.push(line);
    if (logs.length > LOG_TAIL_LINES) logs.shift();
  };
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  return new Promise<ServerChild>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`${argv.join(' ')} did not start within ${START_TIMEOUT_MS / 1000} s:\n${logs.join('\n')}`));
    }, START_TIMEOUT_MS);
    let buffer = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (let newline = buffer.indexOf('\n'); newline >= 0; newline = buffer.indexOf('\n')) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(newline + 1);
        keep(line);
        let entry: { msg?: string; url?: string };
        try {
          entry = JSON.parse(line) as { msg?: string; url?: string };
        } catch {
          continue;
        }
        if (entry.url && isReady(entry)) {
          clearTimeout(timer);
          settled = true;
          resolve({ url: entry.url, pid: child.pid!, logs, stop });
        }
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => keep(chunk.trimEnd()));
    let settled = false;
    if (probe) {
      const poll = (): void => {
        if (settled) return;
        fetch(probe.url + probe.path).then(
          (response) => {
            if (response.ok) {
              clearTimeout(timer);
              settled = true;
              resolve({ url: probe.url, pid: child.pid!, logs, stop });
            } else setTimeout(poll, PROBE_INTERVAL_MS);
          },
          () => setTimeout(poll, PROBE_INTERVAL_MS),
        );
      };
      poll();
    }
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      settled = true;
      reject(new Error(`${argv.join(' ')} exited (${signal ?? code}) before listening:\n${logs.join('\n')}`));
    });
  });
}

/** The hello-world baseline (bench/baseline-server.ts); `servedAsPos` serves it as pos serves its apps. */
export function startBaseline(cpu: number, cores: number, servedAsPos = false): Promise<ServerChild> {
  return spawnServer(pinTo(cpu, [process.execPath, BASELINE_SERVER, ...(servedAsPos ? ['--served-as-pos'] : [])], cores), () => true);
}

/** The create floor (bench/floor-server.ts): Express plus one stripe SDK call to a canned processor. */
export function startFloor(cpu: number, cores: number, servedAsPos = false): Promise<ServerChild> {
  return spawnServer(pinTo(cpu, [process.execPath, FLOOR_SERVER, ...(servedAsPos ? ['--served-as-pos'] : [])], cores), () => true);
}

/** The merchant's receiver of the webhook scenarios (bench/webhook-receiver.ts). */
export function startWebhookReceiver(cpu: number, cores: number): Promise<ServerChild> {
  return spawnServer(pinTo(cpu, [process.execPath, WEBHOOK_RECEIVER], cores), () => true);
}

/** A port nobody listens on right now (the OS picks it); the tiny race until the server binds it is harmless here. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * `pos server` as shipped, with the embedded simulator. The rate limit is lifted (the benchmark is
 * one merchant sending far more than any real one), and so are the simulator's Stripe rate limits
 * and with them the server's processor budget (POS_SIMULATOR_RATE_LIMITS=off: a throughput
 * benchmark measures our code, not Stripe's 25 requests a second), and logging is at warn so the
 * access log isn't what is measured. At warn the "pos server listening" line (info) is not printed, so the port is
 * chosen here and readiness is /healthz; the log line still wins if a build prints it.
 */
export async function startPos(dataDir: string, cpu: number, cores: number, env: Record<string, string> = {}, simulatorCpu?: number): Promise<ServerChild> {
  const port = await freePort();
  const argv = [process.execPath, POS_BIN, 'server', '--port', String(port), '--data-dir', dataDir, '--rate-limit', '100000000', '--log-level', 'warn'];
  const server = await spawnServer(pinTo(cpu, argv, cores), (entry) => entry.msg === 'pos server listening', { url: `http://127.0.0.1:${port}`, path: '/healthz' }, { POS_SIMULATOR_RATE_LIMITS: 'off', ...env });
  // The embedded simulator runs in a child process, which inherits the server's CPU; placed on
  // another CPU it has the second core a newcomer's unpinned `pos server` would give it.
  if (simulatorCpu !== undefined) for (const child of childPids(server.pid)) pinPid(simulatorCpu, child, cores);
  return server;
}

/** The processes `pid` started (/proc/<pid>/task/<tid>/children), none where the kernel does not say. */
export function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** The CPU ticks of one second (`getconf CLK_TCK`), the unit of /proc/<pid>/stat's times. */
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU time a process has used so far (user + system, all its threads), in ms, from /proc/<pid>/stat. */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which may hold spaces, closed by the last ')': utime is the 12th, stime the 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

/** `pos server` and the standalone `pos simulator` it calls, in two processes (the bench's split mode). */
export interface SplitPos {
  server: ServerChild;
  simulator: ServerChild;
  stop(): Promise<void>;
}

/**
 * The split mode: `pos simulator` on its own data dir's state, its environment for servers printed
 * by `pos simulator env` (keys and webhook secrets, with the server's address as the webhook URL),
 * and `pos server --processor stripe` pointed at it, each pinned to its own CPU. Rate limits off
 * and logging at warn on both, as in `startPos` (the simulator's line per request is a synchronous
 * write to stderr: the log is not what is measured).
 */
export async function startSplit(dataDir: string, placement: { serverCpu: number; simulatorCpu: number; cores: number }): Promise<SplitPos> {
  const [port, simulatorPort] = [await freePort(), await freePort()];
  const env = execFileSync(process.execPath, [POS_BIN, 'simulator', 'env', '--port', String(simulatorPort), '--data-dir', dataDir, '--webhook-url', `http://127.0.0.1:${port}/processor/webhooks`], { encoding: 'utf8' });
  const serverEnv: Record<string, string> = { POS_SIMULATOR_RATE_LIMITS: 'off' };
  for (const line of env.split('\n')) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line);
    if (match) serverEnv[match[1]!] = match[2]!;
  }
  const simArgv = [process.execPath, POS_BIN, 'simulator', '--port', String(simulatorPort), '--data-dir', dataDir, '--log-level', 'warn'];
  const simulator = await spawnServer(pinTo(placement.simulatorCpu, simArgv, placement.cores), () => false, { url: `http://127.0.0.1:${simulatorPort}`, path: '/_sim/rate_limits' }, { POS_SIMULATOR_RATE_LIMITS: 'off' });
  try {
    const argv = [process.execPath, POS_BIN, 'server', '--port', String(port), '--data-dir', dataDir, '--rate-limit', '100000000', '--log-level', 'warn'];
    const server = await spawnServer(pinTo(placement.serverCpu, argv, placement.cores), (entry) => entry.msg === 'pos server listening', { url: `http://127.0.0.1:${port}`, path: '/healthz' }, serverEnv);
    return {
      server,
      simulator,
      async stop() {
        await server.stop();
        await simulator.stop();
      },
    };
  } catch (err) {
    await simulator.stop();
    throw err;
  }
}

export interface BenchMerchant {
  id: string;
  secretKey: string;
}

/** A merchant made by the real admin CLI, as an operator would (`env` may point it at PostgreSQL). */
export function createMerchant(dataDir: string, businessName: string, env: Record<string, string> = {}): BenchMerchant {
  const out = execFileSync(process.execPath, [POS_BIN, 'admin', 'merchant', 'create', '--business-name', businessName, '--data-dir', dataDir, '--json'], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
  });
  const parsed = JSON.parse(out) as { id: string; api_keys: { sk_test: string } };
  return { id: parsed.id, secretKey: parsed.api_keys.sk_test };
}

/** Median wall time of `runs` spawns of `pos --help`, in ms. */
export function helpWallTimeMs(runs: number): { medianMs: number; samplesMs: number[] } {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = process.hrtime.bigint();
    const result = spawnSync(process.execPath, [POS_BIN, '--help'], { stdio: 'ignore' });
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6;
    if (result.status !== 0) throw new Error(`pos --help exited with ${result.status}`);
    samples.push(Math.round(elapsed * 10) / 10);
  }
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { medianMs: Math.round(median * 10) / 10, samplesMs: samples };
}
