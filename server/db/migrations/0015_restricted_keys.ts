import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // Restricted keys (rk_) carry a name and their permissions (a JSON array); any key can be
  // revoked, which stops it at once and for good (expiry is the roll's grace).
  await db.schema.alterTable('api_keys').addColumn('name', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('scopes', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('revoked_at', 'bigint').execute();
}
