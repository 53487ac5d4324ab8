import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  await db.schema
    .createTable('terminal_locations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('processor_location_id', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('terminal_locations_merchant').on('terminal_locations').columns(['merchant_id', 'mode', 'created_at']).execute();
  await db.schema
    .createTable('terminal_readers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('location_id', 'text', (c) => c.notNull().references('terminal_locations.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('serial_number', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('processor_reader_id', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('status_source', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('terminal_readers_merchant').on('terminal_readers').columns(['merchant_id', 'mode', 'created_at']).execute();
  // The stale sweep's work list: pending terminal payments, oldest first.
  await db.schema.createIndex('transactions_terminal_pending').on('transactions').columns(['payment_method_type', 'status', 'created_at']).execute();
  await db.schema.createIndex('transactions_receipt').on('transactions').columns(['receipt_token']).unique().execute();
}
