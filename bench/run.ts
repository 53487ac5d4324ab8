import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sqlitePath } from '../server/db/sqlite.js';
import { cpuMs, createMerchant, helpWallTimeMs, startBaseline, startFloor, startPos, startSplit, type ServerChild } from './processes.js';
import { measureBytesPerPayment, processorCallsPerPayment, type ProcessorCalls } from './figures.js';
import { machineFacts, renderMarkdown, round, type Figures, type Outcome, type RunReport, type ScenarioResult, type ServerTime, type Target } from './report.js';
import { seedList, type SeededList } from './seed.js';
import { benchStore, type StoreBenchResult } from './store.js';
import { ensureWrk, percentile, runWrk, type WrkResult } from './wrk.js';
import { positiveOption } from './options.js';
import { DEFAULT_DELIVERIES, measureWebhooks, type WebhookFigures } from './webhooks.js';
import { DEFAULT_SETS, DEFAULT_ROUND_SECONDS, measureOverhead, type OverheadScenario } from './overhead.js';

/** The baseline and the create floor served as pos serves its apps: info, beside the stock ones. */
const SERVED_BASELINE_NAME = 'baseline served as pos serves its apps: Express 5 GET / (hello-world JSON), requests made with the app\'s prototypes';
const SERVED_FLOOR_NAME = 'floor served as pos serves its apps: Express + one stripe SDK PaymentIntent create, requests made with the app\'s prototypes';

/**
 * The scenarios `--only` can pick. The baseline is not among them: every ratio needs the same
 * run's. `get` without `create` makes one payment to fetch; `list` seeds its rows only when picked.
 */
const SCENARIOS = ['store', 'floor', 'create', 'replay', 'get', 'list', 'calls', 'split', 'overhead', 'bytes', 'webhooks', 'help'] as const;
type Scenario = (typeof SCENARIOS)[number];

const USAGE = `npm run bench [-- options]

  --quick               ~2 s per scenario and a 100,000-row list (proves the harness, not the targets)
  --duration <s>        seconds per scenario (default 10)
  --warmup <s>          unmeasured seconds of the same load before each scenario (default 2; --quick: 1)
  --connections <n>     concurrent connections (default 50)
  --rows <n>            rows in the list merchant (default 1,000,000; --quick: 100,000)
  --resource <name>     transactions (default) or customers: the stand-in while /v1/transactions
                        is not on main; same envelope, no idempotent replay
  --only <names>        run only these scenarios, comma-separated, besides the hello-world baseline
                        (always measured, before and after): ${SCENARIOS.join(', ')}
                        (e.g. --only get,replay: ~1 minute)
  --help                this text`;

const RESULTS_DIR = fileURLToPath(new URL('../../bench/results/', import.meta.url));

/**
 * The pos server and the baseline run on this CPU, wrk on the other (when there are two). The
 * simulator `pos server` embeds runs in a child process of its own: it goes on wrk's CPU, the
 * second core an unpinned server would use.
 */
const SERVER_CPU = 1;
const WRK_CPU = 0;

/** Spawns of `pos --help` whose median is reported: enough to shrug off one cold start. */
const HELP_RUNS = 10;

/** Payments made through the API whose bytes in the store are averaged: enough that pages split as they would in a shop. */
const BYTES_PAYMENTS = 500;

/** Units in the in-process group-commit measurement: ~0.4 s at 13k units/s, enough for stable rates. */
const STORE_BENCH_UNITS = 5_000;

interface Options {
  quick: boolean;
  durationSeconds: number;
  warmupSeconds: number;
  connections: number;
  rows: number;
  resource: SeededList;
  /** The scenarios to run (all by default). */
  only: ReadonlySet<Scenario>;
}

function parseOptions(argv: string[]): Options | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      rows: { type: 'string' },
      resource: { type: 'string', default: 'transactions' },
      only: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) return undefined;
  const positive = positiveOption;
  if (values.resource !== 'transactions' && values.resource !== 'customers') throw new Error(`--resource must be transactions or customers, got ${values.resource}`);
  return {
    quick: values.quick,
    durationSeconds: positive('duration', values.duration, values.quick ? 2 : 10),
    warmupSeconds: values.warmup === '0' ? 0 : positive('warmup', values.warmup, values.quick ? 1 : 2),
    connections: positive('connections', values.connections, 50),
    rows: positive('rows', values.rows, values.quick ? 100_000 : 1_000_000),
    resource: values.resource,
    only: values.only === undefined ? new Set(SCENARIOS) : scenariosOf(values.only),
  };
}

