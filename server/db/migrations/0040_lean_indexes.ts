import { type Kysely, sql } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Indexes cost every payment bytes (each holds the merchant id again), so each kept is one a query
 * uses, over the rows that query can match.
 */
export async function up(db: AnyDb): Promise<void> {
  // No query looks events up by object; the log is read by merchant, mode and seq or type.
  await db.schema.dropIndex('events_object').execute();
  // Only an agent's drawer report is looked up by its key (server/audit/log.ts), not every request made with one.
  await db.schema.dropIndex('audit_log_idempotency').execute();
  await db.schema
    .createIndex('audit_log_drawer')
    .on('audit_log')
    .columns(['merchant_id', 'mode', 'idempotency_key'])
    .where(sql.ref('operation'), '=', 'agent drawer_opened')
    .execute();
  // A target is named by requests that act on an object (a refund's payment), never by a create.
  await db.schema.dropIndex('audit_log_target').execute();
  await db.schema
    .createIndex('audit_log_target')
    .on('audit_log')
    .columns(['merchant_id', 'mode', 'target_id', 'seq'])
    .where('target_id', 'is not', null)
    .execute();
}
