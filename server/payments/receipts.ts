import type { Executor } from '../db/store.js';

/** The payment behind a receipt token (`receipt_url` of completed terminal payments), if any. */
export async function findReceipt(db: Executor, token: string) {
  return /^[0-9A-Za-z]{32}$/.test(token)
    ? await db
        .selectFrom('transactions')
        .innerJoin('merchants', 'merchants.id', 'transactions.merchant_id')
        .select([
          'merchants.business_name',
          'transactions.reference',
          'transactions.amount',
          'transactions.tip_amount',
          'transactions.currency',
          'transactions.card_brand',
          'transactions.card_last_four',
          'transactions.captured_at',
          'transactions.amount_refunded',
          'transactions.mode',
        ])
        .where('transactions.receipt_token', '=', token)
        .executeTakeFirst()
    : undefined;
}

/** What a receipt page shows of a payment: nothing a customer could not see on paper. */
export type Receipt = NonNullable<Awaited<ReturnType<typeof findReceipt>>>;
