import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import WebSocket from 'ws';
import { startStack } from '../cli/stack.js';
import { WINDOW_MS } from '../server/processor/budget.js';
import { createMerchant } from '../server/accounts/merchants.js';
import { loadServerConfig } from '../shared/config.js';
import { systemClock } from '../shared/time.js';

/**
 * Terminal payments and reader state: `npm run build && node dist/bench/terminal.js [--quick]`.
 * An in-process `pos server` with its embedded simulator (Stripe's rate limits on, as always in
 * test mode) and a real `pos agent` process with 20 simulated readers, driven through the agent's
 * local websocket as a counter drives it. The simulator's per-endpoint request counts
 * (`/_sim/rate_limits`) are the processor calls.
 *   processor_calls_per_terminal_payment: payments one after another (start_payment, then the
 *     simulated tap, until the counter is told `approved`), every processor request counted, the
 *     tap's own `present_payment_method` included; the mean per payment.
 *   tap_to_approved_ms_p50/p99: from sending `simulate_tap` to the local websocket's `approved`,
 *     sales one budget window (1.25 s) apart.
 *   processor_calls_per_idle_reader_minute: nothing happening, 20 readers, over the idle window;
 *     processor_calls_idle_by_endpoint says which calls those were (the server's readiness check
 *     reads the platform's balance every 15 s, readers or not).
 *   processor_429s: 20 readers paying at once; 429s the simulator served.
 *   presence_2000_*: from bench/agents.ts (run by this script), 2,000 readers over 20 agents.
 *   idle_db_queries_per_s: from bench/idle.ts (run by this script).
 * Results: bench/results/terminal-<date-time>.json.
 */

const POS_BIN = fileURLToPath(new URL('../../bin/pos.js', import.meta.url));
const DIST_BENCH = fileURLToPath(new URL('./', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../../bench/results/', import.meta.url));

const quick = process.argv.includes('--quick');
const skipOthers = process.argv.includes('--no-presence');
/** Payments timed one after another: enough for a p99 to mean the slowest one or two. */
const SEQUENTIAL = quick ? 10 : 100;
/** Sequential sales start at least this far apart: the processor budget's window (server/processor/budget.ts). */
const PACE_MS = WINDOW_MS;
/** The idle window: a minute, as the figure is per minute. */
const IDLE_S = quick ? 10 : 60;
const READERS = 20;
/** One sale, start to approval, on a quiet account: seconds at most; a minute means something is stuck. */
const STEP_TIMEOUT_MS = 60_000;

type Message = Record<string, unknown> & { type: string };

class Counter {
  readonly messages: Message[] = [];
  #waiters: { match: (m: Message) => boolean; resolve: (m: Message) => void }[] = [];
  #n = 0;

  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: WebSocket.RawData) => {
      const message = JSON.parse(data.toString()) as Message;
      this.messages.push(message);
      for (const waiter of [...this.#waiters]) {
        if (waiter.match(message)) {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
          waiter.resolve(message);
        }
      }
    });
  }

  static async connect(url: string): Promise<Counter> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const counter = new Counter(ws);
    const welcome = counter.wait((m) => m.type === 'welcome');
    ws.send(JSON.stringify({ type: 'hello', protocol: 1 }));
    await welcome;
    return counter;
  }

  wait(match: (m: Message) => boolean): Promise<Message> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('timed out waiting for the agent')), STEP_TIMEOUT_MS);
      this.#waiters.push({ match, resolve: (m) => (clearTimeout(timer), resolve(m)) });
    });
  }

  send(message: Record<string, unknown>): void {
    this.ws.send(JSON.stringify(message));
  }

  async command(message: Record<string, unknown>): Promise<Record<string, unknown>> {
    const request_id = `bench-${(this.#n += 1)}`;
    const result = this.wait((m) => m.type === 'result' && m.request_id === request_id);
    this.send({ ...message, request_id });
    const answer = await result;
    if (!answer.ok) throw new Error(`${String(message.type)} failed: ${JSON.stringify(answer.error)}`);
    return answer.data as Record<string, unknown>;
  }

  close(): void {
    this.ws.close();
  }
}

type Reader = { processor_terminal_id: string; activity: string; transaction_id: string | null; status: string };

function approvedFor(txn: string) {
  return (m: Message) => m.type === 'reader' && (m.reader as Reader).activity === 'approved' && (m.reader as Reader).transaction_id === txn;
}

