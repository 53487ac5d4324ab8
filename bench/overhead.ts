import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMs, createMerchant, startPos, type ServerChild } from './processes.js';
import { round } from './report.js';
import { runWrk, type WrkRequest } from './wrk.js';

/**
 * The cost of instrumentation, measured so that it does not depend on when it is measured: three
 * `pos server`s from the same build run side by side on the same CPU: one plain, one recording
 * every metric (scraped off its own listener) and exporting a span tree per request by OTLP to a
 * collector that accepts and drops them, and one with the metrics alone (what an operator who
 * scrapes /metrics and sends no traces pays). Each set starts three such servers of its own and
 * runs short rounds alternating between them, in the order A B C, then C B A in the next set, so a
 * machine that speeds up or slows down during the run weighs on all alike; each set gives one ratio
 * per instrumented server and scenario. Two figures per scenario and
 * server, each the median of its sets with the spread beside it: requests per second, and the
 * server process's CPU time per request from /proc (which another process stealing the CPU does
 * not change).
 */

export interface OverheadOptions {
  /** Sets of rounds (one on each server) per scenario. */
  sets: number;
  roundSeconds: number;
  warmupSeconds: number;
  connections: number;
  serverCpu: number;
  /** Where each server's embedded simulator and wrk go. */
  otherCpu: number;
  cores: number;
  log: (line: string) => void;
}

/** One instrumented server's cost over the plain one's, in one scenario. */
export interface OverheadFigures {
  /** Median over sets of (1 − instrumented req/s ÷ plain req/s), in %. */
  throughputPct: number;
  throughputPctRange: [number, number];
  /** Median over sets of (instrumented CPU ms per request ÷ plain − 1), in %. */
  cpuPct: number;
  cpuPctRange: [number, number];
  rps: number[];
  cpuMsPerRequest: number[];
}

export interface OverheadScenario extends Omit<OverheadFigures, 'rps' | 'cpuMsPerRequest'> {
  /** 'create' (POST /v1/transactions) or 'get' (GET /v1/transactions/{id}). */
  scenario: 'create' | 'get';
  /** The figures this extends are those of metrics and traces together; these, of the metrics alone. */
  metricsOnly: OverheadFigures;
  plainRps: number[];
  instrumentedRps: number[];
  plainCpuMsPerRequest: number[];
  instrumentedCpuMsPerRequest: number[];
}

interface Side {
  server: ServerChild;
  key: string;
  id?: string;
  dataDir: string;
}

/**
 * A round that completed fewer requests than this measures start-up and timers, not requests (a
 * create takes up to ~0.5 s at p99 on a busy 2-core machine): the measurement is refused rather
 * than reported.
 */
const MIN_REQUESTS_PER_ROUND = 20;

/**
 * Default rounds: 5 sets, each of three servers started for it and three 3 s rounds per scenario,
 * ~3.5 minutes with start-ups and warm-ups; an odd count, so the median is one set's figure.
 */
export const DEFAULT_SETS = 5;
export const DEFAULT_ROUND_SECONDS = 3;

const CREATE_BODY = JSON.stringify({ amount: 4750, currency: 'usd' });

