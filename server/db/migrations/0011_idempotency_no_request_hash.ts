import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // A reused key answers with its first result whatever the new request says (docs/payments.md),
  // so a hash of the request had nothing to be compared with.
  await db.schema.alterTable('idempotency_keys').dropColumn('request_hash').execute();
}
