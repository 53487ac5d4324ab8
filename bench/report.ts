import { execFileSync } from 'node:child_process';
import { cpus, loadavg, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { OverheadScenario } from './overhead.js';
import type { SeededList } from './seed.js';
import type { StoreBenchResult } from './store.js';

/** What a scenario must reach; each kind is checked by `judge` in run.ts. */
export type Target =
  | { kind: 'none' }
  | { kind: 'ratio'; min: number }
  | { kind: 'ratio+p99'; min: number; maxP99Ms: number }
  | { kind: 'server-p50'; maxMs: number }
  | { kind: 'wall'; maxMs: number };

/** pass/fail against the target; info: no target; missing: endpoint not on this build; error: the run itself went wrong. */
export type Outcome = 'pass' | 'fail' | 'info' | 'missing' | 'error';

export interface ServerTime {
  source: 'Server-Timing' | 'client, 1 connection';
  p50Ms: number;
  p99Ms: number;
  samples: number;
}

export interface ScenarioResult {
  name: string;
  target: Target;
  outcome: Outcome;
  requestsPerSecond?: number;
  p50Ms?: number;
  p99Ms?: number;
  ratio?: number;
  requests?: number;
  serverTime?: ServerTime;
  wallMs?: number;
  note?: string;
}

export interface MachineFacts {
  cores: number;
  cpu: string;
  memoryGiB: number;
  node: string;
  platform: string;
  wrk: string;
  commit: string;
  /** 1-minute load average before the run and after it: other work on the machine skews every figure. */
  loadBefore: number;
  loadAfter?: number;
}

const REPO_DIR = fileURLToPath(new URL('../../', import.meta.url));

export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** This machine and build, and how busy the machine is now (`loadBefore`). */
export function machineFacts(wrk: string): MachineFacts {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_DIR, encoding: 'utf8' }).trim();
  } catch {
    // not a git checkout
  }
  const list = cpus();
  return {
    cores: list.length,
    cpu: list[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    wrk,
    commit,
    loadBefore: round(loadavg()[0] ?? 0),
  };
}

export interface RunReport {
  startedAt: string;
  finishedAt: string;
  machine: MachineFacts;
  settings: { quick: boolean; durationSeconds: number; warmupSeconds?: number; connections: number; rows: number; resource: SeededList; serverCpu: number | undefined; wrkCpu: number | undefined; only?: string[] };
  baselineRps: number;
  scenarios: ScenarioResult[];
  store: StoreBenchResult[];
  /** The figures the targets name, under stable keys so runs compare; null where this run could not measure one. */
  figures: Figures;
  /** Every round of the instrumentation overhead measurement, for the spread behind its two figures. */
  overhead?: OverheadScenario[];
}

export interface Figures {
  create_floor_ratio: number | null;
  create_p99_ms: number | null;
  get_hello_ratio: number | null;
  replay_hello_ratio: number | null;
  /**
   * The same three ratios to a floor and a hello world served as pos serves its apps (requests made
   * with the app's prototypes, shared/express-server.ts): no targets of their own; they show how
   * much of the ratios above comes from that serving rather than from pos's own work.
   */
  create_served_floor_ratio: number | null;
  get_served_hello_ratio: number | null;
  replay_served_hello_ratio: number | null;
  processor_calls_per_card_payment: number | null;
  processor_calls_per_terminal_payment: number | null;
  bytes_per_transaction: number | null;
  /**
   * The cost of metrics and OTLP traces (bench/overhead.ts): the median over alternating rounds of
   * the instrumented server's CPU per request over the plain one's, in % more; the `_rps_` pair is
   * the same rounds' requests per second, in % fewer.
   */
  instrumentation_overhead_create_pct: number | null;
  instrumentation_overhead_get_pct: number | null;
  instrumentation_overhead_create_rps_pct: number | null;
  instrumentation_overhead_get_rps_pct: number | null;
  /**
   * The same measurement for a server that keeps metrics and exports no traces (CPU per request, in
   * % more): what tracing adds is the difference. No target of its own; the one above covers both.
   */
  metrics_overhead_create_pct: number | null;
  metrics_overhead_get_pct: number | null;
  /** Measured in the split mode: `pos server` and `pos simulator` in two processes, CPU from /proc over the run. */
  server_cpu_ms_per_create: number | null;
  simulator_cpu_ms_per_create: number | null;
  /** Webhook deliveries per second by pos over a bare Node sender's (bench/webhooks.ts). */
  webhooks_floor_ratio: number | null;
}

