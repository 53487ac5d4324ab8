import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // Cash sales (payment_method_type `cash`): what the customer handed over and the change given.
  await db.schema.alterTable('transactions').addColumn('amount_tendered', 'bigint').execute();
  await db.schema.alterTable('transactions').addColumn('change_due', 'bigint').execute();
}
