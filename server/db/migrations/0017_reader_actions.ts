import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // Each reader's action as the processor's events report it (server/terminal/reader-actions.ts):
  // what the counter shows, pushed to the merchant's agents.
  const readers = () => db.schema.alterTable('terminal_readers');
  await readers().addColumn('action_seq', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await readers().addColumn('action_type', 'text').execute();
  await readers().addColumn('action_status', 'text').execute();
  await readers().addColumn('action_payment_intent_id', 'text').execute();
  await readers().addColumn('action_previous_payment_intent_id', 'text').execute();
  await readers().addColumn('action_card_presented', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await readers().addColumn('action_failure_code', 'text').execute();
  await readers().addColumn('action_failure_message', 'text').execute();
  await readers().addColumn('action_processor_at', 'bigint').execute();
  await readers().addColumn('action_updated_at', 'bigint').execute();
  await readers().addColumn('action_check_at', 'bigint').execute();
  await readers().addColumn('processor_status', 'text').execute();
  // Pushes to agents: the scope's readers changed after the last seq sent.
  await db.schema.createIndex('terminal_readers_action_seq').on('terminal_readers').columns(['merchant_id', 'mode', 'action_seq']).execute();
  // The reconciliation timer: the earliest overdue action.
  await db.schema.createIndex('terminal_readers_action_check').on('terminal_readers').column('action_check_at').execute();
  await db.schema.createIndex('terminal_readers_action_intent').on('terminal_readers').column('action_payment_intent_id').execute();
}