/**
 * One sale; resolves with the tap → approved time. In a burst the agent's own HTTP call for the tap
 * may give up before the server answers (the server waits for the outcome's events, which queue at
 * the account's budget): the counter still learns the outcome from the push, which is what is timed.
 */
async function sale(counter: Counter, reader: string, amount: number, tapMustAnswer = true): Promise<number> {
  const started = await counter.command({ type: 'start_payment', reader, amount });
  const txn = (started.transaction as { id: string }).id;
  const approved = counter.wait(approvedFor(txn));
  const t0 = performance.now();
  const tap = counter.command({ type: 'simulate_tap', reader });
  await approved;
  const ms = performance.now() - t0;
  await tap.catch((err: unknown) => {
    if (tapMustAnswer) throw err;
  });
  return ms;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

function spawnAgent(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [POS_BIN, 'agent', '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buffer = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      for (const line of buffer.split('\n').slice(0, -1)) {
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string };
          if (entry.msg === 'pos agent listening' && entry.url) resolve({ child, url: entry.url });
        } catch {
          // not JSON
        }
      }
      buffer = buffer.slice(buffer.lastIndexOf('\n') + 1);
    });
    child.once('exit', (code) => reject(new Error(`agent exited with ${code}`)));
  });
}

/** Runs another bench script of dist/bench and returns its newest results file, parsed. */
function runBench(script: string, prefix: string, args: string[]): Record<string, unknown> | null {
  const before = new Set(readdirSync(RESULTS_DIR));
  const run = spawnSync(process.execPath, [join(DIST_BENCH, script), ...args], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (run.status !== 0) return null;
  const made = readdirSync(RESULTS_DIR).filter((f) => f.startsWith(prefix) && !before.has(f)).sort();
  const file = made.at(-1);
  return file ? (JSON.parse(readFileSync(join(RESULTS_DIR, file), 'utf8')) as Record<string, unknown>) : null;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pos-bench-terminal-'));
  mkdirSync(RESULTS_DIR, { recursive: true });
  const load = loadavg()[0]!;
  const config = loadServerConfig({ port: 0, dataDir: join(dir, 'server'), logLevel: 'warn' }, {});
  // The issuer's answer is instant: what is timed is our path (processor events → server → agent → counter), not the simulator's pretend authorisation window.
  const stack = await startStack(config, { logger: pino({ level: 'warn' }), simulator: { authorizationDelayMs: 0 } });
  const sim = stack.simulator!;
  const merchant = await createMerchant(stack.server.store, systemClock, { businessName: 'Bench Café' });
  const agent = await spawnAgent(['--server', stack.server.url, '--api-key', merchant.keys.sk_test, '--data-dir', join(dir, 'agent'), '--simulate', String(READERS), '--log-level', 'info']);
  let counter: Counter | undefined;
  try {
    counter = await Counter.connect(agent.url);
    const readersMessage = counter.wait((m) => m.type === 'readers' && (m.readers as Reader[]).filter((r) => r.status === 'online').length === READERS);
    counter.send({ type: 'subscribe', topics: ['readers'] });
    const readers = ((await readersMessage).readers as Reader[]).map((r) => r.processor_terminal_id);
    process.stdout.write(`${readers.length} simulated readers online\n`);

    // One payment after another. A first one provisions the merchant's connected account (once per merchant): not counted.
    await sale(counter, readers[0]!, 990);
    await sim.control.resetRateLimits();
    const latencies: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      const began = Date.now();
      latencies.push(await sale(counter, readers[i % READERS]!, 1_000 + 10 * i));
      // One sale per budget window: a counter's tap is timed on an account that is not already
      // sending at the processor's limit (back to back, four calls each, the sales alone fill 80 %
      // of test mode's 20 a second and the tap waits its turn). The burst below measures throughput.
      await new Promise((r) => setTimeout(r, Math.max(0, PACE_MS - (Date.now() - began))));
    }
    const sequential = await sim.control.rateLimits();
    const perPayment = sequential.requests / SEQUENTIAL;
    const byEndpoint = Object.fromEntries(sequential.endpoints.map((e) => [e.endpoint, Math.round((e.requests / SEQUENTIAL) * 100) / 100]));
    latencies.sort((a, b) => a - b);
    process.stdout.write(`${SEQUENTIAL} payments: ${perPayment.toFixed(2)} processor calls each ${JSON.stringify(byEndpoint)}; tap → approved p50 ${percentile(latencies, 50).toFixed(0)} ms p99 ${percentile(latencies, 99).toFixed(0)} ms\n`);

    // Idle: readers online, nothing happening.
    await new Promise((r) => setTimeout(r, 11_000));
    await sim.control.resetRateLimits();
    await new Promise((r) => setTimeout(r, IDLE_S * 1000));
    const idle = await sim.control.rateLimits();
    const idlePerReaderMinute = idle.requests / READERS / (IDLE_S / 60);
    // By endpoint, so a reader's call is told from the server's own (the readiness check's balance read every 15 s).
    const idleByEndpoint = Object.fromEntries(idle.endpoints.map((e) => [e.endpoint, e.requests]));
    process.stdout.write(`idle ${IDLE_S} s: ${idle.requests} processor calls ${JSON.stringify(idleByEndpoint)}\n`);

    // Every reader pays at once.
    await sim.control.resetRateLimits();
    const burstStart = performance.now();
    await Promise.all(readers.map((reader, i) => sale(counter!, reader, 2_000 + 10 * i, false)));
    const burstMs = performance.now() - burstStart;
    const burst = await sim.control.rateLimits();
    process.stdout.write(`${READERS} readers at once: ${burst.rateLimited} 429s from the processor, all approved in ${(burstMs / 1000).toFixed(1)} s\n`);

    counter.close();
    agent.child.kill('SIGTERM');
    await new Promise((r) => agent.child.once('exit', r));
    await stack.close();

    let presence: Record<string, unknown> | null = null;
    let idleDb: Record<string, unknown> | null = null;
    if (!skipOthers) {
      presence = runBench('agents.js', 'agents-', quick ? ['--quick'] : []);
      idleDb = runBench('idle.js', 'idle-', quick ? ['--quick'] : []);
    }
    const many = presence?.many_agents as { server: { cpu_percent: number }; ready_ms: number; register_ms: number } | undefined;
    const result = {
      date: new Date().toISOString(),
      quick,
      machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version, loadavg_before: load, loadavg_after: loadavg()[0] },
      note:
        'Processor calls are every request the simulator counted (GET /_sim/rate_limits), the simulated tap (present_payment_method) included. Latency is simulate_tap sent on the agent\'s local websocket → `approved` received on it, with the simulator\'s authorisation window set to 0 (it is 300 ms by default: add it for a demo\'s feel). presence_2000_* come from bench/agents.ts (its many_agents scenario: ready_s is known readers coming online when their agents start, register_s the one-time registration with the processor, paced by its rate limit), idle_db_queries_per_s from bench/idle.ts (streams and agents open, the reconciler at its longest interval: see its own note); idle_background_loops_statements_per_s is the webhook worker and the reconciler at their defaults with no client.',
      processor_calls_per_terminal_payment: Math.round(perPayment * 100) / 100,
      processor_calls_per_terminal_payment_by_endpoint: byEndpoint,
      processor_calls_per_idle_reader_minute: Math.round(idlePerReaderMinute * 100) / 100,
      processor_calls_idle_by_endpoint: idleByEndpoint,
      processor_429s: burst.rateLimited,
      burst_all_approved_s: Math.round(burstMs / 100) / 10,
      tap_to_approved_ms_p50: Math.round(percentile(latencies, 50)),
      tap_to_approved_ms_p99: Math.round(percentile(latencies, 99)),
      presence_2000_server_cpu_percent: many?.server.cpu_percent ?? null,
      presence_2000_ready_s: many ? Math.round(many.ready_ms / 100) / 10 : null,
      presence_2000_register_s: many ? Math.round(many.register_ms / 100) / 10 : null,
      idle_db_queries_per_s: (idleDb?.idle_db_queries_per_s as number | undefined) ?? null,
      idle_background_loops_statements_per_s: (idleDb?.sqlite as { background_loops_statements_per_s?: number } | undefined)?.background_loops_statements_per_s ?? null,
    };
    const file = join(RESULTS_DIR, `terminal-${result.date.replace(/[:.]/g, '-').slice(0, 19)}Z.json`);
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\nwritten to ${file}\n`);
    if (load > cpus().length) process.stdout.write(`warning: load average ${load} on ${cpus().length} cores; figures are from a busy machine\n`);
  } finally {
    counter?.close();
    if (agent.child.exitCode === null) agent.child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
