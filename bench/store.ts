import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { openSqliteStore, type BatchReport } from '../server/db/sqlite.js';

/** What the group commit achieved for one arrival pattern. */
export interface StoreBenchResult {
  readonly label: string;
  readonly units: number;
  readonly unitsPerSecond: number;
  readonly commitsPer1000Units: number;
  readonly meanBatch: number;
  readonly maxBatch: number;
  readonly meanUnitMicros: number;
}

/**
 * In-process measurement of `Store.transaction`: a counter bump plus an insert per unit (the shape of
 * a payment create), either one caller at a time (no sharing possible) or `concurrency` callers each
 * running units back to back (what 50 HTTP connections produce).
 */
export async function benchStore(options: { units: number; concurrency: number }): Promise<StoreBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'pos-bench-store-'));
  const batches: BatchReport[] = [];
  const store = await openSqliteStore(dir, { onBatch: (b) => batches.push(b) });
  try {
    await sql`create table bench_rows (id integer primary key, body text not null)`.execute(store.db);
    await sql`create table bench_counter (name text primary key, value integer not null)`.execute(store.db);
    batches.length = 0;
    let next = 0;
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (next < options.units) {
          next++;
          await store.transaction(async (trx) => {
            const { rows } = await sql<{ value: number }>`insert into bench_counter (name, value) values ('rows', 1)
              on conflict (name) do update set value = value + 1 returning value`.execute(trx);
            await sql`insert into bench_rows (id, body) values (${rows[0]!.value}, ${'{"amount":4750,"currency":"usd"}'})`.execute(trx);
          });
        }
      }),
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const committed = batches.filter((b) => b.committed);
    const units = committed.reduce((sum, b) => sum + b.units, 0);
    return {
      label: options.concurrency === 1 ? 'one caller' : `${options.concurrency} concurrent callers`,
      units,
      unitsPerSecond: Math.round(units / seconds),
      commitsPer1000Units: Math.round((committed.length / units) * 1000 * 10) / 10,
      meanBatch: Math.round((units / committed.length) * 10) / 10,
      maxBatch: Math.max(...committed.map((b) => b.units)),
      meanUnitMicros: Math.round((seconds / units) * 1e6),
    };
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
