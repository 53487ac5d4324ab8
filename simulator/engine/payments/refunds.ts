import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import { invalidRequest } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getScoped, unixSeconds } from '../kernel.js';
import { list, type ListEnvelope, type Metadata, mergeMetadata } from '../shapes.js';
import type { Charges } from './charges.js';
import { getIntent } from './intentRules.js';
import type { ChargeRow } from './types.js';
import type { Ledger } from '../ledger.js';
import type { Transfers } from '../connect/transfers.js';

/**
 * Refunds of captured charges. The money rule is Stripe's: refunds never exceed what was captured
 * and not yet refunded, and a charge that has been charged back cannot be refunded. A refund debits
 * the available balance the charge is on; `reverse_transfer` pulls the proportional share back from
 * the destination account, `refund_application_fee` returns the proportional share of the platform's fee.
 */

export type RefundRow = StoredObject<Stripe.Refund, Record<string, never>>;

export interface RefundCreateInput {
  payment_intent?: string | undefined;
  charge?: string | undefined;
  amount?: number | undefined;
  reason?: Stripe.RefundCreateParams.Reason | undefined;
  reverse_transfer?: boolean | undefined;
  refund_application_fee?: boolean | undefined;
  metadata?: Metadata | '' | undefined;
}

function proportional(part: number, whole: number, of: number): number {
  return whole === 0 ? 0 : Math.round((of * part) / whole);
}

export class Refunds {
  constructor(
    private readonly kernel: Kernel,
    private readonly charges: Charges,
    private readonly ledger: Ledger,
    private readonly transfers: Transfers,
  ) {}

  private now(): number {
    return unixSeconds(this.kernel.now());
  }

