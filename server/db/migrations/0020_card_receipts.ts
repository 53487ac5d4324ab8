import type { Kysely } from 'kysely';

// A migration sees the database as it was when it was written, not as Tables says it is now.
type AnyDb = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export async function up(db: AnyDb): Promise<void> {
  // What an EMV receipt must print, from the processor's charge of a paid card payment
  // (payment_method_details.card_present and its receipt), and where the reader stood
  // (the processor's location id), whose address the receipt prints.
  for (const column of [
    'card_read_method',
    'card_application_name',
    'card_aid',
    'card_authorization_code',
    'card_response_code',
    'card_account_type',
    'card_verification_method',
    'processor_location_id',
  ]) {
    await db.schema.alterTable('transactions').addColumn(column, 'text').execute();
  }
}
