import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import { SimError, invalidRequest } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getScoped, unixSeconds } from '../kernel.js';
import { list, type ListEnvelope, type Metadata, mergeMetadata } from '../shapes.js';
import type { Ledger } from '../ledger.js';
import type { TransferRow, Transfers } from './transfers.js';
import type { AccountChecks } from '../payments/types.js';
import { capabilityStatus } from './capabilityState.js';

/**
 * What the platform does with its own balance through the API: transfers to connected accounts
 * (and their reversals), and application fees (listing and refunding them). Transfers and fees live
 * on the platform, whoever asks; a transfer needs the funds available on the platform's balance
 * and a destination whose `transfers` capability is active, as on Stripe.
 */

type Page = { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined };
type FeeRow = StoredObject<Stripe.ApplicationFee, Record<string, never>>;

export interface TransferCreateInput {
  amount: number;
  currency: string;
  destination: string;
  description?: string | undefined;
  transfer_group?: string | undefined;
  metadata?: Metadata | '' | undefined;
}

function platformOf(scope: Scope): Scope {
  return { livemode: scope.livemode, account: null };
}

export class PlatformMoney {
  constructor(
    private readonly kernel: Kernel,
    private readonly ledger: Ledger,
    private readonly transfers: Transfers,
    private readonly accounts: AccountChecks,
  ) {}

  private platformOnly(origin: Origin, what: string): Scope {
    if (origin.scope.account !== null) throw invalidRequest(`${what} are made by the platform; remove the Stripe-Account header.`);
    return platformOf(origin.scope);
  }

  createTransfer(origin: Origin, input: TransferCreateInput): Stripe.Transfer {
    const platform = this.platformOnly(origin, 'Transfers');
    const currency = input.currency.toLowerCase();
    if (input.amount <= 0) throw invalidRequest('Invalid positive integer', 'amount', 'parameter_invalid');
    const destination = this.accounts.findConnected(platform.livemode, input.destination);
    if (!destination) throw new SimError(400, 'invalid_request_error', `No such destination: '${input.destination}'`, { code: 'resource_missing', param: 'destination' });
    if (capabilityStatus(destination, 'transfers') !== 'active') {
      throw invalidRequest(
        'Your destination account needs to have at least one of the following capabilities enabled: transfers, crypto_transfers, legacy_payments',
        'destination',
        'insufficient_capabilities_for_transfer',
      );
    }
    if (this.ledger.available(platform, currency) < input.amount) {
      throw invalidRequest(
        'You have insufficient available funds in your Stripe account. Try adding funds directly to your available balance by creating Charges using the 4000000000000077 test card. See: https://stripe.com/docs/testing#available-balance',
        'amount',
        'balance_insufficient',
      );
    }
    const transfer = this.transfers.create(origin, platform.livemode, {
      amount: input.amount,
      currency,
      destination: destination.id,
      sourceTransaction: null,
      transferGroup: input.transfer_group ?? null,
      sourceType: 'card',
      description: input.description ?? null,
      availability: 'available',
    });
    if (input.metadata !== undefined) return this.updateTransfer(origin, transfer.id, input.metadata);
    return transfer;
  }

  listTransfers(scope: Scope, filters: { destination?: string | undefined; transfer_group?: string | undefined }, page: Page): ListEnvelope<Stripe.Transfer> {
    const found = this.kernel.store.list<Stripe.Transfer, Record<string, never>>('transfer', platformOf(scope), filters, page);
    return list('/v1/transfers', found.data.map((row) => row.body), found.hasMore);
  }

  updateTransfer(origin: Origin, id: string, metadata: Metadata | '' | undefined, description?: string): Stripe.Transfer {
    const row = this.transfers.get(origin.scope.livemode, id);
    const previous = { metadata: row.body.metadata, description: row.body.description };
    row.body.metadata = mergeMetadata(row.body.metadata, metadata);
    if (description !== undefined) row.body.description = description;
    this.kernel.store.save(row);
    this.kernel.events.emit({ ...origin, scope: platformOf(origin.scope) }, 'transfer.updated', row.body, previous);
    return row.body;
  }

  createReversal(origin: Origin, transferId: string, input: { amount?: number | undefined; description?: string | undefined; metadata?: Metadata | '' | undefined }): Stripe.TransferReversal {
    const row: TransferRow = this.transfers.get(origin.scope.livemode, transferId);
    const left = row.body.amount - row.body.amount_reversed;
    const amount = input.amount ?? left;
    if (left <= 0) throw invalidRequest(`Transfer ${row.id} has already been fully reversed.`, 'id');
    if (amount <= 0 || amount > left) {
      throw invalidRequest(`You cannot reverse ${amount} from transfer ${row.id}: only ${left} remains to be reversed.`, 'amount');
    }
    const reversal = this.transfers.reverse(origin, row, amount, null);
    if (input.metadata === undefined) return reversal;
    return this.updateReversal(origin, transferId, reversal.id, input.metadata);
  }

  private getReversal(scope: Scope, transferId: string, id: string): StoredObject<Stripe.TransferReversal, Record<string, never>> {
    const transfer = this.transfers.get(scope.livemode, transferId);
    const row = getScoped<Stripe.TransferReversal, Record<string, never>>(this.kernel, 'transfer_reversal', platformOf(scope), id, 'transfer reversal', 'id');
    if (row.body.transfer !== transfer.id) throw invalidRequest(`Transfer reversal ${id} does not belong to transfer ${transfer.id}.`, 'id', 'resource_missing');
    return row;
  }

