import type { Mode } from '../db/schema.js';
import type { ProcessorEventHandler } from '../processor/events-route.js';
import type { RefundService } from './refunds.js';
import type { TransactionService } from './transactions.js';

/**
 * Applies the processor's news about payments and refunds. Events may arrive late, twice or out of
 * order: a payment's own events are trusted for what they carry because its state machine only
 * moves forward (TransactionService.onIntentEvent says when it reads the intent instead); refunds
 * are re-read from the processor.
 */
export function paymentEventHandler(transactions: TransactionService, refunds: RefundService): ProcessorEventHandler {
  return async (event, mode: Mode) => {
    const subject = event.subject;
    if (event.type.startsWith('payment_intent.') && subject.kind === 'payment') {
      const intent = subject.payment;
      await transactions.onIntentEvent(intent.id, intent.metadata.pos_transaction_id, mode, intent);
    } else if (event.type.startsWith('refund.') && subject.kind === 'refund') {
      await refunds.onRefundEvent(subject.refund.id, mode);
    } else if (event.type === 'charge.succeeded' && subject.kind === 'charge') {
      if (subject.paymentIntentId) await transactions.onChargeEvent(subject.paymentIntentId, mode, subject.charge);
    } else if (event.type === 'charge.refunded' && subject.kind === 'charge') {
      if (subject.paymentIntentId) await refunds.onChargeRefunded(subject.paymentIntentId, mode);
    }
  };
}
