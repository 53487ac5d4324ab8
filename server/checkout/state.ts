import type { TransactionsTable } from '../db/schema.js';
import type { Trx } from '../db/store.js';

/**
 * Called by the payment state machine inside the transaction that moves a payment, so a checkout
 * session is complete exactly when its payment has succeeded. An expired session is completed too:
 * a payment confirmed in the last moment before expiry still took the customer's money.
 */
export async function onPaymentMoved(trx: Trx, payment: TransactionsTable, now: number): Promise<void> {
  if (payment.status !== 'succeeded' || !payment.checkout_session_id) return;
  await trx
    .updateTable('checkout_sessions')
    .set({ status: 'complete', completed_at: now, updated_at: now })
    .where('id', '=', payment.checkout_session_id)
    .where('status', '!=', 'complete')
    .execute();
}