export async function measureOverhead(options: OverheadOptions): Promise<OverheadScenario[]> {
  const collector = await startSink();
  const scenarios = ['create', 'get'] as const;
  // measured[scenario][server]: one CPU and one req/s figure per set, in the order plain, traced, metrics.
  const rounds = (): Rounds => ({ rps: [], cpu: [] });
  const measured = scenarios.map((): [Rounds, Rounds, Rounds] => [rounds(), rounds(), rounds()]);
  try {
    for (let set = 0; set < options.sets; set++) {
      // Each set on three servers started for it: one process can run a few per cent slower or
      // faster than another of the same build for its whole life (where V8 placed and how it
      // compiled its code), so servers that lived through every set would weigh one such draw
      // into every ratio.
      const sides = await startSides(options, collector.url);
      try {
        for (const [s, scenario] of scenarios.entries()) {
          options.log(`instrumentation overhead: set ${set + 1} of ${options.sets}, ${scenario}, ${options.roundSeconds} s rounds on a plain, a traced and a metrics-only server`);
          const request = (side: Side, durationSeconds: number): WrkRequest => ({
            url: scenario === 'create' ? `${side.server.url}/v1/transactions` : `${side.server.url}/v1/transactions/${side.id}`,
            method: scenario === 'create' ? 'POST' : 'GET',
            headers: headersOf(side, scenario === 'create'),
            ...(scenario === 'create' ? { body: CREATE_BODY } : {}),
            connections: options.connections,
            durationSeconds,
            cpu: options.otherCpu,
            cores: options.cores,
          });
          if (options.warmupSeconds > 0) for (const side of sides) await runWrk(request(side, options.warmupSeconds));
          // A B C, then C B A: the order flips every set, so a steady drift favours none.
          const order = set % 2 === 0 ? [0, 1, 2] : [2, 1, 0];
          for (const index of order) {
            const side = sides[index]!;
            const before = cpuMs(side.server.pid);
            const result = await runWrk(request(side, options.roundSeconds));
            const spent = cpuMs(side.server.pid) - before;
            const failed = result.errors.non2xx3xx + result.errors.connect + result.errors.read + result.errors.write + result.errors.timeout;
            if (failed > 0) throw new Error(`overhead: ${scenario} round had ${failed} failed requests`);
            if (result.requests < MIN_REQUESTS_PER_ROUND) throw new Error(`overhead: a ${scenario} round completed ${result.requests} requests in ${options.roundSeconds} s, too few to measure (is the machine busy?)`);
            measured[s]![index]!.rps.push(result.requestsPerSecond);
            measured[s]![index]!.cpu.push(spent / result.requests);
          }
        }
      } finally {
        await stopSides(sides);
      }
    }
    return scenarios.map((scenario, s) => {
      const [plain, traced, metricsOnly] = measured[s]!;
      const { rps, cpuMsPerRequest, ...both } = figuresOver(plain, traced);
      return {
        scenario,
        ...both,
        plainRps: plain.rps,
        instrumentedRps: rps,
        plainCpuMsPerRequest: plain.cpu.map((v) => round(v, 4)),
        instrumentedCpuMsPerRequest: cpuMsPerRequest,
        metricsOnly: figuresOver(plain, metricsOnly),
      };
    });
  } finally {
    await collector.close();
  }
}

/** A plain, a traced and a metrics-only server, each with a merchant and one payment to GET. */
async function startSides(options: OverheadOptions, collectorUrl: string): Promise<Side[]> {
  const sides: Side[] = [];
  try {
    for (const instrumented of ['off', 'on', 'metrics'] as const) {
      const dataDir = mkdtempSync(join(tmpdir(), `pos-bench-overhead-${instrumented}-`));
      try {
        const merchant = createMerchant(dataDir, 'Bench Overhead');
        const env: Record<string, string> =
          instrumented === 'off' ? {} : { POS_METRICS_LISTEN: '127.0.0.1:0', ...(instrumented === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl } : {}) };
        const server = await startPos(dataDir, options.serverCpu, options.cores, env, options.otherCpu);
        sides.push({ server, key: merchant.secretKey, dataDir });
      } catch (err) {
        rmSync(dataDir, { recursive: true, force: true });
        throw err;
      }
    }
    for (const side of sides) {
      const response = await fetch(`${side.server.url}/v1/transactions`, { method: 'POST', headers: headersOf(side, true), body: CREATE_BODY });
      if (response.status !== 201) throw new Error(`overhead: a create answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
      side.id = ((await response.json()) as { data: { id: string } }).data.id;
    }
    return sides;
  } catch (err) {
    await stopSides(sides);
    throw err;
  }
}

async function stopSides(sides: readonly Side[]): Promise<void> {
  for (const side of sides) {
    await side.server.stop();
    rmSync(side.dataDir, { recursive: true, force: true });
  }
}

/** One server's figures in one scenario, a req/s and a CPU ms per request for each set. */
interface Rounds {
  rps: number[];
  cpu: number[];
}

/** One instrumented server's rounds against the plain one's, set by set. */
function figuresOver(plain: Rounds, instrumented: Rounds): OverheadFigures {
  const throughput = plain.rps.map((p, i) => (1 - instrumented.rps[i]! / p) * 100);
  const cpu = plain.cpu.map((p, i) => (instrumented.cpu[i]! / p - 1) * 100);
  const cpuMsPerRequest = instrumented.cpu.map((v) => round(v, 4));
  return {
    throughputPct: round(median(throughput), 1),
    throughputPctRange: [round(Math.min(...throughput), 1), round(Math.max(...throughput), 1)],
    cpuPct: round(median(cpu), 1),
    cpuPctRange: [round(Math.min(...cpu), 1), round(Math.max(...cpu), 1)],
    rps: instrumented.rps,
    cpuMsPerRequest,
  };
}

function headersOf(side: Side, json: boolean): Record<string, string> {
  return { Authorization: `Bearer ${side.key}`, ...(json ? { 'Content-Type': 'application/json' } : {}) };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** An OTLP/HTTP collector that takes everything and keeps nothing: export costs the server, not the sink. */
async function startSink(): Promise<{ url: string; close(): Promise<void> }> {
  const sink = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(sink.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => sink.close(() => resolve())),
  };
}