  create(origin: Origin, input: RefundCreateInput): Stripe.Refund {
    const scope = origin.scope;
    let chargeRow: ChargeRow;
    if (input.charge) {
      chargeRow = this.charges.get(scope, input.charge);
      if (input.payment_intent && chargeRow.body.payment_intent !== input.payment_intent) {
        throw invalidRequest(`Charge ${input.charge} does not belong to PaymentIntent ${input.payment_intent}.`, 'charge');
      }
    } else if (input.payment_intent) {
      const pi = getIntent(this.kernel, scope, input.payment_intent).body;
      if (typeof pi.latest_charge !== 'string' || (pi.status !== 'succeeded' && pi.status !== 'requires_capture')) {
        throw invalidRequest(
          `This PaymentIntent (${pi.id}) does not have a successful charge to refund.`,
          'payment_intent',
          'charge_not_refundable',
        );
      }
      chargeRow = this.charges.get(scope, pi.latest_charge);
    } else {
      throw invalidRequest('One of the following params should be provided for this request: payment_intent or charge.', undefined, 'parameter_missing');
    }
    const charge = chargeRow.body;
    if (charge.status !== 'succeeded') {
      throw invalidRequest(`Charge ${charge.id} has not succeeded and cannot be refunded.`, 'charge', 'charge_not_refundable');
    }
    if (!charge.captured) {
      throw invalidRequest(
        `Charge ${charge.id} has not been captured. Cancel its PaymentIntent to release the authorization instead.`,
        'charge',
        'charge_not_refundable',
      );
    }
    const dispute = this.kernel.store.list<Stripe.Dispute, unknown>('dispute', { livemode: chargeRow.livemode, account: chargeRow.account }, { charge: charge.id }, { limit: 1 }).data[0];
    if (dispute && !dispute.body.is_charge_refundable) {
      throw invalidRequest(`Charge ${charge.id} has been charged back; cannot issue a refund.`, 'charge', 'charge_disputed');
    }
    const refundable = charge.amount - charge.amount_refunded;
    if (charge.refunded || refundable <= 0) {
      throw invalidRequest(`Charge ${charge.id} has already been refunded.`, 'charge', 'charge_already_refunded');
    }
    const amount = input.amount ?? refundable;
    if (amount <= 0) throw invalidRequest('Refund amount must be a positive integer.', 'amount', 'parameter_invalid');
    if (amount > refundable) {
      throw invalidRequest(
        `Refund amount (${amount}) is greater than unrefunded amount on charge (${refundable})`,
        'amount',
        'amount_too_large',
      );
    }
    const platform: Scope = { livemode: chargeRow.livemode, account: null };
    const id = newId('re');
    let reversalId: string | null = null;
    if (input.reverse_transfer) {
      if (typeof charge.transfer !== 'string') {
        throw invalidRequest('reverse_transfer can only be used for destination charges (charges with a transfer).', 'reverse_transfer');
      }
      const transferRow = this.transfers.get(chargeRow.livemode, charge.transfer);
      const share = proportional(amount, charge.amount_captured, transferRow.body.amount);
      reversalId = this.transfers.reverse(origin, transferRow, share, id).id;
    }
    if (input.refund_application_fee) {
      if (typeof charge.application_fee !== 'string') {
        throw invalidRequest('refund_application_fee can only be used for charges with an application fee.', 'refund_application_fee');
      }
      const feeRow = getScoped<Stripe.ApplicationFee, Record<string, never>>(this.kernel, 'application_fee', platform, charge.application_fee, 'application_fee', 'application_fee');
      const fee = feeRow.body;
      const share = Math.min(proportional(amount, charge.amount_captured, fee.amount), fee.amount - fee.amount_refunded);
      if (share > 0) {
        const feeRefund: Stripe.FeeRefund = {
          id: newId('fr'),
          object: 'fee_refund',
          amount: share,
          balance_transaction: null,
          created: this.now(),
          currency: fee.currency,
          fee: fee.id,
          metadata: {},
        };
        if (scope.account !== null) {
          // A direct charge's fee came out of the connected account's balance: it goes back there.
          // On a destination charge the proportional transfer reversal already settles the fee's share.
          feeRefund.balance_transaction = this.ledger.record(origin, platform, {
            type: 'application_fee_refund',
            amount: -share,
            currency: fee.currency,
            source: feeRefund.id,
            description: null,
            reportingCategory: 'platform_earning_refund',
            availability: 'available',
          }).id;
          this.ledger.record(origin, scope, {
            type: 'application_fee_refund',
            amount: share,
            currency: fee.currency,
            source: feeRefund.id,
            description: null,
            reportingCategory: 'platform_earning_refund',
            availability: 'available',
          });
        }
        this.kernel.store.insert('fee_refund', platform, feeRefund, {});
        fee.amount_refunded += share;
        fee.refunded = fee.amount_refunded >= fee.amount;
        fee.refunds = list(fee.refunds.url, [feeRefund, ...fee.refunds.data]);
        this.kernel.store.save(feeRow);
        this.kernel.events.emit({ ...origin, scope: platform }, 'application_fee.refunded', fee);
      }
    }
    const refundTxn = this.ledger.record(origin, scope, {
      type: 'refund',
      amount: -amount,
      currency: charge.currency,
      source: id,
      description: null,
      reportingCategory: 'refund',
      sourceType: charge.payment_method_details?.type === 'us_bank_account' ? 'bank_account' : 'card',
      availability: 'available',
    });
    const refund: Stripe.Refund = {
      id,
      object: 'refund',
      amount,
      balance_transaction: refundTxn.id,
      charge: charge.id,
      created: this.now(),
      currency: charge.currency,
      customer: typeof charge.customer === 'string' ? charge.customer : null,
      customer_account: null,
      destination_details: this.destinationDetails(charge),
      metadata: mergeMetadata({}, input.metadata),
      payment_intent: charge.payment_intent,
      payment_method: charge.payment_method,
      reason: input.reason ?? null,
      receipt_number: null,
      source_transfer_reversal: null,
      status: 'succeeded',
      transfer_reversal: reversalId,
    };
    this.kernel.store.insert('refund', scope, refund, {});
    charge.amount_refunded += amount;
    charge.refunded = charge.amount_refunded >= charge.amount;
    const previous = charge.refunds ?? list(`/v1/charges/${charge.id}/refunds`, []);
    charge.refunds = list(previous.url, [refund, ...previous.data]);
    this.kernel.store.save(chargeRow);
    this.kernel.events.emit(origin, 'charge.refunded', charge);
    this.kernel.events.emit(origin, 'refund.created', refund);
    return refund;
  }

  private destinationDetails(charge: Stripe.Charge): Stripe.Refund.DestinationDetails {
    const type = charge.payment_method_details?.type ?? 'card';
    if (type === 'card' || type === 'card_present') {
      return { type: 'card', card: { reference: null, reference_status: 'pending', reference_type: 'acquirer_reference_number', type: 'refund' } } as unknown as Stripe.Refund.DestinationDetails;
    }
    return { type } as Stripe.Refund.DestinationDetails;
  }

  retrieve(scope: Scope, id: string): Stripe.Refund {
    return getScoped<Stripe.Refund, Record<string, never>>(this.kernel, 'refund', scope, id, 'refund', 'refund').body;
  }

  update(scope: Scope, id: string, metadata: Metadata | '' | undefined): Stripe.Refund {
    const row = getScoped<Stripe.Refund, Record<string, never>>(this.kernel, 'refund', scope, id, 'refund', 'refund');
    row.body.metadata = mergeMetadata(row.body.metadata ?? {}, metadata);
    this.kernel.store.save(row);
    return row.body;
  }

  list(scope: Scope, filters: { payment_intent?: string | undefined; charge?: string | undefined }, page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined }): ListEnvelope<Stripe.Refund> {
    const result = this.kernel.store.list<Stripe.Refund, Record<string, never>>('refund', scope, filters, page);
    return list('/v1/refunds', result.data.map((row) => row.body), result.hasMore);
  }
}
