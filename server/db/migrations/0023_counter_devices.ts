import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // The receipt printers and customer displays agents report (server/terminal/devices.ts), by
  // the agent and its name for the device; `id` is the uuid the API shows.
  await db.schema
    .createTable('counter_devices')
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id'))
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('connection', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('paper', 'text')
    .addColumn('cover_open', 'integer')
    .addColumn('drawer_open', 'integer')
    .addColumn('queued', 'integer')
    .addColumn('presence_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('counter_devices_pk', ['merchant_id', 'mode', 'agent_id', 'device_id'])
    .execute();
  // The presence expiry pass: online devices, soonest expiry first.
  await db.schema.createIndex('counter_devices_presence').on('counter_devices').columns(['status', 'presence_expires_at']).execute();
}
