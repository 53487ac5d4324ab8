import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // The processor's rate budget on PostgreSQL: one sliding window of send times (a JSON array)
  // per platform account and per endpoint, shared by every instance (server/processor/budget.ts).
  await db.schema
    .createTable('processor_budgets')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('sends', 'text', (c) => c.notNull())
    .execute();
}
