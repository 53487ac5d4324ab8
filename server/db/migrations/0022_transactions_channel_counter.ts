import type { Kysely } from 'kysely';
import { sql } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // GET /v1/transactions?channel= counts a channel from the counter `transactions:counter`
  // (payments of method terminal or cash), kept from now on at creation: count those made before.
  await db
    .insertInto('counters')
    .columns(['merchant_id', 'mode', 'name', 'value'])
    .expression(
      db
        .selectFrom('transactions')
        .select((eb) => ['merchant_id', 'mode', sql.lit('transactions:counter').as('name'), eb.fn.countAll().as('value')])
        .where('payment_method_type', 'in', ['terminal', 'cash'])
        .groupBy(['merchant_id', 'mode']),
    )
    .execute();
}
