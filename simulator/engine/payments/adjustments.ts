import type Stripe from 'stripe';
import { invalidRequest, unexpectedState } from '../../errors.js';
import { type Kernel, type Origin, getScoped } from '../kernel.js';
import { type Metadata, mergeMetadata } from '../shapes.js';
import type { Captures } from './captures.js';
import type { Charges } from './charges.js';
import { getIntent } from './intentRules.js';

/**
 * Changes after the payment: a charge's descriptive fields, capture through the Charges API,
 * an increment of an uncaptured authorisation, and refund cancellation (which Stripe allows only
 * for refunds waiting on the customer, `requires_action`; card refunds never are).
 */

export interface ChargeUpdateInput {
  description?: string | null | undefined;
  metadata?: Metadata | '' | undefined;
  receipt_email?: string | null | undefined;
  transfer_group?: string | undefined;
  fraud_details?: { user_report?: '' | 'fraudulent' | 'safe' | undefined } | undefined;
}

export class Adjustments {
  constructor(
    private readonly kernel: Kernel,
    private readonly charges: Charges,
    private readonly captures: Captures,
  ) {}

  updateCharge(origin: Origin, id: string, input: ChargeUpdateInput): Stripe.Charge {
    const row = this.charges.get(origin.scope, id);
    const charge = row.body;
    const previous: Record<string, unknown> = {};
    if (input.description !== undefined) {
      previous.description = charge.description;
      charge.description = input.description;
    }
    if (input.receipt_email !== undefined) {
      previous.receipt_email = charge.receipt_email;
      charge.receipt_email = input.receipt_email;
    }
    if (input.transfer_group !== undefined) {
      if (charge.transfer_group) throw invalidRequest('The transfer_group of a charge can only be set once.', 'transfer_group');
      previous.transfer_group = charge.transfer_group;
      charge.transfer_group = input.transfer_group;
    }
    if (input.fraud_details?.user_report !== undefined) {
      previous.fraud_details = charge.fraud_details;
      charge.fraud_details = input.fraud_details.user_report === '' ? {} : { ...charge.fraud_details, user_report: input.fraud_details.user_report };
    }
    if (input.metadata !== undefined) {
      previous.metadata = charge.metadata;
      charge.metadata = mergeMetadata(charge.metadata, input.metadata);
    }
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'charge.updated', charge, previous);
    return charge;
  }

  /** `POST /v1/charges/:id/capture`: the charge's PaymentIntent is captured. */
  captureCharge(origin: Origin, id: string, input: { amount?: number | undefined; application_fee_amount?: number | undefined }): Stripe.Charge {
    const charge = this.charges.get(origin.scope, id).body;
    if (charge.captured) throw invalidRequest(`Charge ${charge.id} has already been captured.`, 'charge', 'charge_already_captured');
    const intent = typeof charge.payment_intent === 'string' ? charge.payment_intent : charge.payment_intent?.id;
    if (!intent) throw invalidRequest(`Charge ${charge.id} has no PaymentIntent to capture.`, 'charge');
    this.captures.capture(origin, intent, { amount_to_capture: input.amount, application_fee_amount: input.application_fee_amount });
    return this.charges.get(origin.scope, id).body;
  }

  /**
   * `POST /v1/payment_intents/:id/increment_authorization`: an authorised, uncaptured intent's
   * amount goes up to `amount` (the new total), its charge with it.
   */
  incrementAuthorization(origin: Origin, id: string, input: { amount: number; description?: string | undefined; metadata?: Metadata | '' | undefined }): Stripe.PaymentIntent {
    const row = getIntent(this.kernel, origin.scope, id);
    const pi = row.body;
    if (pi.status !== 'requires_capture') {
      throw unexpectedState(
        `This PaymentIntent's amount could not be incremented because it has a status of ${pi.status}. Only a PaymentIntent with one of the following statuses may be incremented: requires_capture.`,
        { payment_intent: pi },
      );
    }
    if (input.amount <= pi.amount) {
      throw invalidRequest(`The amount to increment to (${input.amount}) must be greater than the PaymentIntent's current amount (${pi.amount}).`, 'amount');
    }
    const chargeRow = this.charges.get({ livemode: row.livemode, account: row.account }, String(pi.latest_charge));
    pi.amount = input.amount;
    pi.amount_capturable = input.amount;
    if (input.description !== undefined) pi.description = input.description;
    pi.metadata = mergeMetadata(pi.metadata, input.metadata);
    chargeRow.body.amount = input.amount;
    this.kernel.store.save(row);
    this.kernel.store.save(chargeRow);
    this.kernel.events.emit(origin, 'payment_intent.amount_capturable_updated', pi);
    return pi;
  }

  cancelRefund(origin: Origin, id: string): Stripe.Refund {
    const row = getScoped<Stripe.Refund, unknown>(this.kernel, 'refund', origin.scope, id, 'refund', 'refund');
    const refund = row.body;
    if (refund.status !== 'requires_action') {
      throw invalidRequest(
        `Refund ${refund.id} cannot be canceled because it has a status of ${String(refund.status)}. Only a refund with a status of requires_action can be canceled.`,
        'refund',
      );
    }
    refund.status = 'canceled';
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'refund.updated', refund);
    return refund;
  }
}
