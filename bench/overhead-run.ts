import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { DEFAULT_SETS, DEFAULT_ROUND_SECONDS, measureOverhead } from './overhead.js';
import { positiveOption } from './options.js';
import { ensureWrk } from './wrk.js';

const USAGE = `node dist/bench/overhead-run.js [options]

The instrumentation overhead alone (the same measurement npm run bench makes): a plain pos server, one
with metrics and OTLP traces and one with metrics alone, side by side, short rounds alternating
between them.

  --sets <n>            sets, each on three servers started for it, with one round on each per scenario (default ${DEFAULT_SETS})
  --round <s>           seconds per round (default ${DEFAULT_ROUND_SECONDS})
  --warmup <s>          unmeasured seconds on each server before a scenario (default 2)
  --connections <n>     concurrent connections (default 50)
  --help                this text`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { sets: { type: 'string' }, round: { type: 'string' }, warmup: { type: 'string' }, connections: { type: 'string' }, help: { type: 'boolean', default: false } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const log = (line: string): void => void process.stderr.write(`bench: ${line}\n`);
  ensureWrk(log);
  const results = await measureOverhead({
    sets: positiveOption('sets', values.sets, DEFAULT_SETS),
    roundSeconds: positiveOption('round', values.round, DEFAULT_ROUND_SECONDS),
    warmupSeconds: values.warmup === '0' ? 0 : positiveOption('warmup', values.warmup, 2),
    connections: positiveOption('connections', values.connections, 50),
    serverCpu: 1,
    otherCpu: 0,
    cores: cpus().length,
    log,
  });
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
