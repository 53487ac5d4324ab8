import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import Stripe from 'stripe';
import { startSimulator, type RunningSimulator } from '../simulator/index.js';
import { createMerchant, startBaseline, startPos, type ServerChild } from './processes.js';
import { machineFacts, round, type MachineFacts } from './report.js';
import { ensureWrk, runWrk, type WrkResult } from './wrk.js';
import { positiveOption } from './options.js';

/**
 * The multi-instance benchmark: `POST /v1/transactions` throughput on one and two `pos server` instances on
 * PostgreSQL, next to one on SQLite and an Express hello-world baseline, in one run.
 */

const USAGE = `node dist/bench/postgres.js [options]

  --quick               2 s per scenario (proves the harness, not the figures)
  --duration <s>        seconds per scenario (default 8)
  --connections <n>     concurrent connections, split evenly over the instances (default 50)
  --help                this text

  PostgreSQL: POS_BENCH_DATABASE_URL, default ${'postgres://root@127.0.0.1:5432/test'}; each run
  works in a fresh schema bench_<random> and drops it at the end. Skipped (exit 0) when none answers.`;

const DEFAULT_DATABASE_URL = 'postgres://root@127.0.0.1:5432/test';
const RESULTS_DIR = fileURLToPath(new URL('../../bench/results/', import.meta.url));

/**
 * 8 s per scenario: five scenarios plus start-ups stay under the ~2 minute budget, and at a few
 * thousand req/s 8 s is tens of thousands of requests, enough for a stable p99.
 */
const DEFAULT_DURATION_S = 8;
/** 2 s: long enough to prove every scenario answers 201 under load, nothing more. */
const QUICK_DURATION_S = 2;

/** wrk on CPU 0, servers on the others (as bench/run.ts: on 2 cores, servers share CPU 1). */
const WRK_CPU = 0;

/** A local PostgreSQL answers in milliseconds; 3 s without a connection means there is none. */
const PG_CONNECT_TIMEOUT_MS = 3_000;

const CREATE_BODY = JSON.stringify({ amount: 4750, currency: 'usd' });

interface Options {
  quick: boolean;
  durationSeconds: number;
  connections: number;
  databaseUrl: string;
}

function parseOptions(argv: string[], env: NodeJS.ProcessEnv): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      connections: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) return undefined;
  const positive = positiveOption;
  const connections = positive('connections', values.connections, 50);
  // Two instances get half the connections each; fewer than 2 would leave one idle.
  if (connections < 2) throw new Error('--connections must be at least 2 (the two-instance run splits them)');
  return {
    quick: values.quick,
    durationSeconds: positive('duration', values.duration, values.quick ? QUICK_DURATION_S : DEFAULT_DURATION_S),
    connections,
    databaseUrl: env.POS_BENCH_DATABASE_URL || DEFAULT_DATABASE_URL,
  };
}

type Machine = MachineFacts & { postgres: string };

interface Scenario {
  name: string;
  instances: number;
  requestsPerSecond: number;
  /** One wrk: its p50/p99. Several: the request-weighted mean of their p50s and the largest p99 (histograms from separate processes cannot be merged). */
  p50Ms: number;
  p99Ms: number;
  ratio: number;
  requests: number;
  perInstance?: { requestsPerSecond: number; p50Ms: number; p99Ms: number }[];
  note?: string;
}

/** The server's version, or undefined when nothing answers at `url`. */
async function postgresVersion(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS });
  try {
    await client.connect();
    const result = await client.query<{ server_version: string }>('show server_version');
    return `PostgreSQL ${result.rows[0]?.server_version ?? '?'}`;
  } catch {
    return undefined;
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

/** One create before the load: proves the instance answers 201 (and has its connected account). */
async function preflight(url: string, key: string): Promise<void> {
  const response = await fetch(`${url}/v1/transactions`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: CREATE_BODY });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`POST ${url}/v1/transactions answered ${response.status}: ${text.slice(0, 300)}`);
}

