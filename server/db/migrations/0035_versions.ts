import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // Which versions of pos migrated the database: an older one refused by it names the newer one.
  await db.schema
    .createTable('store_versions')
    .addColumn('version', 'text', (c) => c.primaryKey())
    .addColumn('migrated_at', 'bigint', (c) => c.notNull())
    .addColumn('last_migration', 'text', (c) => c.notNull())
    .execute();
  // The upstream protocol each agent last spoke: every agent before this column spoke the first.
  await db.schema
    .alterTable('agents')
    .addColumn('protocol', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}
