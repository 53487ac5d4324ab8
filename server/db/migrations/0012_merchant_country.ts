import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // Where the merchant is: its connected account's country, its default currency, and whether it
  // may take ACH debits. Merchants made before countries existed were all in the US.
  await db.schema.alterTable('merchants').addColumn('country', 'text', (c) => c.notNull().defaultTo('US')).execute();
}
