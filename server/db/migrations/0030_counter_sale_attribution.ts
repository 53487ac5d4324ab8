import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // A sale taken at a counter belongs to its till: the location it was taken at (a cash sale may
  // have no card reader), the API key that recorded it (each till has its own counter key), and,
  // for a sale the agent took while the server was out of reach, the local reference its receipt
  // printed.
  await db.schema.alterTable('transactions').addColumn('location_id', 'text').execute();
  await db.schema.alterTable('transactions').addColumn('created_by_key_id', 'text').execute();
  await db.schema.alterTable('transactions').addColumn('offline_reference', 'text').execute();
}
