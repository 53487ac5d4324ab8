import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // The connected account's standing as the processor last reported it (re-read on its
  // account.updated events and now and then): whether it may charge and pay out, and what it
  // still needs. Null columns: never read yet. `requirements` is a JSON object (Stripe's fields).
  for (const [name, type] of [
    ['account_type', 'text'],
    ['charges_enabled', 'integer'],
    ['payouts_enabled', 'integer'],
    ['details_submitted', 'integer'],
    ['requirements', 'text'],
    ['synced_at', 'bigint'],
  ] as const) {
    await db.schema.alterTable('processor_accounts').addColumn(name, type).execute();
  }
}
