import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // The main keys values are sealed under (by id, never the key), each with a known value sealed
  // under it: a process given another key refuses to start instead of reading garbage.
  await db.schema
    .createTable('encryption_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('check_value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('retired_at', 'bigint')
    .execute();
  // `primary_key`: the key new values are sealed under; `legacy_sealed_at`: when the values stored
  // in plaintext before encryption at rest were all sealed.
  await db.schema
    .createTable('encryption_settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}
