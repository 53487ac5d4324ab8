import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getScoped, unixSeconds } from '../kernel.js';
import { list } from '../shapes.js';
import type { Ledger, SourceType } from '../ledger.js';

/**
 * Transfers from the platform to a connected account and their reversals, with both sides of the
 * money: the platform's `transfer` / `transfer_refund` balance transactions and the connected
 * account's `payment` / `payment_refund`. Destination charges, refunds with `reverse_transfer` and
 * disputes on destination charges all move money this way.
 */

export type TransferRow = StoredObject<Stripe.Transfer, Record<string, never>>;

export interface TransferInput {
  amount: number;
  currency: string;
  destination: string;
  sourceTransaction: string | null;
  transferGroup: string | null;
  sourceType: SourceType;
  description?: string | null;
  /** `pending` while the charge it comes from is pending; `available` for funds already settled. */
  availability: 'pending' | 'available';
}

export class Transfers {
  constructor(
    private readonly kernel: Kernel,
    private readonly ledger: Ledger,
  ) {}

  get(livemode: boolean, id: string): TransferRow {
    return getScoped<Stripe.Transfer, Record<string, never>>(this.kernel, 'transfer', { livemode, account: null }, id, 'transfer', 'transfer');
  }

  create(origin: Origin, livemode: boolean, input: TransferInput): Stripe.Transfer {
    const platform: Scope = { livemode, account: null };
    const connected: Scope = { livemode, account: input.destination };
    const id = newId('tr');
    const payment = newId('py');
    const platformSide = this.ledger.record(origin, platform, {
      type: 'transfer',
      amount: -input.amount,
      currency: input.currency,
      source: id,
      description: input.description ?? null,
      reportingCategory: 'transfer',
      sourceType: input.sourceType,
      availability: input.availability,
    });
    const accountSide = this.ledger.record(origin, connected, {
      type: 'payment',
      amount: input.amount,
      currency: input.currency,
      source: payment,
      description: input.description ?? null,
      reportingCategory: 'charge',
      sourceType: input.sourceType,
      availability: input.availability,
    });
    this.ledger.creditedNow(origin, connected, accountSide);
    const transfer: Stripe.Transfer = {
      id,
      object: 'transfer',
      amount: input.amount,
      amount_reversed: 0,
      balance_transaction: platformSide.id,
      created: unixSeconds(this.kernel.now()),
      currency: input.currency,
      description: input.description ?? null,
      destination: input.destination,
      destination_payment: payment,
      livemode,
      metadata: {},
      reversals: list(`/v1/transfers/${id}/reversals`, []),
      reversed: false,
      source_transaction: input.sourceTransaction,
      source_type: input.sourceType,
      transfer_group: input.transferGroup,
    };
    this.kernel.store.insert('transfer', platform, transfer, {});
    this.kernel.events.emit({ ...origin, scope: platform }, 'transfer.created', transfer);
    return transfer;
  }

  /** Pulls `amount` back from the destination account (at most what is left of the transfer). */
  reverse(origin: Origin, row: TransferRow, amount: number, sourceRefund: string | null): Stripe.TransferReversal {
    const transfer = row.body;
    const platform: Scope = { livemode: row.livemode, account: null };
    const connected: Scope = { livemode: row.livemode, account: String(transfer.destination) };
    const share = Math.max(0, Math.min(amount, transfer.amount - transfer.amount_reversed));
    const id = newId('trr');
    const paymentRefund = newId('pyr');
    const sourceType = transfer.source_type === 'bank_account' ? 'bank_account' : 'card';
    const platformSide = this.ledger.record(origin, platform, {
      type: 'transfer_refund',
      amount: share,
      currency: transfer.currency,
      source: id,
      description: null,
      reportingCategory: 'transfer_reversal',
      sourceType,
      availability: 'available',
    });
    this.ledger.record(origin, connected, {
      type: 'payment_refund',
      amount: -share,
      currency: transfer.currency,
      source: paymentRefund,
      description: null,
      reportingCategory: 'refund',
      sourceType,
      availability: 'available',
    });
    const reversal: Stripe.TransferReversal = {
      id,
      object: 'transfer_reversal',
      amount: share,
      balance_transaction: platformSide.id,
      created: unixSeconds(this.kernel.now()),
      currency: transfer.currency,
      destination_payment_refund: paymentRefund,
      metadata: {},
      source_refund: sourceRefund,
      transfer: transfer.id,
    };
    this.kernel.store.insert('transfer_reversal', platform, reversal, {});
    transfer.amount_reversed += share;
    transfer.reversed = transfer.amount_reversed >= transfer.amount;
    transfer.reversals = list(transfer.reversals.url, [reversal, ...transfer.reversals.data]);
    this.kernel.store.save(row);
    this.kernel.events.emit({ ...origin, scope: platform }, 'transfer.reversed', transfer);
    return reversal;
  }
}
