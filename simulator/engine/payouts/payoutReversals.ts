import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import { invalidRequest } from '../../errors.js';
import { type Kernel, type Origin, getScoped, unixSeconds } from '../kernel.js';
import { type Metadata, mergeMetadata } from '../shapes.js';
import type { Ledger } from '../ledger.js';
import type { PayoutInternal, PayoutRow } from './payouts.js';

/**
 * `POST /v1/payouts/:id/reverse`, with Stripe's limits: only a paid payout of a connected account
 * to a US bank account can be reversed (a pending one is canceled instead), once. The reversal is
 * a payout of its own (`original_payout`) that debits the bank and credits the account's balance.
 */
export class PayoutReversals {
  constructor(
    private readonly kernel: Kernel,
    private readonly ledger: Ledger,
  ) {}

  reverse(origin: Origin, id: string, metadata: Metadata | '' | undefined): Stripe.Payout {
    const row: PayoutRow = getScoped<Stripe.Payout, PayoutInternal>(this.kernel, 'payout', origin.scope, id, 'payout', 'payout');
    const payout = row.body;
    if (origin.scope.account === null) throw invalidRequest('Payout reversals are only supported for payouts of connected accounts.', 'payout');
    if (payout.status === 'pending') throw invalidRequest(`Payout ${payout.id} is pending: cancel it with /v1/payouts/${payout.id}/cancel instead of reversing it.`, 'payout');
    if (payout.status !== 'paid') throw invalidRequest(`Payout ${payout.id} cannot be reversed: its status is ${payout.status}. Only paid payouts can be reversed.`, 'payout');
    if (payout.reversed_by !== null || payout.original_payout !== null) throw invalidRequest(`Payout ${payout.id} cannot be reversed: it is a reversal or has been reversed already.`, 'payout');
    const bank = this.kernel.store.find<Stripe.BankAccount, unknown>(row.internal.bankAccount);
    if (bank?.body.country !== 'US') throw invalidRequest('Payout reversals are only supported for payouts to US bank accounts.', 'payout');
    const reversalId = newId('po');
    const txn = this.ledger.record(origin, origin.scope, {
      type: 'payout',
      amount: payout.amount,
      currency: payout.currency,
      source: reversalId,
      description: `REVERSAL OF ${payout.id}`,
      reportingCategory: 'payout_reversal',
      availability: 'available',
    });
    const nowS = unixSeconds(this.kernel.now());
    const reversal: Stripe.Payout = {
      ...structuredClone(payout),
      id: reversalId,
      arrival_date: nowS,
      automatic: false,
      balance_transaction: txn.id,
      created: nowS,
      description: `REVERSAL OF ${payout.id}`,
      metadata: mergeMetadata({}, metadata),
      original_payout: payout.id,
      reversed_by: null,
      status: 'paid',
    };
    this.kernel.store.insert<Stripe.Payout, PayoutInternal>('payout', origin.scope, reversal, { ...row.internal, timerId: null });
    payout.reversed_by = reversalId;
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'payout.created', reversal);
    this.kernel.events.emit(origin, 'payout.updated', payout, { reversed_by: null });
    return reversal;
  }
}
