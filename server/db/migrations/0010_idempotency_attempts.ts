import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // Failed attempts at an unfinished request and when the recovery pass may try it again, so a
  // request the processor keeps failing is retried with backoff and then given up, never forever.
  await db.schema.alterTable('idempotency_keys').addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('idempotency_keys').addColumn('next_attempt_at', 'bigint').execute();
  // The id of the HTTP request that started the work, named in the log line when it is given up.
  await db.schema.alterTable('idempotency_keys').addColumn('request_id', 'text').execute();
}
