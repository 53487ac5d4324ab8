import type { FieldCipher } from '../db/encryption.js';
import type { TransactionsTable } from '../db/schema.js';
import type { FinalResponse } from '../idempotency/keys.js';
import { presentRefund, presentTransaction } from './present.js';
import type { CreatePaymentOutcome, CreatePaymentState } from './transactions.js';
import type { CreateRefundOutcome } from './refunds.js';

/**
 * The presenters of the payment operations: each turns what a create came to into the answer its
 * idempotency key keeps and replays (spec §8). Plain data, a status and a body; the HTTP edge sends
 * it as it is.
 */

/** The body of a created payment, by the endpoint that asked for it. */
const CREATED: Record<CreatePaymentState['response'], (row: TransactionsTable, cipher: FieldCipher) => unknown> = {
  transaction: (row, cipher) => ({ data: presentTransaction(row, cipher), client_secret: row.client_secret ?? '' }),
  terminal: (row) => ({
    data: {
      id: row.id,
      reference: row.reference,
      payment_intent_id: row.processor_payment_intent_id,
      client_secret: row.client_secret,
      amount: row.amount,
      currency: row.currency,
      status: row.status,
    },
  }),
};

/**
 * `POST /v1/transactions` and `POST /v1/terminal/payments`. A payment that failed answers with its
 * error carrying the failed transaction as `GET /v1/transactions/{id}` shows it, as Stripe's card
 * errors carry their `payment_intent`, so the caller can match it to the `payment.failed` event.
 */
export function presentPaymentCreate(outcome: CreatePaymentOutcome, response: CreatePaymentState['response'], cipher: FieldCipher): FinalResponse {
  if (outcome.kind === 'created') return { status: 201, body: CREATED[response](outcome.transaction, cipher) };
  const { error, transaction } = outcome;
  return { status: error.status, body: { error: { ...error.toBody().error, transaction: presentTransaction(transaction, cipher) } } };
}

/** `POST /v1/transactions/{id}/refunds`: the refund as it stands (a refused one is answered by its refusal). */
export function presentRefundCreate(outcome: CreateRefundOutcome): FinalResponse {
  return { status: 201, body: { data: presentRefund(outcome.refund) } };
}
