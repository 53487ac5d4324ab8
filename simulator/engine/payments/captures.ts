import type Stripe from 'stripe';
import { invalidRequest, unexpectedState } from '../../errors.js';
import { type Kernel, type Origin, unixSeconds } from '../kernel.js';
import { mergeMetadata } from '../shapes.js';
import type { Charges } from './charges.js';
import { CANCELABLE, getIntent, statusList } from './intentRules.js';
import type { CaptureInput, ChargeRow, PaymentIntentRow } from './types.js';

/**
 * The end of a PaymentIntent: capturing what was authorised (at once for automatic capture, on
 * `capture` for manual) and canceling. The charge moves the money (charges.ts); the intent records it.
 */
export class Captures {
  constructor(
    private readonly kernel: Kernel,
    private readonly charges: Charges,
  ) {}

  /** Told of each canceled intent before its event: a cash balance takes back what it paid of it. */
  onCanceled: ((origin: Origin, row: PaymentIntentRow) => void) | undefined;

  /** Captures `amount`: the charge moves the money, the intent records it. */
  settle(origin: Origin, row: PaymentIntentRow, chargeRow: ChargeRow, amount: number): void {
    this.charges.capture(origin, row, chargeRow, amount);
    const pi = row.body;
    pi.status = 'succeeded';
    pi.amount_received = amount;
    pi.amount_capturable = 0;
    this.kernel.store.save(row);
  }

  capture(origin: Origin, id: string, input: CaptureInput): Stripe.PaymentIntent {
    const row = getIntent(this.kernel, origin.scope, id);
    const pi = row.body;
    if (pi.status !== 'requires_capture') {
      throw unexpectedState(
        `This PaymentIntent could not be captured because it has a status of ${pi.status}. Only a PaymentIntent with one of the following statuses may be captured: requires_capture.`,
        { payment_intent: pi },
      );
    }
    const amount = input.amount_to_capture ?? pi.amount_capturable;
    if (amount > pi.amount_capturable) {
      throw invalidRequest(
        `The amount_to_capture (${amount}) must be less than or equal to the amount_capturable (${pi.amount_capturable}).`,
        'amount_to_capture',
        'amount_too_large',
      );
    }
    if (amount <= 0) throw invalidRequest('The amount_to_capture must be a positive integer.', 'amount_to_capture');
    if (input.application_fee_amount !== undefined) {
      if (input.application_fee_amount > amount) {
        throw invalidRequest('The application fee amount must be no more than the captured amount.', 'application_fee_amount');
      }
      pi.application_fee_amount = input.application_fee_amount;
    }
    pi.metadata = mergeMetadata(pi.metadata, input.metadata);
    const chargeRow = this.charges.get({ livemode: row.livemode, account: row.account }, String(pi.latest_charge));
    this.settle(origin, row, chargeRow, amount);
    this.kernel.events.emit(origin, 'charge.captured', chargeRow.body);
    if (amount < chargeRow.body.amount) this.kernel.events.emit(origin, 'charge.refunded', chargeRow.body);
    this.kernel.events.emit(origin, 'payment_intent.succeeded', pi);
    return pi;
  }

  cancel(origin: Origin, id: string, reason: Stripe.PaymentIntent.CancellationReason | undefined): Stripe.PaymentIntent {
    const row = getIntent(this.kernel, origin.scope, id);
    const pi = row.body;
    if (!CANCELABLE.includes(pi.status) || row.internal.timerId) {
      throw unexpectedState(
        `You cannot cancel this PaymentIntent because it has a status of ${pi.status}. Only a PaymentIntent with one of the following statuses may be canceled: ${statusList(CANCELABLE)}.`,
        { payment_intent: pi },
      );
    }
    if (pi.status === 'requires_capture' && typeof pi.latest_charge === 'string') {
      const chargeRow = this.charges.get({ livemode: row.livemode, account: row.account }, pi.latest_charge);
      chargeRow.body.amount_refunded = chargeRow.body.amount;
      chargeRow.body.refunded = true;
      this.kernel.store.save(chargeRow);
      this.kernel.events.emit(origin, 'charge.refunded', chargeRow.body);
    }
    pi.status = 'canceled';
    pi.canceled_at = unixSeconds(this.kernel.now());
    pi.cancellation_reason = reason ?? null;
    pi.next_action = null;
    pi.amount_capturable = 0;
    row.internal.readerId = null;
    this.onCanceled?.(origin, row);
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'payment_intent.canceled', pi);
    return pi;
  }
}
