import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { measureBytesPerPayment } from './figures.js';
import { positiveOption } from './options.js';

/**
 * `node dist/bench/bytes.js [--payments N]`: the bench's bytes-per-payment figure on its own, with
 * where the bytes go (each table and index of pos.db, from SQLite's dbstat). A count, not a rate:
 * a busy machine does not change it.
 */
const { values } = parseArgs({ options: { payments: { type: 'string' } } });
const payments = positiveOption('payments', values.payments, 500);
const result = await measureBytesPerPayment(payments, { cpu: 1, cores: availableParallelism() });
const width = Math.max(...result.byObject.map((o) => o.name.length), 'total'.length);
process.stdout.write(`bytes per payment in pos.db over ${payments} card payments with an Idempotency-Key\n`);
for (const o of result.byObject) process.stdout.write(`  ${o.name.padEnd(width)}  ${String(o.bytesPerPayment).padStart(6)}\n`);
process.stdout.write(`  ${'total'.padEnd(width)}  ${String(result.bytesPerPayment).padStart(6)}\n`);