function wrkProblems(results: readonly WrkResult[]): string | undefined {
  const sum = (pick: (r: WrkResult) => number): number => results.reduce((n, r) => n + pick(r), 0);
  const problems = [
    ['non-2xx/3xx responses', sum((r) => r.errors.non2xx3xx)],
    ['connect errors', sum((r) => r.errors.connect)],
    ['read errors', sum((r) => r.errors.read)],
    ['write errors', sum((r) => r.errors.write)],
    ['timeouts', sum((r) => r.errors.timeout)],
  ] as const;
  const found = problems.filter(([, n]) => n > 0).map(([what, n]) => `${n} ${what}`);
  return found.length ? found.join(', ') : undefined;
}

async function main(): Promise<void> {
  let options: Options | undefined;
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  if (!options) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const opts = options;
  const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
  const redacted = opts.databaseUrl.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
  const postgres = await postgresVersion(opts.databaseUrl);
  if (!postgres) {
    process.stdout.write(`PostgreSQL benchmark skipped: no PostgreSQL answers at ${redacted} (set POS_BENCH_DATABASE_URL)\n`);
    return;
  }

  const machine: Machine = { ...machineFacts(ensureWrk(log)), postgres };
  const cores = machine.cores;
  // Servers take the cores wrk leaves; with two cores both instances share CPU 1.
  const serverCpu = (instance: number): number => (cores < 2 ? 0 : 1 + (instance % (cores - 1)));
  const startedAt = new Date();
  log(`${cores} cores (${machine.cpu}), ${postgres}, node ${machine.node}; ${opts.durationSeconds} s per scenario at ${opts.connections} connections`);
  if (machine.loadBefore > cores / 2) log(`load average is ${machine.loadBefore} on ${cores} cores: something else is running, expect low figures`);

  const load = (url: string, headers: Record<string, string>, connections: number, method: 'GET' | 'POST' = 'POST', body: string | undefined = CREATE_BODY) =>
    runWrk({ url, method, headers, ...(body === undefined ? {} : { body }), connections, durationSeconds: opts.durationSeconds, cpu: WRK_CPU, cores });

  const scenarios: Scenario[] = [];
  let baselineRps = 0;
  const record = (name: string, results: WrkResult[], note?: string): Scenario => {
    const requests = results.reduce((n, r) => n + r.requests, 0);
    const rps = results.reduce((n, r) => n + r.requestsPerSecond, 0);
    const p50 = requests ? results.reduce((n, r) => n + r.latencyMs.p50 * r.requests, 0) / requests : 0;
    const problems = wrkProblems(results);
    const scenario: Scenario = {
      name,
      instances: results.length,
      requestsPerSecond: rps,
      p50Ms: round(p50),
      p99Ms: Math.max(...results.map((r) => r.latencyMs.p99)),
      ratio: baselineRps ? round(rps / baselineRps, 3) : 1,
      requests,
      ...(results.length > 1 ? { perInstance: results.map((r) => ({ requestsPerSecond: r.requestsPerSecond, p50Ms: r.latencyMs.p50, p99Ms: r.latencyMs.p99 })) } : {}),
      ...(problems || note ? { note: [problems, note].filter(Boolean).join('; ') } : {}),
    };
    scenarios.push(scenario);
    log(`  ${rps} req/s, p50 ${scenario.p50Ms} ms, p99 ${scenario.p99Ms} ms${problems ? ` (${problems})` : ''}`);
    return scenario;
  };
  const auth = (key: string) => ({ Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' });

  log('baseline: Express 5 hello-world');
  const baseline = await startBaseline(serverCpu(0), cores);
  try {
    const result = await load(`${baseline.url}/`, {}, opts.connections, 'GET', undefined);
    baselineRps = result.requestsPerSecond;
    record('baseline: Express 5 GET / (hello-world JSON)', [result]);
  } finally {
    await baseline.stop();
  }

  const dirs: string[] = [];
  const tempDir = (prefix: string): string => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  const running: ServerChild[] = [];
  let sim: RunningSimulator | undefined;
  let schemaUsed = false;
  try {
    log('POST /v1/transactions: 1 instance, SQLite, embedded simulator');
    {
      const dataDir = tempDir('pos-bench-sqlite-');
      const key = createMerchant(dataDir, 'Bench').secretKey;
      const server = await startPos(dataDir, serverCpu(0), cores);
      running.push(server);
      await preflight(server.url, key);
      record('POST /v1/transactions: 1 instance, SQLite, embedded simulator', [await load(`${server.url}/v1/transactions`, auth(key), opts.connections)]);
      await server.stop();
    }

    // One processor for every instance, as Stripe would be; it runs in this process, off the servers' CPU.
    // Without Stripe's rate limits, like the embedded one of startPos: this measures throughput.
    sim = await startSimulator({ dataDir: tempDir('pos-bench-sim-'), logger: () => undefined, rateLimits: false });
    const platform = new Stripe(sim.keys.secretTest, { host: sim.host, port: sim.port, protocol: 'http' });
    const processorEnv = (webhookSecret: string): Record<string, string> => ({
      POS_PROCESSOR: 'stripe',
      STRIPE_API_BASE: sim!.url,
      STRIPE_SECRET_KEY_TEST: sim!.keys.secretTest,
      STRIPE_PUBLISHABLE_KEY_TEST: sim!.keys.publishableTest,
      STRIPE_WEBHOOK_SECRET: webhookSecret,
    });
    // The signing secret is needed before the server starts, its URL only after: made on a dead port, then pointed at it.
    const placeholderEndpoint = () => platform.webhookEndpoints.create({ url: 'http://127.0.0.1:9/', enabled_events: ['*'] });

    log('POST /v1/transactions: 1 instance, SQLite, shared simulator');
    {
      const hook = await placeholderEndpoint();
      const dataDir = tempDir('pos-bench-sqlite-shared-');
      const key = createMerchant(dataDir, 'Bench').secretKey;
      const server = await startPos(dataDir, serverCpu(0), cores, processorEnv(hook.secret ?? ''));
      running.push(server);
      await platform.webhookEndpoints.update(hook.id, { url: `${server.url}/processor/webhooks` });
      await preflight(server.url, key);
      record('POST /v1/transactions: 1 instance, SQLite, shared simulator', [await load(`${server.url}/v1/transactions`, auth(key), opts.connections)]);
      await server.stop();
      // Its events would otherwise go on arriving at a closed port during the PostgreSQL runs.
      await platform.webhookEndpoints.del(hook.id);
    }

    const hook = await placeholderEndpoint();
    const dataDir = tempDir('pos-bench-pg-');
    const env = { ...processorEnv(hook.secret ?? ''), DATABASE_URL: opts.databaseUrl, POS_DATABASE_SCHEMA: schema };
    schemaUsed = true;
    const key = createMerchant(dataDir, 'Bench', env).secretKey;

    log('POST /v1/transactions: 1 instance, PostgreSQL, shared simulator');
    const first = await startPos(dataDir, serverCpu(0), cores, env);
    running.push(first);
    await platform.webhookEndpoints.update(hook.id, { url: `${first.url}/processor/webhooks` });
    await preflight(first.url, key);
    const one = record('POST /v1/transactions: 1 instance, PostgreSQL, shared simulator', [await load(`${first.url}/v1/transactions`, auth(key), opts.connections)]);

    log('POST /v1/transactions: 2 instances, PostgreSQL (one schema), shared simulator');
    const second = await startPos(dataDir, serverCpu(1), cores, env);
    running.push(second);
    await preflight(second.url, key);
    const half = Math.floor(opts.connections / 2);
    const pair = await Promise.all([
      load(`${first.url}/v1/transactions`, auth(key), opts.connections - half),
      load(`${second.url}/v1/transactions`, auth(key), half),
    ]);
    const sharedCore = serverCpu(0) === serverCpu(1);
    const two = record(
      'POST /v1/transactions: 2 instances, PostgreSQL (one schema), shared simulator',
      pair,
      `two wrk processes (${opts.connections - half} + ${half} connections); req/s summed, p50 request-weighted, p99 the larger` +
        (sharedCore ? `; both instances pinned to CPU ${serverCpu(0)} (${cores} cores): the factor is what a second process (and its connection pool) adds on the same core, not a second machine` : ''),
    );
    const scaling = round(two.requestsPerSecond / one.requestsPerSecond, 2);
    log(`  two instances / one instance: ${scaling}`);

    for (const server of running) await server.stop();
    await sim.close();
    sim = undefined;

    machine.loadAfter = round(loadavg()[0] ?? 0);
    const report = {
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      settings: {
        quick: opts.quick,
        durationSeconds: opts.durationSeconds,
        connections: opts.connections,
        database: redacted,
        schema,
        wrkCpu: cores > 1 ? WRK_CPU : undefined,
        serverCpus: cores > 1 ? [serverCpu(0), serverCpu(1)] : undefined,
        logLevel: 'warn',
      },
      baselineRps,
      scenarios,
      scaling: { twoOverOne: scaling, sharedCore },
    };
    mkdirSync(RESULTS_DIR, { recursive: true });
    // Colons are legal on Linux but not on every filesystem the repo is checked out on.
    const stamp = startedAt.toISOString().replaceAll(':', '-').replace(/\.\d+Z$/, 'Z');
    const file = join(RESULTS_DIR, `postgres-${stamp}.json`);
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`${renderMarkdown(report)}\nwritten: ${file}\n`);
  } finally {
    for (const server of running) await server.stop();
    await sim?.close();
    if (schemaUsed) await dropSchema(opts.databaseUrl, schema).catch((err: unknown) => log(`could not drop schema ${schema}: ${err instanceof Error ? err.message : String(err)}`));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}

interface Report {
  startedAt: string;
  machine: Machine;
  settings: { quick: boolean; durationSeconds: number; connections: number; database: string; serverCpus: number[] | undefined; wrkCpu: number | undefined };
  scenarios: Scenario[];
  scaling: { twoOverOne: number; sharedCore: boolean };
}

function renderMarkdown(report: Report): string {
  const m = report.machine;
  const s = report.settings;
  const busy = Math.max(m.loadBefore, m.loadAfter ?? 0) > m.cores / 2;
  const lines = [
    `# PostgreSQL benchmark ${report.startedAt}`,
    '',
    `${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, ${m.platform}, node ${m.node}, ${m.wrk}, ${m.postgres} at ${s.database}, commit ${m.commit}; ` +
      `load average ${m.loadBefore} before, ${m.loadAfter ?? '?'} after` +
      (busy ? ` (**the machine was busy: figures are low${m.cores <= 2 ? ', and on 2 cores wrk, PostgreSQL, the simulator and the servers share them' : ''}**).` : '.'),
    `${s.durationSeconds} s per scenario at ${s.connections} connections` +
      (s.wrkCpu === undefined ? '' : `; wrk pinned to CPU ${s.wrkCpu}, instances to CPU ${[...new Set(s.serverCpus)].join(' and ')}; PostgreSQL and the shared simulator unpinned`) +
      '; servers log at warn, as in bench/run.ts' +
      (s.quick ? '; --quick: figures prove the harness, nothing more.' : '.'),
    '',
    '| scenario | req/s | p50 | p99 | ratio to baseline |',
    '|---|---:|---:|---:|---:|',
  ];
  const notes: string[] = [];
  for (const r of report.scenarios) {
    if (r.note) notes.push(`- ${r.name}: ${r.note}`);
    lines.push(`| ${r.name}${r.note ? ' ¹' : ''} | ${r.requestsPerSecond.toLocaleString('en-US')} | ${r.p50Ms} ms | ${r.p99Ms} ms | ${r.ratio} |`);
  }
  lines.push('', `Two instances / one instance on PostgreSQL: **${report.scaling.twoOverOne}×**${report.scaling.sharedCore ? ' (both instances on one core: a second process and pool on the same CPU, not a second machine)' : ''}.`);
  if (notes.length) lines.push('', '¹ Notes:', ...notes);
  return `${lines.join('\n')}\n`;
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
