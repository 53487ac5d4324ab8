import type { Mode, TransactionStatus } from '../db/schema.js';
import type { Executor } from '../db/store.js';

/** `transactions:<status>` counts per status, so filtered lists also answer totalCount without COUNT(*). */
export type CounterName = 'customers' | 'transactions' | 'events' | `transactions:${TransactionStatus}`;

/** Increments and returns the counter: the new row's sequence number and the list's new size. */
export async function nextSeq(trx: Executor, merchantId: string, mode: Mode, name: CounterName): Promise<number> {
  const row = await trx
    .insertInto('counters')
    .values({ merchant_id: merchantId, mode, name, value: 1 })
    .onConflict((oc) => oc.columns(['merchant_id', 'mode', 'name']).doUpdateSet((eb) => ({ value: eb('counters.value', '+', 1) })))
    .returning('value')
    .executeTakeFirstOrThrow();
  return Number(row.value);
}

export async function readCount(db: Executor, merchantId: string, mode: Mode, name: CounterName): Promise<number> {
  const row = await db
    .selectFrom('counters')
    .select('value')
    .where('merchant_id', '=', merchantId)
    .where('mode', '=', mode)
    .where('name', '=', name)
    .executeTakeFirst();
  return row ? Number(row.value) : 0;
}

/** Adds `delta` (possibly negative) to a counter, creating it at `delta` when missing. */
export async function addToCounter(trx: Executor, merchantId: string, mode: Mode, name: CounterName, delta: number): Promise<void> {
  await trx
    .insertInto('counters')
    .values({ merchant_id: merchantId, mode, name, value: delta })
    .onConflict((oc) => oc.columns(['merchant_id', 'mode', 'name']).doUpdateSet((eb) => ({ value: eb('counters.value', '+', delta) })))
    .execute();
}
