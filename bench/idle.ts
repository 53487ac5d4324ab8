import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { request, type IncomingMessage } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import pino from 'pino';
import WebSocket from 'ws';
import { startStack, type Stack } from '../cli/stack.js';
import { createMerchant } from '../server/accounts/merchants.js';
import { loadServerConfig, type ServerFlags } from '../shared/config.js';
import { systemClock } from '../shared/time.js';
import { round } from './report.js';
import { positiveOption } from './options.js';

/**
 * What idle connections cost the database: `npm run build && node dist/bench/idle.js [--quick]`.
 * A `pos server` in this process (embedded simulator; SQLite in a temporary data dir, then
 * PostgreSQL in a fresh schema when one answers), its store's statement counter read over windows.
 * First with default settings and no client: what the server's background loops cost (the webhook
 * worker, the reconciler). Then a server whose reconciler runs at its longest interval (ten
 * minutes), so that what is counted is the rest:
 *   the server alone,
 *   with N open `GET /v1/events/stream` streams, nobody writing,
 *   with those and M agents connected (hello, then silent: a 10-minute heartbeat interval, so no
 *   heartbeat falls in a window and what is left is the server's own doing).
 * `idle_db_queries_per_s` is the last figure. Then the latency from a write (`POST
 * /v1/transactions`, which records `payment.created` in its first step) to the event on a stream.
 * Results: bench/results/idle-<date-time>.json.
 */

const USAGE = `node dist/bench/idle.js [options]

  --quick             2 s windows, 10 streams, 4 agents (proves the harness, not the figures)
  --window <s>        seconds per measured window (default 10)
  --streams <n>       idle event streams (default 100)
  --agents <n>        idle agents, one merchant each; streams are spread over the same merchants (default 20)
  --label <text>      written into the results as "label" (say which code was measured)
  --help              this text

  PostgreSQL: POS_BENCH_DATABASE_URL, default postgres://root@127.0.0.1:5432/test, in a fresh
  schema idle_<random> dropped at the end; skipped (and said so) when none answers.`;

const DEFAULT_DATABASE_URL = 'postgres://root@127.0.0.1:5432/test';
const RESULTS_DIR = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));

/**
 * 10 s windows: the slowest background loop counted (the reconciler, every 5 s) runs twice per
 * window, so windows differ by at most one of its passes.
 */
const DEFAULT_WINDOW_S = 10;
/** After connecting, this long for the connections' first reads and auth lookups to finish: not idle cost. */
const SETTLE_MS = 2_000;
/** An agent's declared heartbeat interval: longer than any window, so an idle agent sends nothing measured. */
const SILENT_HEARTBEAT_MS = 600_000;
/** Writes timed from request to stream; spaced at random so they land anywhere in a poll cycle. */
const LATENCY_SAMPLES = 20;
const QUICK_LATENCY_SAMPLES = 5;
/** Up to this long between timed writes: longer than the old 250 ms poll, so its phase is random. */
const LATENCY_GAP_MS = 400;
/** The reconciler's interval at its longest (shared/config.ts): out of every window. The webhook worker has no interval: it sleeps until a notice or a due delivery. */
const QUIET_LOOPS = { reconcileIntervalMs: 600_000 };
/** A local PostgreSQL answers in milliseconds; 3 s without a connection means there is none. */
const PG_CONNECT_TIMEOUT_MS = 3_000;

interface Options {
  quick: boolean;
  windowSeconds: number;
  streams: number;
  agents: number;
  label: string | undefined;
  databaseUrl: string;
}

