import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // When a location's counter prints the customer's receipt by itself: always, ask or never.
  await db.schema
    .alterTable('terminal_locations')
    .addColumn('receipt_policy', 'text', (c) => c.notNull().defaultTo('always'))
    .execute();
}
