import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // The retention pass finds the oldest rows of each by these (server/retention.ts); events are
  // pruned per merchant and mode in seq order, through the index they are listed by.
  await db.schema.createIndex('processor_events_received').on('processor_events').columns(['received_at']).execute();
  await db.schema.createIndex('webhook_deliveries_completed').on('webhook_deliveries').columns(['completed_at']).execute();
}
