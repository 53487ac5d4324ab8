import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // The audit trail: one entry per change made through /v1 or reported by an agent, each hashed
  // with the one before it of the same merchant and mode (server/audit/log.ts).
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('key_type', 'text')
    .addColumn('key_last4', 'text')
    .addColumn('request_id', 'text')
    .addColumn('idempotency_key', 'text')
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('target_id', 'text')
    .addColumn('object_id', 'text')
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('details', 'text')
    .addColumn('prev_hash', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .execute();
  // One entry per place in the chain: a second writer at the same place fails instead of forking it.
  await db.schema.createIndex('audit_log_chain').on('audit_log').columns(['merchant_id', 'mode', 'seq']).unique().execute();
  await db.schema.createIndex('audit_log_object').on('audit_log').columns(['merchant_id', 'mode', 'object_id', 'seq']).execute();
  await db.schema.createIndex('audit_log_target').on('audit_log').columns(['merchant_id', 'mode', 'target_id', 'seq']).execute();
  await db.schema.createIndex('audit_log_key').on('audit_log').columns(['merchant_id', 'mode', 'key_id', 'seq']).execute();
  // An agent's report sent again after a reconnect is found by its key and not written twice.
  await db.schema.createIndex('audit_log_idempotency').on('audit_log').columns(['merchant_id', 'mode', 'idempotency_key']).execute();
  await db.schema.createIndex('audit_log_created').on('audit_log').columns(['merchant_id', 'mode', 'created_at']).execute();

  // Each chain's head: the row every writer locks first, so writers of one merchant and mode take
  // their places one after another, on every instance.
  await db.schema
    .createTable('audit_heads')
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('audit_heads_pk', ['merchant_id', 'mode'])
    .execute();

  // The request behind an event (Stripe's `request: {id, idempotency_key}`); null for the
  // processor's news and background work.
  await db.schema.alterTable('events').addColumn('request_id', 'text').execute();
  await db.schema.alterTable('events').addColumn('idempotency_key', 'text').execute();

  // Who started an idempotent request (key, request, operation), so work the recovery pass
  // finishes is still written to the audit trail under the request that asked for it.
  await db.schema.alterTable('idempotency_keys').addColumn('origin', 'text').execute();
}
