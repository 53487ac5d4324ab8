import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // When the processor last told us a reader's status (server/terminal/reader-actions.ts): a
  // payment for a reader it said was online moments ago does not read the reader again first.
  await db.schema.alterTable('terminal_readers').addColumn('processor_status_at', 'bigint').execute();
}
