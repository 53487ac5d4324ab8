import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // A location's on-reader tipping (JSON, null: off) and the processor configuration carrying it.
  await db.schema.alterTable('terminal_locations').addColumn('tipping', 'text').execute();
  await db.schema.alterTable('terminal_locations').addColumn('processor_configuration_id', 'text').execute();
  // A terminal payment's cart and reader options (JSON), kept for the reader and shown on the payment.
  await db.schema.alterTable('transactions').addColumn('terminal_options', 'text').execute();
}
