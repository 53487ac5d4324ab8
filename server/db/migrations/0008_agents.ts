import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // On-premise agents, by the id each one generates on first start and keeps in its data dir.
  await db.schema
    .createTable('agents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('heartbeat_ms', 'integer', (c) => c.notNull())
    .addColumn('connected_at', 'bigint')
    .addColumn('last_heartbeat_at', 'bigint')
    .addColumn('last_report_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('terminal_readers').addColumn('agent_id', 'text').execute();
  await db.schema.alterTable('terminal_readers').addColumn('presence_expires_at', 'bigint').execute();
  // The presence expiry pass: agent-reported online readers, soonest expiry first.
  await db.schema.createIndex('terminal_readers_presence').on('terminal_readers').columns(['status_source', 'status', 'presence_expires_at']).execute();
  await db.schema.createIndex('terminal_readers_serial').on('terminal_readers').columns(['merchant_id', 'mode', 'serial_number']).execute();
  // What agents saw readers do, in the order they saw it (the /v1 API does not report it).
  await db.schema
    .createTable('agent_reports')
    .addColumn('agent_id', 'text', (c) => c.notNull())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('merchant_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('reader', 'text', (c) => c.notNull())
    .addColumn('activity', 'text', (c) => c.notNull())
    .addColumn('transaction_id', 'text')
    .addColumn('failure_code', 'text')
    .addColumn('observed_at', 'bigint', (c) => c.notNull())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('agent_reports_pk', ['agent_id', 'seq'])
    .execute();
}
