import type { PaymentMoveListener } from '../payments/payment-state.js';

/**
 * Listens to payment moves, inside the transaction that moves a payment, so a checkout
 * session is complete exactly when its payment has succeeded. An expired session is completed too:
 * a payment confirmed in the last moment before expiry still took the customer's money.
 */
export const completeCheckoutSession: PaymentMoveListener = async (trx, payment, now) => {
  if (payment.status !== 'succeeded' || !payment.checkout_session_id) return;
  await trx
    .updateTable('checkout_sessions')
    .set({ status: 'complete', completed_at: now, updated_at: now })
    .where('id', '=', payment.checkout_session_id)
    .where('status', '!=', 'complete')
    .execute();
};