function scenariosOf(raw: string): Set<Scenario> {
  const names = raw.split(',').map((name) => name.trim()).filter(Boolean);
  const unknown = names.filter((name) => !(SCENARIOS as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0) throw new Error(`--only takes names among ${SCENARIOS.join(', ')}, got ${raw}`);
  return new Set(names as Scenario[]);
}

/** A 4xx/5xx answer, or the reason there was none. */
class PreflightError extends Error {
  constructor(
    message: string,
    readonly outcome: Outcome,
  ) {
    super(message);
  }
}

interface Preflight {
  status: number;
  body: unknown;
}

/** One request before each run: proves the scenario answers what it should, and fetches ids. */
async function preflight(url: string, init: { method: string; headers: Record<string, string>; body?: string }, okStatuses: readonly number[]): Promise<Preflight> {
  const response = await fetch(url, init);
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON; keep the text for the message
  }
  if (okStatuses.includes(response.status)) return { status: response.status, body };
  const message = (body as { error?: { message?: string } } | undefined)?.error?.message ?? text.slice(0, 200);
  if (response.status === 404 && message.startsWith('Unrecognized request URL')) {
    throw new PreflightError(`endpoint missing: ${init.method} ${new URL(url).pathname}`, 'missing');
  }
  throw new PreflightError(`${init.method} ${new URL(url).pathname} answered ${response.status}: ${message}`, 'error');
}

function wrkProblems(result: WrkResult): string | undefined {
  const e = result.errors;
  const problems = [
    e.non2xx3xx ? `${e.non2xx3xx} non-2xx/3xx responses` : '',
    e.connect ? `${e.connect} connect errors` : '',
    e.read ? `${e.read} read errors` : '',
    e.write ? `${e.write} write errors` : '',
    e.timeout ? `${e.timeout} timeouts` : '',
  ].filter(Boolean);
  return problems.length ? problems.join(', ') : undefined;
}

