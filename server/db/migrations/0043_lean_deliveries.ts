import { type Kysely, sql } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * The webhook queue's indexes hold only the deliveries their queries look for: every delivery is
 * inserted, leased and finished once, and each index entry it has is one more write at each step.
 * The queries name `status = 'pending'` as a literal (server/webhooks/queue.ts, endpoints.ts), as
 * these indexes are written, so both databases use them.
 */
export async function up(db: AnyDb): Promise<void> {
  // The worker's queue: pending deliveries by when they come due. A finished delivery leaves it.
  await db.schema.dropIndex('webhook_deliveries_due').execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').column('next_attempt_at').where(sql.ref('status'), '=', 'pending').execute();

  // Per-endpoint ordering (is an earlier event about the same object still pending there?) and an
  // endpoint's pending deliveries (enabled again, deleted): status is the predicate, not a column,
  // so finishing a delivery removes its entry instead of moving it.
  await db.schema.dropIndex('webhook_deliveries_order').execute();
  await db.schema
    .createIndex('webhook_deliveries_order')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'object_id', 'event_seq'])
    .where(sql.ref('status'), '=', 'pending')
    .execute();

  // Retention looks for finished deliveries completed before its cutoff; a pending one has no
  // completed_at and needs no entry until it finishes.
  await db.schema.dropIndex('webhook_deliveries_completed').execute();
  await db.schema.createIndex('webhook_deliveries_completed').on('webhook_deliveries').column('completed_at').where('completed_at', 'is not', null).execute();
}
