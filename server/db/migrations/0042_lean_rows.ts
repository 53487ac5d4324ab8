import { type Kysely, sql } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Bytes every payment no longer keeps: a link of the audit chain it held twice, and index entries
 * that the queries using those indexes can never match.
 */
export async function up(db: AnyDb): Promise<void> {
  // An entry's prev_hash is the hash stored on the entry at the seq before it (entries are never
  // deleted): it is read from there (server/audit/log.ts), and what it covers is unchanged.
  await db.schema.alterTable('audit_log').dropColumn('prev_hash').execute();

  // An entry is looked up by the object it names together with its merchant and mode, but object
  // ids are unique to a merchant (uuids, references): the id alone finds the few entries to check.
  // (SQLite answers that filter from the chain's index, whatever this one holds: it is for PostgreSQL.)
  await db.schema.dropIndex('audit_log_object').execute();
  await db.schema.createIndex('audit_log_object').on('audit_log').column('object_id').execute();
  // Likewise a key belongs to one merchant; its mode stays, so that SQLite's planner, which has no
  // statistics, still prefers this index to the chain's (merchant, mode, seq).
  await db.schema.dropIndex('audit_log_key').execute();
  await db.schema.createIndex('audit_log_key').on('audit_log').columns(['key_id', 'mode', 'seq']).execute();

  // The recovery pass looks for unfinished requests only; a day of finished keys need no entry.
  await db.schema.dropIndex('idempotency_keys_open').execute();
  await db.schema
    .createIndex('idempotency_keys_open')
    .on('idempotency_keys')
    .columns(['recovery_point', 'locked_at'])
    .where('recovery_point', '<>', 'finished')
    .execute();

  // The reconciler polls payments still waiting for an outcome, least recently checked first.
  await db.schema.dropIndex('transactions_open').execute();
  await db.schema
    .createIndex('transactions_open')
    .on('transactions')
    .column('synced_at')
    .where(sql.ref('status'), 'in', ['pending', 'requires_capture'])
    .execute();

  // The stale-payment sweep looks for pending terminal payments only, oldest first.
  await db.schema.dropIndex('transactions_terminal_pending').execute();
  await db.schema
    .createIndex('transactions_terminal_pending')
    .on('transactions')
    .column('created_at')
    .where((eb) => eb.and([eb(sql.ref('payment_method_type'), '=', 'terminal'), eb(sql.ref('status'), '=', 'pending')]))
    .execute();
}