  retrieveReversal(scope: Scope, transferId: string, id: string): Stripe.TransferReversal {
    return this.getReversal(scope, transferId, id).body;
  }

  updateReversal(origin: Origin, transferId: string, id: string, metadata: Metadata | '' | undefined): Stripe.TransferReversal {
    const row = this.getReversal(origin.scope, transferId, id);
    row.body.metadata = mergeMetadata(row.body.metadata ?? {}, metadata);
    this.kernel.store.save(row);
    this.syncReversals(origin.scope, transferId);
    return row.body;
  }

  listReversals(scope: Scope, transferId: string, page: Page): ListEnvelope<Stripe.TransferReversal> {
    const transfer = this.transfers.get(scope.livemode, transferId);
    const found = this.kernel.store.list<Stripe.TransferReversal, Record<string, never>>('transfer_reversal', platformOf(scope), { transfer: transfer.id }, page);
    return list(`/v1/transfers/${transfer.id}/reversals`, found.data.map((row) => row.body), found.hasMore);
  }

  private syncReversals(scope: Scope, transferId: string): void {
    const row = this.transfers.get(scope.livemode, transferId);
    row.body.reversals = this.listReversals(scope, transferId, { limit: 10 });
    this.kernel.store.save(row);
  }

  private getFee(scope: Scope, id: string): FeeRow {
    return getScoped<Stripe.ApplicationFee, Record<string, never>>(this.kernel, 'application_fee', platformOf(scope), id, 'application_fee', 'id');
  }

  listFees(scope: Scope, filters: { charge?: string | undefined }, page: Page): ListEnvelope<Stripe.ApplicationFee> {
    const found = this.kernel.store.list<Stripe.ApplicationFee, Record<string, never>>('application_fee', platformOf(scope), filters, page);
    return list('/v1/application_fees', found.data.map((row) => row.body), found.hasMore);
  }

  /** The platform gives (part of) a fee back: its balance is debited and the account that paid the fee credited. */
  refundFee(origin: Origin, feeId: string, input: { amount?: number | undefined; metadata?: Metadata | '' | undefined }): Stripe.FeeRefund {
    const platform = this.platformOnly(origin, 'Application fee refunds');
    const row = this.getFee(platform, feeId);
    const fee = row.body;
    const left = fee.amount - fee.amount_refunded;
    const amount = input.amount ?? left;
    if (left <= 0) throw invalidRequest(`Application fee ${fee.id} has already been refunded.`, 'id', 'charge_already_refunded');
    if (amount <= 0 || amount > left) throw invalidRequest(`Refund amount (${amount}) is greater than the unrefunded amount of the application fee (${left}).`, 'amount');
    const id = newId('fr');
    const txn = this.ledger.record(origin, platform, {
      type: 'application_fee_refund',
      amount: -amount,
      currency: fee.currency,
      source: id,
      description: null,
      reportingCategory: 'platform_earning_refund',
      availability: 'available',
    });
    this.ledger.record(origin, { livemode: platform.livemode, account: String(fee.account) }, {
      type: 'application_fee_refund',
      amount,
      currency: fee.currency,
      source: id,
      description: null,
      reportingCategory: 'platform_earning_refund',
      availability: 'available',
    });
    const refund: Stripe.FeeRefund = {
      id,
      object: 'fee_refund',
      amount,
      balance_transaction: txn.id,
      created: unixSeconds(this.kernel.now()),
      currency: fee.currency,
      fee: fee.id,
      metadata: mergeMetadata({}, input.metadata),
    };
    this.kernel.store.insert('fee_refund', platform, refund, {});
    fee.amount_refunded += amount;
    fee.refunded = fee.amount_refunded >= fee.amount;
    fee.refunds = list(fee.refunds.url, [refund, ...fee.refunds.data]);
    this.kernel.store.save(row);
    this.kernel.events.emit({ ...origin, scope: platform }, 'application_fee.refunded', fee);
    return refund;
  }

  private getFeeRefund(scope: Scope, feeId: string, id: string): StoredObject<Stripe.FeeRefund, Record<string, never>> {
    const fee = this.getFee(scope, feeId);
    const row = getScoped<Stripe.FeeRefund, Record<string, never>>(this.kernel, 'fee_refund', platformOf(scope), id, 'fee refund', 'id');
    if (row.body.fee !== fee.id) throw invalidRequest(`Fee refund ${id} does not belong to application fee ${fee.id}.`, 'id', 'resource_missing');
    return row;
  }

  retrieveFeeRefund(scope: Scope, feeId: string, id: string): Stripe.FeeRefund {
    return this.getFeeRefund(scope, feeId, id).body;
  }

  updateFeeRefund(origin: Origin, feeId: string, id: string, metadata: Metadata | '' | undefined): Stripe.FeeRefund {
    const row = this.getFeeRefund(origin.scope, feeId, id);
    row.body.metadata = mergeMetadata(row.body.metadata ?? {}, metadata);
    this.kernel.store.save(row);
    return row.body;
  }

  listFeeRefunds(scope: Scope, feeId: string, page: Page): ListEnvelope<Stripe.FeeRefund> {
    const fee = this.getFee(scope, feeId);
    const found = this.kernel.store.list<Stripe.FeeRefund, Record<string, never>>('fee_refund', platformOf(scope), { fee: fee.id }, page);
    return list(`/v1/application_fees/${fee.id}/refunds`, found.data.map((row) => row.body), found.hasMore);
  }
}