async function main(): Promise<void> {
  let options: Options | undefined;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench: ${err instanceof Error ? err.message : String(err)}\n${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  if (!options) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
  const facts = machineFacts(ensureWrk(log));
  const cores = facts.cores;
  const startedAt = new Date();
  log(`${facts.cores} cores (${facts.cpu}), node ${facts.node}, ${facts.wrk}; ${options.durationSeconds} s per scenario at ${options.connections} connections`);
  if (facts.loadBefore > cores / 2) log(`load average is ${facts.loadBefore} on ${cores} cores: something else is running, expect low figures`);

  const runs = (scenario: Scenario): boolean => options.only.has(scenario);
  const store: StoreBenchResult[] = [];
  if (runs('store')) {
    log('store: group commit in process');
    for (const concurrency of [1, options.connections]) store.push(await benchStore({ units: options.quick ? 1_000 : STORE_BENCH_UNITS, concurrency }));
  }

  const results: ScenarioResult[] = [];
  // Every measured run follows an unmeasured one of the same load: the first seconds of a fresh
  // Node process are spent compiling hot code, and they are not what a running server costs.
  const load = async (url: string, method: 'GET' | 'POST', headers: Record<string, string>, body?: string, connections = options.connections, durationSeconds = options.durationSeconds, serverTiming = false) => {
    const request = { url, method, headers, ...(body === undefined ? {} : { body }), connections, serverTiming, cpu: WRK_CPU, cores };
    if (options.warmupSeconds > 0 && connections > 1) await runWrk({ ...request, durationSeconds: options.warmupSeconds });
    return runWrk({ ...request, durationSeconds });
  };

  // The baseline is measured before and after the pos scenarios and every ratio is to their mean:
  // these machines drift by a third within minutes, and one early figure would judge late runs.
  const baselines: number[] = [];
  /** The hello world under `name`, stock or served as pos serves its apps; its requests a second. */
  const measureHello = async (name: string, servedAsPos: boolean): Promise<number> => {
    const server = await startBaseline(SERVER_CPU, cores, servedAsPos);
    try {
      const hello = await load(`${server.url}/`, 'GET', {});
      results.push(scenarioFrom(name, hello, { kind: 'none' }));
      return hello.requestsPerSecond;
    } finally {
      await server.stop();
    }
  };
  const measureBaseline = async (when: string): Promise<void> => {
    log(`baseline: Express 5 hello-world, ${when}`);
    baselines.push(await measureHello(`baseline: Express 5 GET / (hello-world JSON), ${when}`, false));
  };
  await measureBaseline('before');
  // The same hello world served as pos serves its apps (shared/express-server.ts): the ratios above
  // are to stock Express, as the targets are written; these say how much of a ratio is that serving.
  if (runs('get') || runs('replay')) {
    log(SERVED_BASELINE_NAME);
    await measureHello(SERVED_BASELINE_NAME, true);
  }

  const dataDir = mkdtempSync(join(tmpdir(), 'pos-bench-'));
  let pos: ServerChild | undefined;
  let calls: ProcessorCalls | undefined;
  let split: SplitCpu | undefined;
  try {
    const payer = createMerchant(dataDir, 'Bench');
    const lister = createMerchant(dataDir, 'Bench List');
    if (runs('list')) {
      log(`seeding ${options.rows.toLocaleString('en-US')} ${options.resource} for the list merchant`);
      const seeded = seedList({ file: sqlitePath(dataDir), merchantId: lister.id, mode: 'test', list: options.resource, rows: options.rows, now: Date.now() });
      log(`seeded in ${round(seeded.seconds, 1)} s`);
    }

    pos = await startPos(dataDir, SERVER_CPU, cores, {}, WRK_CPU);
    if (runs('calls')) {
      log('processor calls per payment');
      try {
        calls = await processorCallsPerPayment(pos.url, payer.secretKey);
      } catch (err) {
        log(`  ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    const base = `${pos.url}/v1/${options.resource}`;
    const auth = (merchant: { secretKey: string }) => ({ Authorization: `Bearer ${merchant.secretKey}` });
    const json = { 'Content-Type': 'application/json' };
    const createBody = options.resource === 'transactions' ? JSON.stringify({ amount: 4750, currency: 'usd' }) : JSON.stringify({ name: 'Bench Customer', email: 'bench@example.com' });
    const stand = options.resource === 'customers' ? ' [customers stand-in]' : '';
    const ratioTarget = (min: number): Target => ({ kind: 'ratio', min });

    // Each scenario: preflight, then wrk; a failed preflight is reported and the run goes on.
    const attempt = async (name: string, target: Target, run: () => Promise<ScenarioResult>): Promise<void> => {
      log(name);
      try {
        results.push(await run());
      } catch (err) {
        const outcome: Outcome = err instanceof PreflightError ? err.outcome : 'error';
        const message = err instanceof Error ? err.message : String(err);
        log(`  ${message}`);
        results.push({ name, target, outcome, note: message });
      }
    };

    // The floor of any create that calls the processor: see bench/floor-server.ts.
    // Stock, then served as pos serves its apps (info beside it).
    const floorName = 'floor: Express + one stripe SDK PaymentIntent create, canned processor in process, no database';
    if (runs('floor')) for (const [name, servedAsPos] of [[floorName, false], [SERVED_FLOOR_NAME, true]] as const) {
      await attempt(name, { kind: 'none' }, async () => {
        const floor = await startFloor(SERVER_CPU, cores, servedAsPos);
        try {
          await preflight(`${floor.url}/`, { method: 'POST', headers: json, body: createBody }, [201]);
          return scenarioFrom(name, await load(`${floor.url}/`, 'POST', json, createBody), { kind: 'none' });
        } finally {
          await floor.stop();
        }
      });
    }

    const createName = `POST /v1/${options.resource}${stand}`;
    const createTarget: Target = { kind: 'ratio+p99', min: 0.35, maxP99Ms: 50 };
    let createdId: string | undefined;
    let createMissing = false;
    if (runs('create')) {
      await attempt(createName, createTarget, async () => {
        const first = await preflight(base, { method: 'POST', headers: { ...auth(payer), ...json }, body: createBody }, [201]);
        createdId = (first.body as { data?: { id?: string } }).data?.id;
        // With the server's own time (`Server-Timing`) beside wrk's: on some hosts wrk sees a create's
        // p99 several times the slowest server time, which a Node client over the same 50
        // connections does not. The target is judged on wrk's figure, as before.
        const loaded = await load(base, 'POST', { ...auth(payer), ...json }, createBody, options.connections, options.durationSeconds, true);
        const result = scenarioFrom(createName, loaded, createTarget);
        return loaded.serverMs.length === 0 ? result : { ...result, serverTime: fromServerTiming(loaded.serverMs) };
      });
      createMissing = results.at(-1)?.outcome === 'missing';
    } else if (runs('get')) {
      // The GET's payment, made by one create where the create scenario is not run.
      try {
        const first = await preflight(base, { method: 'POST', headers: { ...auth(payer), ...json }, body: createBody }, [201]);
        createdId = (first.body as { data?: { id?: string } }).data?.id;
      } catch (err) {
        createMissing = err instanceof PreflightError && err.outcome === 'missing';
      }
    }

    const replayName = `POST /v1/${options.resource} replay (same Idempotency-Key)${stand}`;
    if (runs('replay')) await attempt(replayName, ratioTarget(0.6), async () => {
      const headers = { ...auth(payer), ...json, 'Idempotency-Key': `bench-replay-${startedAt.getTime()}` };
      await preflight(base, { method: 'POST', headers, body: createBody }, [201]);
      // Customers have no idempotent replay: the stand-in creates again (201).
      const replay = await preflight(base, { method: 'POST', headers, body: createBody }, options.resource === 'transactions' ? [200] : [200, 201]);
      const result = scenarioFrom(replayName, await load(base, 'POST', headers, createBody), ratioTarget(0.6));
      return replay.status === 200 ? result : { ...result, note: appendNote(result.note, `replay answered ${replay.status}, not 200: no idempotent replay on this resource`) };
    });

    const getName = `GET /v1/${options.resource}/{id}${stand}`;
    if (runs('get')) await attempt(getName, ratioTarget(0.6), async () => {
      if (!createdId) {
        if (createMissing) throw new PreflightError(`endpoint missing: POST /v1/${options.resource} (no id to fetch)`, 'missing');
        throw new PreflightError('no id to fetch: the create scenario failed', 'error');
      }
      const url = `${base}/${createdId}`;
      await preflight(url, { method: 'GET', headers: auth(payer) }, [200]);
      return scenarioFrom(getName, await load(url, 'GET', auth(payer)), ratioTarget(0.6));
    });

    const rowsLabel = options.rows.toLocaleString('en-US');
    const lastPage = Math.max(1, Math.floor(options.rows / 20));
    for (const [query, maxMs] of runs('list')
      ? ([
          ['page=1&size=10', 2],
          [`page=${lastPage}&size=20`, 30],
        ] as const)
      : []) {
      const name = `GET /v1/${options.resource}?${query} (${rowsLabel} rows)${stand}`;
      const target: Target = { kind: 'server-p50', maxMs };
      await attempt(name, target, async () => {
        const url = `${base}?${query}`;
        const first = await preflight(url, { method: 'GET', headers: auth(lister) }, [200]);
        const page = first.body as { totalCount?: number; data?: unknown[] };
        if (page.totalCount !== options.rows) throw new PreflightError(`list answered totalCount ${page.totalCount}, expected ${options.rows}`, 'error');
        const loaded = await load(url, 'GET', auth(lister));
        // Server time: the lead's `Server-Timing: app;dur=` when present; else one keep-alive
        // connection, where client latency is server time plus a loopback round trip.
        const single = await load(url, 'GET', auth(lister), undefined, 1, Math.max(1, Math.ceil(options.durationSeconds / 2)), true);
        const result = scenarioFrom(name, loaded, target);
        const fromHeader = single.serverMs.length > 0;
        const serverTime = fromHeader
          ? fromServerTiming(single.serverMs)
          : { source: 'client, 1 connection' as const, p50Ms: single.latencyMs.p50, p99Ms: single.latencyMs.p99, samples: single.requests };
        const problems = wrkProblems(single);
        return {
          ...result,
          serverTime,
          outcome: result.outcome === 'error' || problems ? 'error' : judge(target, { ...result, serverTime }),
          note: appendNote(result.note, problems ? `single-connection run: ${problems}` : fromHeader ? undefined : 'no Server-Timing header: server time is client latency over one keep-alive connection'),
        };
      });
    }

    // The split mode: the same create with the simulator in a process of its own (`pos simulator`)
    // and `pos server --processor stripe` pointed at it, each on its own CPU, so each one's CPU time
    // over the measured run (from /proc) is its own. The embedded simulator's state is the same
    // data dir's, so the merchant's connected account is already there.
    await pos.stop();
    pos = undefined;
    if (options.resource === 'transactions' && runs('split')) {
      const splitName = `${createName}, split mode (pos simulator + pos server --processor stripe)`;
      await attempt(splitName, { kind: 'none' }, async () => {
        const both = await startSplit(dataDir, { serverCpu: SERVER_CPU, simulatorCpu: WRK_CPU, cores });
        try {
          const url = `${both.server.url}/v1/transactions`;
          const headers = { ...auth(payer), ...json };
          await preflight(url, { method: 'POST', headers, body: createBody }, [201]);
          const request = { url, method: 'POST' as const, headers, body: createBody, connections: options.connections, cpu: WRK_CPU, cores };
          if (options.warmupSeconds > 0) await runWrk({ ...request, durationSeconds: options.warmupSeconds });
          const before = { server: cpuMs(both.server.pid), simulator: cpuMs(both.simulator.pid) };
          const measured = await runWrk({ ...request, durationSeconds: options.durationSeconds });
          const after = { server: cpuMs(both.server.pid), simulator: cpuMs(both.simulator.pid) };
          const creates = Math.max(1, measured.requests);
          split = { server: round((after.server - before.server) / creates, 3), simulator: round((after.simulator - before.simulator) / creates, 3) };
          const result = scenarioFrom(splitName, measured, { kind: 'none' });
          return { ...result, note: appendNote(result.note, `CPU per create from /proc over the measured run: server ${split.server} ms, simulator ${split.simulator} ms`) };
        } finally {
          await both.stop();
        }
      });
    }
  } finally {
    await pos?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  // The cost of instrumentation: a plain and an instrumented server side by side, short rounds
  // alternating between them (bench/overhead.ts), so the figure does not depend on which ran last.
  let overhead: OverheadScenario[] | undefined;
  if (options.resource === 'transactions' && runs('overhead')) {
    try {
      overhead = await measureOverhead({
        sets: options.quick ? 2 : DEFAULT_SETS,
        roundSeconds: options.quick ? 2 : DEFAULT_ROUND_SECONDS,
        warmupSeconds: options.warmupSeconds,
        connections: options.connections,
        serverCpu: SERVER_CPU,
        otherCpu: WRK_CPU,
        cores,
        log,
      });
      results.push(...overhead.map(overheadScenario));
    } catch (err) {
      log(`  ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  let bytesPerTransaction: number | null = null;
  if (runs('bytes')) {
    const bytesPayments = options.quick ? 100 : BYTES_PAYMENTS;
    log(`bytes per payment: ${bytesPayments} card payments through the API on a fresh store`);
    try {
      bytesPerTransaction = (await measureBytesPerPayment(bytesPayments, { cpu: SERVER_CPU, cores })).bytesPerPayment;
    } catch (err) {
      log(`  ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  let webhooks: WebhookFigures | undefined;
  if (runs('webhooks')) {
    log('webhooks: pos delivering an outbox backlog, and a bare Node sender posting the same signed bodies');
    try {
      webhooks = await measureWebhooks({ deliveries: options.quick ? 2_000 : DEFAULT_DELIVERIES, rounds: 2, senderCpu: SERVER_CPU, receiverCpu: WRK_CPU, cores, log: (line) => log(line) });
    } catch (err) {
      log(`  ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  await measureBaseline('after');
  const baselineRps = Math.round(baselines.reduce((a, b) => a + b, 0) / baselines.length);
  for (const [i, r] of results.entries()) results[i] = withRatio(r, baselineRps);
  if (webhooks) results.push(...webhookScenarios(webhooks));

  if (runs('help')) {
    log('pos --help');
    const help = helpWallTimeMs(HELP_RUNS);
    const helpTarget: Target = { kind: 'wall', maxMs: 500 };
    const helpResult: ScenarioResult = { name: `pos --help (median of ${HELP_RUNS} spawns)`, target: helpTarget, wallMs: help.medianMs, outcome: 'pass' };
    results.push({ ...helpResult, outcome: judge(helpTarget, helpResult) });
  }

  const report: RunReport = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    machine: { ...facts, loadAfter: round(loadavg()[0] ?? 0) },
    settings: { ...options, only: options.only.size === SCENARIOS.length ? undefined : [...options.only], serverCpu: cores > 1 ? SERVER_CPU : undefined, wrkCpu: cores > 1 ? WRK_CPU : undefined },
    baselineRps,
    scenarios: results,
    store,
    figures: figuresOf(results, baselineRps, calls, bytesPerTransaction, split, webhooks, overhead),
    overhead,
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  // Colons are legal on Linux but not on every filesystem the repo is checked out on.
  const stamp = startedAt.toISOString().replaceAll(':', '-').replace(/\.\d+Z$/, 'Z');
  const jsonFile = join(RESULTS_DIR, `${stamp}.json`);
  writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
  const markdown = renderMarkdown(report);
  writeFileSync(join(RESULTS_DIR, 'latest.md'), markdown);
  process.stdout.write(`${markdown}\nwritten: ${jsonFile} and ${join(RESULTS_DIR, 'latest.md')}\n`);
}

/** The webhook rows: their ratio is pos's deliveries over the bare sender's, not to the hello-world baseline. */
function webhookScenarios(w: WebhookFigures): ScenarioResult[] {
  const mean = (values: number[]) => Math.round(values.reduce((a, b) => a + b, 0) / values.length);
  const runs = (values: number[]) => values.map((v) => v.toLocaleString('en-US')).join(', ');
  const target: Target = { kind: 'ratio', min: 0.5 };
  return [
    {
      name: `webhooks: bare Node sender (floor), ${w.deliveries.toLocaleString('en-US')} deliveries per run`,
      target: { kind: 'none' },
      outcome: 'info',
      requestsPerSecond: mean(w.floorPerSecond),
      note: `deliveries/s; runs: ${runs(w.floorPerSecond)}`,
    },
    {
      name: `webhooks: pos worker, outbox backlog of ${w.deliveries.toLocaleString('en-US')}`,
      target,
      outcome: w.ratio >= target.min ? 'pass' : 'fail',
      requestsPerSecond: mean(w.posPerSecond),
      ratio: w.ratio,
      note: `deliveries/s; ratio to the bare sender; runs: ${runs(w.posPerSecond)}`,
    },
  ];
}

/** One overhead scenario as a row of the table: the traced side's figures, the overheads in the note. */
function overheadScenario(o: OverheadScenario): ScenarioResult {
  const name = o.scenario === 'create' ? 'POST /v1/transactions' : 'GET /v1/transactions/{id}';
  const mean = (values: number[]) => Math.round(values.reduce((a, b) => a + b, 0) / values.length);
  const range = ([low, high]: [number, number]) => `${low} to ${high}`;
  // The throughput figures are kept as % fewer requests; shown as the change, like the CPU's.
  const change = ([low, high]: [number, number]) => range([-high, -low]);
  const m = o.metricsOnly;
  // A change in %, its sign written out: more CPU is +, fewer requests per second is −.
  const signed = (value: number) => `${value < 0 ? '−' : '+'}${Math.abs(value)} %`;
  return {
    name: `${name} with metrics and OTLP traces (rounds alternating with a plain server)`,
    target: { kind: 'none' },
    outcome: 'info',
    requestsPerSecond: mean(o.instrumentedRps),
    note:
      `instrumentation overhead over ${o.plainRps.length} sets of rounds, median (range): server CPU per request ${signed(o.cpuPct)} (${range(o.cpuPctRange)}), ` +
      `requests/s ${signed(-o.throughputPct)} (${change(o.throughputPctRange)}); metrics alone: CPU ${signed(m.cpuPct)} (${range(m.cpuPctRange)}), ` +
      `requests/s ${signed(-m.throughputPct)} (${change(m.throughputPctRange)}); plain ${mean(o.plainRps).toLocaleString('en-US')} req/s`,
  };
}

/** CPU ms per create of each process in the split mode. */
interface SplitCpu {
  server: number;
  simulator: number;
}

function figuresOf(
  results: ScenarioResult[],
  baselineRps: number,
  calls: ProcessorCalls | undefined,
  bytesPerTransaction: number | null,
  split: SplitCpu | undefined,
  webhooks: WebhookFigures | undefined,
  overhead: OverheadScenario[] | undefined,
): Figures {
  const rps = (start: string, end = '') => results.find((r) => r.name.startsWith(start) && r.name.endsWith(end))?.requestsPerSecond;
  const create = results.find((r) => r.name === 'POST /v1/transactions');
  const floor = rps('floor:');
  const overheadOf = (scenario: OverheadScenario['scenario']) => overhead?.find((o) => o.scenario === scenario);
  const ratio = (value: number | undefined, of: number | undefined) => (value && of ? round(value / of, 3) : null);
  return {
    create_floor_ratio: ratio(create?.requestsPerSecond, floor),
    create_p99_ms: create?.p99Ms ?? null,
    get_hello_ratio: ratio(rps('GET /v1/transactions/{id}', '{id}'), baselineRps),
    replay_hello_ratio: ratio(rps('POST /v1/transactions replay'), baselineRps),
    create_served_floor_ratio: ratio(create?.requestsPerSecond, rps(SERVED_FLOOR_NAME)),
    get_served_hello_ratio: ratio(rps('GET /v1/transactions/{id}', '{id}'), rps(SERVED_BASELINE_NAME)),
    replay_served_hello_ratio: ratio(rps('POST /v1/transactions replay'), rps(SERVED_BASELINE_NAME)),
    processor_calls_per_card_payment: calls?.card ?? null,
    processor_calls_per_terminal_payment: calls?.terminal ?? null,
    bytes_per_transaction: bytesPerTransaction,
    instrumentation_overhead_create_pct: overheadOf('create')?.cpuPct ?? null,
    instrumentation_overhead_get_pct: overheadOf('get')?.cpuPct ?? null,
    instrumentation_overhead_create_rps_pct: overheadOf('create')?.throughputPct ?? null,
    instrumentation_overhead_get_rps_pct: overheadOf('get')?.throughputPct ?? null,
    metrics_overhead_create_pct: overheadOf('create')?.metricsOnly.cpuPct ?? null,
    metrics_overhead_get_pct: overheadOf('get')?.metricsOnly.cpuPct ?? null,
    server_cpu_ms_per_create: split?.server ?? null,
    simulator_cpu_ms_per_create: split?.simulator ?? null,
    webhooks_floor_ratio: webhooks?.ratio ?? null,
  };
}

/** Server time from the `Server-Timing` durations a run collected (at least one). */
function fromServerTiming(serverMs: number[]): ServerTime {
  return { source: 'Server-Timing', p50Ms: round(percentile(serverMs, 50), 3), p99Ms: round(percentile(serverMs, 99), 3), samples: serverMs.length };
}

function appendNote(note: string | undefined, extra: string | undefined): string | undefined {
  if (!extra) return note;
  return note ? `${note}; ${extra}` : extra;
}

function scenarioFrom(name: string, result: WrkResult, target: Target): ScenarioResult {
  const problems = wrkProblems(result);
  return {
    name,
    target,
    requestsPerSecond: result.requestsPerSecond,
    p50Ms: result.latencyMs.p50,
    p99Ms: result.latencyMs.p99,
    requests: result.requests,
    // Judged once the ratio is known (`withRatio`); a run with errors stays an error.
    outcome: problems ? 'error' : 'pass',
    ...(problems ? { note: problems } : {}),
  };
}

/** The scenario's ratio to the baseline, and its outcome judged with it. */
function withRatio(scenario: ScenarioResult, baselineRps: number): ScenarioResult {
  if (scenario.requestsPerSecond === undefined) return scenario;
  const rated = { ...scenario, ratio: round(scenario.requestsPerSecond / baselineRps, 3) };
  return rated.outcome === 'error' || rated.outcome === 'missing' ? rated : { ...rated, outcome: judge(rated.target, rated) };
}

function judge(target: Target, s: ScenarioResult): Outcome {
  switch (target.kind) {
    case 'none':
      return 'info';
    case 'ratio':
      return (s.ratio ?? 0) >= target.min ? 'pass' : 'fail';
    case 'ratio+p99':
      return (s.ratio ?? 0) >= target.min && (s.p99Ms ?? Infinity) <= target.maxP99Ms ? 'pass' : 'fail';
    case 'server-p50':
      return (s.serverTime?.p50Ms ?? Infinity) <= target.maxMs ? 'pass' : 'fail';
    case 'wall':
      return (s.wallMs ?? Infinity) < target.maxMs ? 'pass' : 'fail';
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
