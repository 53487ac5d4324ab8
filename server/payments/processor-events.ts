import type { Mode } from '../db/schema.js';
import type { ProcessorEventHandler } from '../processor/events-route.js';
import type { ProcessorCharge, ProcessorPaymentIntent, ProcessorRefund } from '../processor/types.js';
import type { RefundService } from './refunds.js';
import type { TransactionService } from './transactions.js';

/**
 * Applies the processor's news about payments and refunds. Each handler re-reads the object from
 * the processor rather than trusting the event's copy: events may arrive late, twice or out of
 * order, and the payment state machine only moves forward on what the processor says now.
 */
export function paymentEventHandler(transactions: TransactionService, refunds: RefundService): ProcessorEventHandler {
  return async (event, mode: Mode) => {
    if (event.type.startsWith('payment_intent.')) {
      const intent = event.data.object as ProcessorPaymentIntent;
      await transactions.onIntentEvent(intent.id, intent.metadata?.pos_transaction_id, mode, intent.status);
    } else if (event.type.startsWith('refund.')) {
      await refunds.onRefundEvent((event.data.object as ProcessorRefund).id, mode);
    } else if (event.type === 'charge.refunded') {
      const charge = event.data.object as ProcessorCharge;
      const intent = typeof charge.payment_intent === 'string' ? charge.payment_intent : charge.payment_intent?.id;
      if (intent) await refunds.onChargeRefunded(intent, mode);
    }
  };
}
