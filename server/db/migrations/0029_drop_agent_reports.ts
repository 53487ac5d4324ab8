import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // Agents reported what readers did; the server now pushes each reader with its payment and nothing
  // read the reports back, so they and the agents' place in their sequence go.
  await db.schema.dropTable('agent_reports').execute();
  await db.schema.alterTable('agents').dropColumn('last_report_seq').execute();
}
