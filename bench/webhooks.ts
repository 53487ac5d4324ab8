import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startWebhookReceiver } from './processes.js';
import type { SenderResult } from './webhook-phase.js';
import { pinTo } from './wrk.js';
import { positiveOption } from './options.js';

/**
 * Webhook delivery against its floor: `npm run build && node dist/bench/webhooks.js [--deliveries n] [--rounds n]`
 * (also run by `npm run bench`). One receiver process (bench/webhook-receiver.ts) on one CPU; on
 * the other, in turn, pos delivering an outbox backlog (bench/webhooks-pos-sender.ts) and a bare
 * Node sender posting the same signed bodies with the same requests in flight
 * (bench/webhooks-floor-sender.ts). Rounds go pos, floor, pos, …, ending with pos, so the floor
 * runs sit between pos runs and a machine drifting over the minute judges neither side; the ratio
 * is the mean of pos's runs over the mean of the floor's.
 */
const DIST_BENCH = fileURLToPath(new URL('./', import.meta.url));
const RESULTS_DIR = fileURLToPath(new URL('../../bench/results/', import.meta.url));

/** Deliveries per measured run: ~2-4 s of pos on a quiet machine, long enough that start and end do not count. */
export const DEFAULT_DELIVERIES = 10_000;

/** Deliveries sent unmeasured first by each sender: enough for V8 to have compiled the hot path. */
const WARMUP_DELIVERIES = 2_000;

/** A sender that has not finished by then is stuck (pos at 100 deliveries/s would still finish 10,000 within it). */
const SENDER_TIMEOUT_MS = 180_000;

export interface WebhookFigures {
  deliveries: number;
  posPerSecond: number[];
  floorPerSecond: number[];
  /** Mean of pos's runs over the mean of the floor's. */
  ratio: number;
}

function runSender(script: string, args: string[], cpu: number, cores: number): Promise<SenderResult> {
  const argv = pinTo(cpu, [process.execPath, join(DIST_BENCH, script), ...args], cores);
  return new Promise((resolve, reject) => {
    execFile(argv[0]!, argv.slice(1), { timeout: SENDER_TIMEOUT_MS, maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${script} failed: ${err.message}\n${stderr}`));
      const last = stdout.trim().split('\n').at(-1) ?? '';
      try {
        resolve(JSON.parse(last) as SenderResult);
      } catch {
        reject(new Error(`${script} printed no result:\n${stdout}\n${stderr}`));
      }
    });
  });
}

const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;

/** `rounds` pos runs with a floor run between each two: rounds 2 is pos, floor, pos. */
export async function measureWebhooks(options: { deliveries: number; rounds: number; senderCpu: number; receiverCpu: number; cores: number; log?: (line: string) => void }): Promise<WebhookFigures> {
  const receiver = await startWebhookReceiver(options.receiverCpu, options.cores);
  const warmup = String(Math.min(WARMUP_DELIVERIES, options.deliveries));
  const posPerSecond: number[] = [];
  const floorPerSecond: number[] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      if (round > 0) {
        const floor = await runSender('webhooks-floor-sender.js', [receiver.url, warmup], options.senderCpu, options.cores);
        floorPerSecond.push(floor.deliveriesPerSecond);
        options.log?.(`  floor: ${floor.deliveriesPerSecond.toLocaleString('en-US')} deliveries/s`);
      }
      const pos = await runSender('webhooks-pos-sender.js', [receiver.url, String(options.deliveries), warmup], options.senderCpu, options.cores);
      posPerSecond.push(pos.deliveriesPerSecond);
      options.log?.(`  pos: ${pos.deliveriesPerSecond.toLocaleString('en-US')} deliveries/s`);
    }
  } finally {
    await receiver.stop();
  }
  return { deliveries: options.deliveries, posPerSecond, floorPerSecond, ratio: Math.round((mean(posPerSecond) / mean(floorPerSecond)) * 1000) / 1000 };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { deliveries: { type: 'string' }, rounds: { type: 'string' } }, strict: true });
  const cores = cpus().length;
  const figures = await measureWebhooks({
    deliveries: positiveOption('deliveries', values.deliveries, DEFAULT_DELIVERIES),
    rounds: Math.max(2, positiveOption('rounds', values.rounds, 2)),
    // As in `npm run bench`: senders where the servers run, the receiver where wrk runs.
    senderCpu: 1,
    receiverCpu: 0,
    cores,
    log: (line) => void process.stderr.write(`${line}\n`),
  });
  const at = new Date().toISOString();
  const result = { benchmark: 'webhooks', at, node: process.version, ...figures, webhooks_floor_ratio: figures.ratio };
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `webhooks-${at.replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result)}\n${file}\n`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
