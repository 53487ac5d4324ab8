import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // Disputes of payments, as the processor reports them; one per payment (a charge is disputed once).
  await db.schema
    .createTable('disputes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('reference', 'text', (c) => c.notNull().unique())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('transaction_id', 'text', (c) => c.notNull().references('transactions.id'))
    .addColumn('processor_dispute_id', 'text', (c) => c.notNull().unique())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('evidence', 'text', (c) => c.notNull())
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('evidence_submission_count', 'integer', (c) => c.notNull())
    .addColumn('evidence_due_by', 'bigint')
    .addColumn('funds_withdrawn_at', 'bigint')
    .addColumn('funds_reinstated_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('closed_at', 'bigint')
    .addColumn('synced_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('disputes_list').on('disputes').columns(['merchant_id', 'mode', 'created_at']).execute();
  await db.schema.createIndex('disputes_transaction').on('disputes').columns(['transaction_id']).execute();
  // The polling fallback's work list: disputes still open, least recently checked first.
  await db.schema.createIndex('disputes_open').on('disputes').columns(['closed_at', 'synced_at']).execute();
  await db.schema.alterTable('transactions').addColumn('dispute_id', 'text').execute();
  await db.schema.alterTable('transactions').addColumn('dispute_status', 'text').execute();

  // Payouts from a merchant's connected account to its bank, made by us or by the processor's schedule.
  await db.schema
    .createTable('payouts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('reference', 'text', (c) => c.notNull().unique())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('processor_payout_id', 'text', (c) => c.notNull().unique())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('automatic', 'integer', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('arrival_date', 'bigint')
    .addColumn('failure_code', 'text')
    .addColumn('failure_message', 'text')
    .addColumn('metadata', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('synced_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('payouts_list').on('payouts').columns(['merchant_id', 'mode', 'created_at']).execute();
  await db.schema.createIndex('payouts_open').on('payouts').columns(['status', 'synced_at']).execute();

  // Customers are mirrored on the processor, and deleted ones are kept (their payments name them).
  await db.schema.alterTable('customers').addColumn('processor_customer_id', 'text').execute();
  await db.schema.alterTable('customers').addColumn('deleted_at', 'bigint').execute();
}
