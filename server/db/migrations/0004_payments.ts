import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('transactions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('reference', 'text', (c) => c.notNull().unique())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('amount_captured', 'bigint', (c) => c.notNull())
    .addColumn('amount_refunded', 'bigint', (c) => c.notNull())
    .addColumn('amount_refund_pending', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('payment_method_type', 'text', (c) => c.notNull())
    .addColumn('capture_method', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('receipt_email', 'text')
    .addColumn('return_url', 'text')
    .addColumn('customer_id', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('platform_fee_cents', 'bigint', (c) => c.notNull())
    .addColumn('tip_amount', 'bigint', (c) => c.notNull())
    .addColumn('processor_payment_intent_id', 'text', (c) => c.unique())
    .addColumn('client_secret', 'text')
    .addColumn('card_brand', 'text')
    .addColumn('card_last_four', 'text')
    .addColumn('failure_code', 'text')
    .addColumn('decline_code', 'text')
    .addColumn('failure_message', 'text')
    .addColumn('cancellation_reason', 'text')
    .addColumn('receipt_url', 'text')
    .addColumn('receipt_token', 'text')
    .addColumn('terminal_id', 'text')
    .addColumn('reader_id', 'text')
    .addColumn('link_id', 'text')
    .addColumn('checkout_session_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('captured_at', 'bigint')
    .addColumn('failed_at', 'bigint')
    .addColumn('canceled_at', 'bigint')
    .addColumn('refunded_at', 'bigint')
    .addColumn('disputed_at', 'bigint')
    .addColumn('synced_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('transactions_list').on('transactions').columns(['merchant_id', 'mode', 'seq']).unique().execute();
  await db.schema.createIndex('transactions_status').on('transactions').columns(['merchant_id', 'mode', 'status', 'seq']).execute();
  // The reconciler's work list: payments still waiting for an outcome, least recently checked first.
  await db.schema.createIndex('transactions_open').on('transactions').columns(['status', 'synced_at']).execute();

  await db.schema
    .createTable('refunds')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('reference', 'text', (c) => c.notNull().unique())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('transaction_id', 'text', (c) => c.notNull().references('transactions.id'))
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('processor_refund_id', 'text', (c) => c.unique())
    .addColumn('failure_reason', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('refunds_transaction').on('refunds').columns(['transaction_id', 'created_at']).execute();

  // Idempotent requests as recovery points (see server/idempotency/keys.ts).
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('client_supplied', 'integer', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('recovery_point', 'text', (c) => c.notNull())
    .addColumn('state', 'text')
    .addColumn('locked_at', 'bigint')
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('idempotency_keys_key').on('idempotency_keys').columns(['merchant_id', 'mode', 'key']).unique().execute();
  await db.schema.createIndex('idempotency_keys_open').on('idempotency_keys').columns(['recovery_point', 'locked_at']).execute();
  await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').columns(['expires_at']).execute();

  // The outbox: every state change writes its event here in the same transaction.
  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('object_id', 'text')
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_list').on('events').columns(['merchant_id', 'mode', 'seq']).unique().execute();
  await db.schema.createIndex('events_object').on('events').columns(['object_id', 'seq']).execute();
}
