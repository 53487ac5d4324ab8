import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Agent benchmark, standalone: `npm run build && node dist/bench/agents.js [--quick]
 * [--duration 20]`. Two scenarios on this machine, each with a real `pos server` (embedded
 * simulator, SQLite in a temporary data dir) and real `pos agent` processes on loopback:
 *   one agent following 200 simulated readers;
 *   one server with 2,000 readers across 20 agents (20 merchants of 100 readers each).
 * The agents are started twice: first they register their simulated readers with the processor
 * (`register_ms`: a one-time step, paced by the processor's rate limit on reader creation, 25
 * requests a second in test mode), then, once every reader went offline, they are started again
 * with the same data dirs and `ready_ms` is how long the known readers take to be online: what an
 * agent restart or a shop opening costs. Once every reader is online, CPU (user + system, from
 * /proc) and memory (RSS, peak RSS) of each side are measured over the window.
 * Results: bench/results/agents-<date-time>.json.
 */

const POS_BIN = fileURLToPath(new URL('../../bin/pos.js', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../../bench/results/', import.meta.url));
/** /proc/<pid>/stat counts CPU in clock ticks; 100 per second on every Linux we run on. */
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** Registering 2,000 simulated readers and seeing them all online takes well under this. */
const READY_TIMEOUT_MS = 240_000;

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const durationArg = args.indexOf('--duration');
const DURATION_S = durationArg >= 0 ? Number(args[durationArg + 1]) : quick ? 5 : 20;
const HEARTBEAT_MS = 5_000;

interface Proc {
  child: ChildProcess;
  logs: string[];
  waitFor(msg: string, timeoutMs?: number): Promise<Record<string, unknown>>;
}

function start(argv: string[]): Proc {
  const child = spawn(process.execPath, [POS_BIN, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  const entries: Record<string, unknown>[] = [];
  let buffer = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) {
      if (logs.length < 200) logs.push(line);
      try {
        entries.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not JSON
      }
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => logs.push(c));
  return {
    child,
    logs,
    async waitFor(msg, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = entries.find((e) => e.msg === msg);
        if (found) return found;
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no "${msg}": ${logs.slice(-20).join('\n')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

async function stop(proc: Proc): Promise<void> {
  if (proc.child.exitCode !== null) return;
  const exited = new Promise((r) => proc.child.once('exit', r));
  proc.child.kill('SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (proc.child.exitCode === null) proc.child.kill('SIGKILL');
}

interface Sample {
  cpuSeconds: number;
  rssMb: number;
  peakRssMb: number;
}

function sample(pid: number): Sample {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { cpuSeconds: ticks / CLK_TCK, rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
}

interface Usage {
  cpu_percent: number;
  rss_mb: number;
  peak_rss_mb: number;
}

async function measure(procs: Proc[], seconds: number): Promise<Usage[]> {
  const before = procs.map((p) => sample(p.child.pid!));
  const t0 = process.hrtime.bigint();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const wall = Number(process.hrtime.bigint() - t0) / 1e9;
  return procs.map((p, i) => {
    const after = sample(p.child.pid!);
    return {
      cpu_percent: Math.round(((after.cpuSeconds - before[i]!.cpuSeconds) / wall) * 1000) / 10,
      rss_mb: Math.round(after.rssMb * 10) / 10,
      peak_rss_mb: Math.round(after.peakRssMb * 10) / 10,
    };
  });
}

function merchant(dataDir: string, name: string): string {
  const made = spawnSync(process.execPath, [POS_BIN, 'admin', 'merchant', 'create', '--business-name', name, '--json', '--data-dir', dataDir], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(made.stderr);
  return (JSON.parse(made.stdout) as { api_keys: { sk_test: string } }).api_keys.sk_test;
}

/** Readers online across the merchants, every page of each list. */
async function onlineCount(url: string, keys: string[]): Promise<number> {
  let online = 0;
  for (const key of keys) {
    let after: string | undefined;
    for (;;) {
      const res = await fetch(`${url}/v1/terminal/readers?limit=100${after ? `&starting_after=${after}` : ''}`, { headers: { authorization: `Bearer ${key}` } });
      const body = (await res.json()) as { data?: { id: string; status: string }[]; has_more?: boolean };
      const data = body.data ?? [];
      online += data.filter((r) => r.status === 'online').length;
      if (!body.has_more || data.length === 0) break;
      after = data[data.length - 1]!.id;
    }
  }
  return online;
}

/** Milliseconds from `since` until the merchants' online readers number `target` (every reader, or none). */
async function until(url: string, keys: string[], target: number, since: number): Promise<number> {
  for (;;) {
    const online = await onlineCount(url, keys);
    if (online === target) return Date.now() - since;
    if (Date.now() - since > READY_TIMEOUT_MS) throw new Error(`${online} readers online, waiting for ${target}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function scenario(agents: number, readersPerAgent: number) {
  const dir = mkdtempSync(join(tmpdir(), 'pos-bench-agents-'));
  const keys = Array.from({ length: agents }, (_, i) => merchant(join(dir, 'server'), `Bench shop ${i + 1}`));
  // Every reader makes two processor calls a minute at most while idle; the default rate limit
  // would be far from it, but registration bursts are not what we measure.
  const server = start(['server', '--port', '0', '--data-dir', join(dir, 'server'), '--log-level', 'info', '--rate-limit', '1000000']);
  const procs: Proc[] = [server];
  try {
    const url = String((await server.waitFor('pos server listening')).url);
    const startAgents = () =>
      keys.map((key, i) =>
        start(['agent', '--server', url, '--api-key', key, '--data-dir', join(dir, `agent-${i}`), '--listen', '127.0.0.1:0', '--simulate', String(readersPerAgent), '--heartbeat-ms', String(HEARTBEAT_MS), '--log-level', 'warn']),
      );
    const total = keys.length * readersPerAgent;
    const first = startAgents();
    const registerMs = await until(url, keys, total, Date.now());
    // Until an agent reports a reader, its presence is the processor's (a simulated reader is always
    // online there); one heartbeat later every reader is the agents', and goes offline with them.
    await new Promise((r) => setTimeout(r, HEARTBEAT_MS + 1_000));
    await Promise.all(first.map(stop));
    await until(url, keys, 0, Date.now());
    const restarted = Date.now();
    const agentProcs = startAgents();
    procs.push(...agentProcs);
    const readyMs = await until(url, keys, total, restarted);
    // One full heartbeat and poll cycle before measuring: steady state, not start-up.
    await new Promise((r) => setTimeout(r, HEARTBEAT_MS));
    const usage = await measure(procs, DURATION_S);
    const agentUsage = usage.slice(1);
    const sum = (f: (u: Usage) => number) => Math.round(agentUsage.reduce((s, u) => s + f(u), 0) * 10) / 10;
    return {
      agents,
      readers_per_agent: readersPerAgent,
      readers: agents * readersPerAgent,
      heartbeat_ms: HEARTBEAT_MS,
      register_ms: registerMs,
      ready_ms: readyMs,
      window_s: DURATION_S,
      server: usage[0]!,
      agents_total: { cpu_percent: sum((u) => u.cpu_percent), rss_mb: sum((u) => u.rss_mb) },
      agent_each: {
        cpu_percent_mean: Math.round((sum((u) => u.cpu_percent) / agents) * 10) / 10,
        rss_mb_mean: Math.round((sum((u) => u.rss_mb) / agents) * 10) / 10,
        peak_rss_mb_max: Math.max(...agentUsage.map((u) => u.peak_rss_mb)),
      },
    };
  } finally {
    for (const p of procs.reverse()) await stop(p);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const one = quick ? await scenario(1, 20) : await scenario(1, 200);
  process.stdout.write(`one agent, ${one.readers} readers: server ${one.server.cpu_percent}% CPU ${one.server.rss_mb} MB; agent ${one.agents_total.cpu_percent}% CPU ${one.agents_total.rss_mb} MB\n`);
  const many = quick ? await scenario(4, 25) : await scenario(20, 100);
  process.stdout.write(
    `${many.agents} agents, ${many.readers} readers: server ${many.server.cpu_percent}% CPU ${many.server.rss_mb} MB; agents ${many.agents_total.cpu_percent}% CPU ${many.agents_total.rss_mb} MB in all\n`,
  );
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number);
  const result = {
    date: new Date().toISOString(),
    quick,
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version, loadavg_at_end: load },
    note: 'The server process includes the embedded processor simulator the simulated readers live in. CPU % is of one core.',
    one_agent: one,
    many_agents: many,
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `agents-${result.date.replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`written ${file}\n`);
  if (load[0]! > cpus().length) process.stdout.write(`warning: load average ${load[0]} on ${cpus().length} cores; figures are from a busy machine\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
