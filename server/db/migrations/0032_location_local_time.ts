import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // A location's IANA time zone (null: the machine's) and when its business day ends, HH:MM local
  // time: receipts, the Day view and the close-out read times through them.
  await db.schema.alterTable('terminal_locations').addColumn('time_zone', 'text').execute();
  await db.schema
    .alterTable('terminal_locations')
    .addColumn('day_ends_at', 'text', (c) => c.notNull().defaultTo('00:00'))
    .execute();
}