/** Each figure's target: the bound and whether the figure must stay at most or at least that. */
export const FIGURE_TARGETS: Record<keyof Figures, { bound: number; atMost: boolean } | null> = {
  create_floor_ratio: { bound: 0.5, atMost: false },
  create_p99_ms: { bound: 100, atMost: true },
  get_hello_ratio: { bound: 0.7, atMost: false },
  replay_hello_ratio: { bound: 0.7, atMost: false },
  create_served_floor_ratio: null,
  get_served_hello_ratio: null,
  replay_served_hello_ratio: null,
  processor_calls_per_card_payment: { bound: 1, atMost: true },
  processor_calls_per_terminal_payment: { bound: 3, atMost: true },
  bytes_per_transaction: { bound: 2_500, atMost: true },
  instrumentation_overhead_create_pct: { bound: 5, atMost: true },
  instrumentation_overhead_get_pct: { bound: 5, atMost: true },
  instrumentation_overhead_create_rps_pct: { bound: 5, atMost: true },
  instrumentation_overhead_get_rps_pct: { bound: 5, atMost: true },
  metrics_overhead_create_pct: null,
  metrics_overhead_get_pct: null,
  server_cpu_ms_per_create: { bound: 0.6, atMost: true },
  simulator_cpu_ms_per_create: { bound: 0.4, atMost: true },
  webhooks_floor_ratio: { bound: 0.5, atMost: false },
};

function describeTarget(target: Target): string {
  switch (target.kind) {
    case 'none':
      return '';
    case 'ratio':
      return `ratio ≥ ${target.min}`;
    case 'ratio+p99':
      return `ratio ≥ ${target.min}, p99 ≤ ${target.maxP99Ms} ms`;
    case 'server-p50':
      return `server p50 ≤ ${target.maxMs} ms`;
    case 'wall':
      return `< ${target.maxMs} ms`;
  }
}

const cell = (value: number | undefined, suffix = ''): string => (value === undefined ? '' : `${value.toLocaleString('en-US')}${suffix}`);

export function renderMarkdown(report: RunReport): string {
  const m = report.machine;
  const s = report.settings;
  const lines = [
    `# Benchmark ${report.startedAt}`,
    '',
    `${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, ${m.platform}, node ${m.node}, ${m.wrk}, commit ${m.commit}; ` +
      `load average ${m.loadBefore} before, ${m.loadAfter ?? '?'} after` +
      (Math.max(m.loadBefore, m.loadAfter ?? 0) > m.cores / 2 ? ' (**the machine was busy: figures are low**).' : '.'),
    `${s.durationSeconds} s per scenario at ${s.connections} connections (one wrk thread)` +
      (s.warmupSeconds ? `, each after ${s.warmupSeconds} s of the same load unmeasured` : '') +
      (s.serverCpu === undefined ? '' : `; servers pinned to CPU ${s.serverCpu}, wrk to CPU ${s.wrkCpu}`) +
      (s.only ? `; only ${s.only.join(', ')} (--only)` : '') +
      (s.only && !s.only.includes('list') ? '' : `; list merchant holds ${s.rows.toLocaleString('en-US')} ${s.resource}`) +
      (s.quick ? '; --quick: figures prove the harness, not the targets.' : '.'),
    `Ratios are to the mean of the baseline runs (${report.baselineRps.toLocaleString('en-US')} req/s).`,
    '',
    '| scenario | req/s | p50 | p99 | ratio | server time p50 / p99 | target | result |',
    '|---|---:|---:|---:|---:|---|---|---|',
  ];
  const notes: string[] = [];
  for (const r of report.scenarios) {
    const server = r.serverTime ? `${r.serverTime.p50Ms} / ${r.serverTime.p99Ms} ms (${r.serverTime.source})` : '';
    const p50 = r.wallMs !== undefined ? `${r.wallMs} ms wall` : cell(r.p50Ms, ' ms');
    const result = r.note ? `${r.outcome} ¹` : r.outcome;
    if (r.note) notes.push(`- ${r.name}: ${r.note}`);
    lines.push(`| ${r.name} | ${cell(r.requestsPerSecond)} | ${p50} | ${cell(r.p99Ms, ' ms')} | ${r.ratio ?? ''} | ${server} | ${describeTarget(r.target)} | ${result} |`);
  }
  if (notes.length) lines.push('', '¹ Notes:', ...notes);
  // Absent from a run that left it out (`--only`).
  if (report.store.length > 0) {
    lines.push('', 'Group commit in process (`Store.transaction`, a counter bump and an insert per unit):', '');
    lines.push('| callers | units/s | commits per 1,000 units | mean batch | max batch |', '|---|---:|---:|---:|---:|');
    for (const st of report.store) lines.push(`| ${st.label} | ${cell(st.unitsPerSecond)} | ${st.commitsPer1000Units} | ${st.meanBatch} | ${st.maxBatch} |`);
  }
  lines.push('', 'Figures against their targets (the keys of `figures` in the JSON):', '', '| figure | value | target | result |', '|---|---:|---|---|');
  for (const [key, value] of Object.entries(report.figures) as [keyof Figures, number | null][]) {
    const target = FIGURE_TARGETS[key];
    const bound = target ? `${target.atMost ? '≤' : '≥'} ${target.bound.toLocaleString('en-US')}` : '';
    const result = value === null ? 'not measured' : !target ? 'info' : (target.atMost ? value <= target.bound : value >= target.bound) ? 'pass' : 'fail';
    lines.push(`| ${key} | ${value === null ? '' : value.toLocaleString('en-US')} | ${bound} | ${result} |`);
  }
  return `${lines.join('\n')}\n`;
}
