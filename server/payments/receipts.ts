import type { TransactionsTable } from '../db/schema.js';
import type { Executor } from '../db/store.js';
import type { ReceiptAddress, ReceiptInput } from '../../shared/receipt.js';

/**
 * Which paid payments have a receipt (`receipt_url`): terminal payments (spec §2.1), and card
 * payments made on our hosted pages, whose success page links to it (docs/checkout.md).
 */
export function hasReceipt(row: Pick<TransactionsTable, 'payment_method_type' | 'source'>): boolean {
  return row.payment_method_type === 'terminal' || row.source === 'checkout' || row.source === 'payment_link';
}

/**
 * What the receipt behind a token prints, if the token is one: the payment, the merchant, and the
 * address of the location whose reader took the card (what a shop's paper receipt is headed with).
 * `simulated`: the processor is the simulator, so even a live receipt records no real payment.
 */
export async function findReceipt(db: Executor, token: string, simulated: boolean): Promise<ReceiptInput | undefined> {
  if (!/^[0-9A-Za-z]{32}$/.test(token)) return undefined;
  const row = await db
    .selectFrom('transactions')
    .innerJoin('merchants', 'merchants.id', 'transactions.merchant_id')
    .leftJoin('terminal_locations', (join) =>
      join.onRef('terminal_locations.processor_location_id', '=', 'transactions.processor_location_id').onRef('terminal_locations.merchant_id', '=', 'transactions.merchant_id'),
    )
    .select([
      'merchants.business_name',
      'terminal_locations.address',
      'terminal_locations.time_zone',
      'transactions.reference',
      'transactions.amount',
      'transactions.tip_amount',
      'transactions.currency',
      'transactions.description',
      'transactions.metadata',
      'transactions.captured_at',
      'transactions.amount_refunded',
      'transactions.mode',
      'transactions.payment_method_type',
      'transactions.card_brand',
      'transactions.card_last_four',
      'transactions.card_read_method',
      'transactions.card_application_name',
      'transactions.card_aid',
      'transactions.card_authorization_code',
      'transactions.card_response_code',
      'transactions.card_account_type',
      'transactions.card_verification_method',
    ])
    .where('transactions.receipt_token', '=', token)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    merchantName: row.business_name,
    address: row.address ? (JSON.parse(row.address) as ReceiptAddress) : null,
    reference: row.reference,
    mode: row.mode,
    simulated,
    currency: row.currency,
    // Number(): PostgreSQL hands bigint columns back as strings.
    amount: Number(row.amount),
    tip: Number(row.tip_amount),
    refunded: Number(row.amount_refunded),
    paidAt: row.captured_at === null ? null : Number(row.captured_at),
    timeZone: row.time_zone,
    description: row.description,
    order: orderOf(row.metadata),
    // A cash sale was paid with no card: its receipt has no card lines.
    card: row.payment_method_type === 'cash' ? null : {
      brand: row.card_brand,
      last4: row.card_last_four,
      readMethod: row.card_read_method,
      applicationName: row.card_application_name,
      aid: row.card_aid,
      authorizationCode: row.card_authorization_code,
      responseCode: row.card_response_code,
      accountType: row.card_account_type,
      verification: row.card_verification_method,
    },
  };
}

/** The `order` a part of a sale paid in parts carries in its metadata (cli/tui: split tender). */
function orderOf(metadata: string): string | null {
  const parsed = JSON.parse(metadata) as Record<string, unknown>;
  return typeof parsed.order === 'string' && parsed.order !== '' ? parsed.order : null;
}
