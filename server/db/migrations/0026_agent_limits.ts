import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // The key an agent last connected with: a key may have only so many agents (server/terminal/agent-limits.ts).
  await db.schema.alterTable('agents').addColumn('api_key_id', 'text').execute();
  await db.schema.createIndex('agents_api_key').on('agents').columns(['api_key_id']).execute();
  // The retention pass: the oldest reports first.
  await db.schema.createIndex('agent_reports_received').on('agent_reports').columns(['received_at']).execute();
}
