import type { Kysely } from 'kysely';
import { sql } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // The key that recorded each payment is the one the audit trail names for the request that made
  // it (its first entry about the payment).
  await sql`
    UPDATE transactions SET created_by_key_id = (
      SELECT a.key_id FROM audit_log a
      WHERE a.merchant_id = transactions.merchant_id AND a.mode = transactions.mode AND a.object_id = transactions.id AND a.key_id IS NOT NULL
      ORDER BY a.seq LIMIT 1
    )
    WHERE created_by_key_id IS NULL
  `.execute(db);

  // Terminal payments sent to a reader stand at that reader's location.
  await sql`
    UPDATE transactions SET location_id = (
      SELECT r.location_id FROM terminal_readers r WHERE r.id = transactions.terminal_id
    )
    WHERE location_id IS NULL AND terminal_id IS NOT NULL
  `.execute(db);

  // Cash sales taken before sales named their till: the agent that opened the drawer for the sale
  // reported it to the audit trail; where every reader that agent follows stands at one location,
  // the sale was taken there, and where it follows one reader, at that till. Others stay unassigned.
  const openings = (await db
    .selectFrom('audit_log')
    .innerJoin('transactions', (join) => join.onRef('transactions.id', '=', 'audit_log.object_id').onRef('transactions.merchant_id', '=', 'audit_log.merchant_id').onRef('transactions.mode', '=', 'audit_log.mode'))
    .select(['transactions.id as transaction_id', 'audit_log.target_id as agent_id'])
    .where('audit_log.operation', '=', 'agent drawer_opened')
    .where('transactions.payment_method_type', '=', 'cash')
    .where('transactions.location_id', 'is', null)
    .where('transactions.terminal_id', 'is', null)
    .execute()) as { transaction_id: string; agent_id: string | null }[];
  const tills = new Map<string, { id: string; location_id: string; processor_reader_id: string }[]>();
  for (const { transaction_id: id, agent_id: agent } of openings) {
    if (!agent) continue;
    if (!tills.has(agent)) {
      tills.set(agent, (await db.selectFrom('terminal_readers').select(['id', 'location_id', 'processor_reader_id']).where('agent_id', '=', agent).execute()) as { id: string; location_id: string; processor_reader_id: string }[]);
    }
    const readers = tills.get(agent)!;
    const locations = new Set(readers.map((r) => r.location_id));
    if (locations.size !== 1) continue;
    const only = readers.length === 1 ? readers[0]! : undefined;
    await db
      .updateTable('transactions')
      .set({ location_id: readers[0]!.location_id, ...(only ? { terminal_id: only.id, reader_id: only.processor_reader_id } : {}) })
      .where('id', '=', id)
      .execute();
  }
}