function parseOptions(argv: string[], env: NodeJS.ProcessEnv): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      window: { type: 'string' },
      streams: { type: 'string' },
      agents: { type: 'string' },
      label: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) return undefined;
  const positive = positiveOption;
  return {
    quick: values.quick,
    windowSeconds: positive('window', values.window, values.quick ? 2 : DEFAULT_WINDOW_S),
    streams: positive('streams', values.streams, values.quick ? 10 : 100),
    agents: positive('agents', values.agents, values.quick ? 4 : 20),
    label: values.label,
    databaseUrl: env.POS_BENCH_DATABASE_URL || DEFAULT_DATABASE_URL,
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An open event stream; `seen` resolves when an event whose data has this id arrives. */
interface Stream {
  close(): void;
  seen(id: string): Promise<number>;
}

function openStream(url: string, key: string): Promise<Stream> {
  return new Promise((resolve, reject) => {
    const waiting = new Map<string, (at: number) => void>();
    const arrived = new Map<string, number>();
    const req = request(`${url}/v1/events/stream`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' }, agent: false }, (res: IncomingMessage) => {
      if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
      let buffer = '';
      let ready = false;
      res.setEncoding('utf8').on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let end = buffer.indexOf('\n\n');
        while (end >= 0) {
          const message = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf('\n\n');
          if (!ready && message.startsWith('event: ready')) {
            ready = true;
            resolve({
              close: () => req.destroy(),
              seen: (id) => {
                const early = arrived.get(id);
                return early !== undefined ? Promise.resolve(early) : new Promise((r) => waiting.set(id, r));
              },
            });
            continue;
          }
          const data = /^data: (.*)$/m.exec(message)?.[1];
          if (!data) continue;
          const id = (JSON.parse(data) as { data?: { id?: string } }).data?.id;
          if (!id) continue;
          const waiter = waiting.get(id);
          if (waiter) waiter(at);
          else arrived.set(id, at);
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

function connectAgent(url: string, key: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/agent/connect`, { headers: { authorization: `Bearer ${key}` } });
    ws.once('error', reject);
    ws.once('open', () =>
      ws.send(JSON.stringify({ type: 'hello', protocol: 1, agent_id: randomUUID(), name: 'idle bench', version: 'bench', heartbeat_ms: SILENT_HEARTBEAT_MS, cursor: null })),
    );
    ws.on('message', (data: WebSocket.RawData) => {
      const message = JSON.parse(data.toString()) as { type: string };
      if (message.type === 'welcome') resolve(ws);
      else if (message.type === 'error') reject(new Error(data.toString()));
    });
  });
}

/** Statements per second the store sends over one window. */
async function statementsPerSecond(stack: Stack, seconds: number): Promise<number> {
  const before = stack.server.store.statements();
  const started = performance.now();
  await sleep(seconds * 1000);
  const elapsed = (performance.now() - started) / 1000;
  return round((stack.server.store.statements() - before) / elapsed, 1);
}

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

interface BackendResult {
  /** Default settings, no client: the webhook worker's poll and the reconciler. */
  background_loops_statements_per_s: number;
  /** From here on, the worker and the reconciler at their longest intervals. */
  server_alone_statements_per_s: number;
  with_streams_statements_per_s: number;
  with_streams_and_agents_statements_per_s: number;
  /** With the streams and agents open: what idle connections (and presence) cost. */
  idle_db_queries_per_s: number;
  per_stream_statements_per_s: number;
  per_agent_statements_per_s: number;
  /** From sending a write to its event arriving on a stream. */
  write_to_stream_ms: { p50: number; max: number; samples: number };
}

async function startServer(dir: string, database: { url: string; schema: string } | undefined, flags: ServerFlags): Promise<Stack> {
  const config = loadServerConfig(
    { port: 0, dataDir: dir, logLevel: 'silent', rateLimit: 1_000_000, ...(database ? { databaseUrl: database.url, databaseSchema: database.schema } : {}), ...flags },
    {},
  );
  return startStack(config, { logger: pino({ level: 'silent' }) });
}

async function measureBackend(options: Options, database: { url: string; schema: string } | undefined): Promise<BackendResult> {
  const dir = mkdtempSync(join(tmpdir(), 'pos-bench-idle-'));
  const defaults = await startServer(dir, database, {});
  let background: number;
  try {
    await sleep(SETTLE_MS);
    background = await statementsPerSecond(defaults, options.windowSeconds);
  } finally {
    await defaults.close();
  }
  const stack = await startServer(dir, database, QUIET_LOOPS);
  const streams: Stream[] = [];
  const agents: WebSocket[] = [];
  try {
    const url = stack.server.url;
    const keys: string[] = [];
    for (let i = 0; i < options.agents; i++) keys.push((await createMerchant(stack.server.store, systemClock, { businessName: `Idle shop ${i + 1}` })).keys.sk_test);
    await sleep(SETTLE_MS);
    const alone = await statementsPerSecond(stack, options.windowSeconds);

    for (let i = 0; i < options.streams; i++) streams.push(await openStream(url, keys[i % keys.length]!));
    await sleep(SETTLE_MS);
    const withStreams = await statementsPerSecond(stack, options.windowSeconds);

    for (const key of keys) agents.push(await connectAgent(url, key));
    await sleep(SETTLE_MS);
    const withAgents = await statementsPerSecond(stack, options.windowSeconds);

    const samples: number[] = [];
    const watcher = streams[0]!;
    for (let i = 0; i < (options.quick ? QUICK_LATENCY_SAMPLES : LATENCY_SAMPLES); i++) {
      await sleep(Math.random() * LATENCY_GAP_MS);
      const sent = performance.now();
      const res = await fetch(`${url}/v1/transactions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keys[0]!}`, 'content-type': 'application/json' },
        body: JSON.stringify({ amount: 1000 + i, currency: 'usd' }),
      });
      const body = (await res.json()) as { data?: { id?: string } };
      if (res.status !== 201 || !body.data?.id) throw new Error(`POST /v1/transactions answered ${res.status}: ${JSON.stringify(body)}`);
      samples.push((await watcher.seen(body.data.id)) - sent);
    }
    samples.sort((a, b) => a - b);
    return {
      background_loops_statements_per_s: background,
      server_alone_statements_per_s: alone,
      with_streams_statements_per_s: withStreams,
      with_streams_and_agents_statements_per_s: withAgents,
      idle_db_queries_per_s: withAgents,
      per_stream_statements_per_s: round(Math.max(0, withStreams - alone) / options.streams, 2),
      per_agent_statements_per_s: round(Math.max(0, withAgents - withStreams) / options.agents, 2),
      write_to_stream_ms: { p50: round(percentile(samples, 50), 1), max: round(samples.at(-1) ?? NaN, 1), samples: samples.length },
    };
  } finally {
    for (const s of streams) s.close();
    for (const a of agents) a.terminate();
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS });
  await client.connect();
  try {
    await client.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await client.end();
  }
}

function describe(name: string, r: BackendResult, options: Options): string {
  return (
    `${name}: background loops ${r.background_loops_statements_per_s} statements/s; with them quiet, server alone ${r.server_alone_statements_per_s}/s; ` +
    `+ ${options.streams} idle streams ${r.with_streams_statements_per_s}/s; + ${options.agents} idle agents ${r.with_streams_and_agents_statements_per_s}/s ` +
    `(${r.per_stream_statements_per_s} per stream, ${r.per_agent_statements_per_s} per agent); write → stream p50 ${r.write_to_stream_ms.p50} ms, max ${r.write_to_stream_ms.max} ms\n`
  );
}

/** The checkout's commit, with `+changes` when its files differ from it. */
function commitOf(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_DIR, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO_DIR, encoding: 'utf8' }).trim() !== '';
    return dirty ? `${head}+changes` : head;
  } catch {
    return 'unknown';
  }
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  if (!options) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const loadBefore = loadavg()[0] ?? 0;
  const sqlite = await measureBackend(options, undefined);
  process.stdout.write(describe('SQLite', sqlite, options));
  let postgres: BackendResult | { skipped: string };
  if (await postgresAnswers(options.databaseUrl)) {
    const schema = `idle_${randomBytes(6).toString('hex')}`;
    try {
      postgres = await measureBackend(options, { url: options.databaseUrl, schema });
    } finally {
      await dropSchema(options.databaseUrl, schema);
    }
    process.stdout.write(describe('PostgreSQL', postgres, options));
  } else {
    postgres = { skipped: `no PostgreSQL answers at ${options.databaseUrl.replace(/:[^:@/]*@/, ':***@')}` };
    process.stdout.write(`PostgreSQL: skipped, ${postgres.skipped}\n`);
  }
  const loadAfter = loadavg()[0] ?? 0;
  const date = new Date().toISOString();
  const result = {
    date,
    ...(options.label ? { label: options.label } : {}),
    commit: commitOf(),
    quick: options.quick,
    machine: { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version, loadavg_before: round(loadBefore), loadavg_after: round(loadAfter) },
    settings: { window_s: options.windowSeconds, streams: options.streams, agents: options.agents, agent_heartbeat_ms: SILENT_HEARTBEAT_MS, quiet_loops: QUIET_LOOPS },
    note:
      'Statements are everything the server process sends to its database (reads, writes, BEGIN/COMMIT), counted by the store. ' +
      'background_loops: default settings, no client (the webhook worker, asleep until a notice or a due delivery; the reconciler). The other windows run with the reconciler at its ' +
      'longest interval; idle_db_queries_per_s is the window with every stream and agent open. Clients run in the server process. ' +
      'With notifications, each process also sends one statement every 30 s (its safety check: SQLite data_version, PostgreSQL select 1 on ' +
      'the listening connection), counted in whichever window it falls: 0.1/s in a 10 s window.',
    idle_db_queries_per_s: sqlite.idle_db_queries_per_s,
    sqlite,
    postgres,
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `idle-${date.replace(/[:.]/g, '-').replace(/-\d{3}Z$/, 'Z')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`written ${file}\n`);
  if (Math.max(loadBefore, loadAfter) > cpus().length) process.stdout.write(`warning: load average ${round(Math.max(loadBefore, loadAfter))} on ${cpus().length} cores; figures are from a busy machine\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
