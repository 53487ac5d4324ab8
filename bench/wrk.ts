import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The Lua script sits in the source tree; tsc does not copy it to dist/. */
const SCENARIO_LUA = fileURLToPath(new URL('../../bench/wrk/scenario.lua', import.meta.url));

/**
 * wrk's socket timeout. Its default (2 s) would count a slow write stalled behind a batch as a
 * timeout and hide it from the latency figures; 10 s is far beyond any latency we'd accept, so
 * anything slower is a real hang.
 */
const WRK_TIMEOUT = '10s';

/** How long a wrk run may overrun its duration (connection setup, done()) before we kill it. */
const WRK_GRACE_MS = 30_000;

function onPath(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** Installs wrk with apt-get when it is missing; throws with the reason when that is impossible. */
export function ensureWrk(log: (line: string) => void): string {
  if (!onPath('wrk')) {
    if (!onPath('apt-get')) throw new Error('wrk is not installed and apt-get is not available: install wrk (https://github.com/wg/wrk) and run again');
    log('wrk not found: installing it with apt-get');
    const update = spawnSync('apt-get', ['update'], { stdio: 'inherit' });
    const install = update.status === 0 ? spawnSync('apt-get', ['install', '-y', 'wrk'], { stdio: 'inherit' }) : update;
    if (install.status !== 0 || !onPath('wrk')) throw new Error('apt-get could not install wrk (not root?): install it and run again');
  }
  // `wrk -v` prints its version (and a copyright line) and exits 1.
  const out = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  return `${out.stdout}${out.stderr}`.split('\n')[0]?.replace(/\s*Copyright.*$/, '').trim() ?? 'wrk';
}

/** `taskset` when this machine has it and more than one core, so load generator and server don't share a core. */
export function pinTo(cpu: number, argv: readonly string[], cores: number): string[] {
  if (cores < 2 || !onPath('taskset')) return [...argv];
  return ['taskset', '-c', String(cpu), ...argv];
}

/** Moves a running process (every thread of it) to `cpu`, where `pinTo` would have placed it. */
export function pinPid(cpu: number, pid: number, cores: number): void {
  if (cores < 2 || !onPath('taskset')) return;
  spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}

export interface WrkRequest {
  url: string;
  method: 'GET' | 'POST';
  body?: string;
  headers?: Record<string, string>;
  connections: number;
  durationSeconds: number;
  /** Collect `Server-Timing: app;dur=` from every response (slows wrk a little). */
  serverTiming?: boolean;
  /** CPU to pin wrk to (see `pinTo`); undefined: not pinned. */
  cpu?: number;
  cores: number;
}

export interface WrkResult {
  requests: number;
  durationSeconds: number;
  requestsPerSecond: number;
  latencyMs: { mean: number; p50: number; p90: number; p99: number; p999: number; max: number };
  errors: { connect: number; read: number; write: number; timeout: number; non2xx3xx: number };
  /** Counts per status code; only collected with `serverTiming`. */
  statuses: Record<string, number>;
  /** Sorted `Server-Timing: app;dur` values in ms; empty when the server sends none. */
  serverMs: number[];
}

interface WrkRaw {
  requests: number;
  duration_us: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  latency_us: { mean: number; max: number; p50: number; p90: number; p99: number; p999: number };
  statuses: Record<string, number>;
  server_ms: number[];
}

/** wrk reports microseconds; two decimals of a millisecond are all the precision that means anything. */
const ms = (us: number): number => Math.round(us / 10) / 100;

export async function runWrk(request: WrkRequest): Promise<WrkResult> {
  const args = [
    // One wrk thread drives 50 connections at well over the ~15k req/s a one-core Node server
    // answers, and leaves the other core of a 2-core machine to the server.
    '-t1',
    `-c${request.connections}`,
    `-d${request.durationSeconds}s`,
    `--timeout`,
    WRK_TIMEOUT,
    '-s',
    SCENARIO_LUA,
    request.url,
    '--',
    request.method,
    request.body ?? '',
    request.serverTiming ? '1' : '0',
    ...Object.entries(request.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
  ];
  const argv = request.cpu === undefined ? ['wrk', ...args] : pinTo(request.cpu, ['wrk', ...args], request.cores);
  const output = await new Promise<string>((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), request.durationSeconds * 1000 + WRK_GRACE_MS);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`wrk exited with ${code}: ${stderr.trim() || stdout.trim()}`));
    });
  });
  const line = output.split('\n').find((l) => l.startsWith('WRK_RESULT '));
  if (!line) throw new Error(`wrk printed no result line:\n${output}`);
  const raw = JSON.parse(line.slice('WRK_RESULT '.length)) as WrkRaw;
  const durationSeconds = raw.duration_us / 1e6;
  return {
    requests: raw.requests,
    durationSeconds,
    requestsPerSecond: Math.round(raw.requests / durationSeconds),
    latencyMs: {
      mean: ms(raw.latency_us.mean),
      p50: ms(raw.latency_us.p50),
      p90: ms(raw.latency_us.p90),
      p99: ms(raw.latency_us.p99),
      p999: ms(raw.latency_us.p999),
      max: ms(raw.latency_us.max),
    },
    errors: {
      connect: raw.errors.connect,
      read: raw.errors.read,
      write: raw.errors.write,
      timeout: raw.errors.timeout,
      non2xx3xx: raw.errors.status,
    },
    statuses: raw.statuses,
    serverMs: raw.server_ms,
  };
}

/** Percentile (0-100) of an ascending list, nearest rank. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}
