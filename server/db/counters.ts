import type { Mode, TransactionStatus } from './schema.js';
import { Prepared } from './prepared.js';
import type { Executor } from './store.js';

/**
 * `reader_actions` numbers reader action changes per scope (pushes to agents resume after one).
 * `events:pruned` how many of a scope's oldest events retention deleted (server/retention.ts).
 * `transactions:<status>` counts per status, so filtered lists also answer totalCount without
 * COUNT(*); `transactions:counter` how many of the `transactions` were taken at the till (the
 * online ones are the rest); `customers:deleted` how many of the `customers` were deleted.
 */
export type CounterName =
  | 'customers'
  | 'customers:deleted'
  | 'transactions'
  | 'transactions:counter'
  | 'events'
  | 'events:pruned'
  | 'reader_actions'
  | `transactions:${TransactionStatus}`;

/** Increments and returns the counter: the new row's sequence number and the list's new size. */
type CounterArgs = { merchantId: string; mode: Mode; name: CounterName; delta: number };

const bump = new Prepared<CounterArgs, { value: number }>((db, arg) =>
  db
    .insertInto('counters')
    .values({ merchant_id: arg('merchantId'), mode: arg('mode'), name: arg('name'), value: arg('delta') })
    .onConflict((oc) => oc.columns(['merchant_id', 'mode', 'name']).doUpdateSet((eb) => ({ value: eb('counters.value', '+', arg('delta')) })))
    .returning('value'),
);

const readCounter = new Prepared<Omit<CounterArgs, 'delta'>, { value: number }>((db, arg) =>
  db.selectFrom('counters').select('value').where('merchant_id', '=', arg('merchantId')).where('mode', '=', arg('mode')).where('name', '=', arg('name')),
);

export async function nextSeq(trx: Executor, merchantId: string, mode: Mode, name: CounterName): Promise<number> {
  const row = await bump.first(trx, { merchantId, mode, name, delta: 1 });
  if (!row) throw new Error(`counter ${name} returned no row`);
  return row.value;
}

export async function readCount(db: Executor, merchantId: string, mode: Mode, name: CounterName): Promise<number> {
  const row = await readCounter.first(db, { merchantId, mode, name });
  return row ? row.value : 0;
}

/** Adds `delta` (possibly negative) to a counter, creating it at `delta` when missing. */
export async function addToCounter(trx: Executor, merchantId: string, mode: Mode, name: CounterName, delta: number): Promise<void> {
  await bump.execute(trx, { merchantId, mode, name, delta });
}
