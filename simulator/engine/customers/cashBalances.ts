import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import { invalidRequest, resourceMissing } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getScoped, unixSeconds } from '../kernel.js';
import { list, type ListEnvelope } from '../shapes.js';

/**
 * A customer's cash balance: its settings, funding instructions, the funds bank transfers brought
 * in (`POST /v1/test_helpers/customers/:id/fund_cash_balance`, as in Stripe's test mode) and what
 * was applied to PaymentIntents paid from it (`customer_balance`, engine/payments/cashBalancePayments.ts).
 * Each movement is a cash balance transaction, as on Stripe.
 */

type ReconciliationMode = 'automatic' | 'manual' | 'merchant_default';
type Page = { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined };

interface CashBalanceInternal {
  reconciliationMode: ReconciliationMode;
  /** What the balance holds, per currency; absent until first funded. */
  available?: Record<string, number>;
}

type CashBalanceTransaction = Stripe.CustomerCashBalanceTransaction;

/**
 * The currency a customer of the simulator's US platform holds a cash balance in: US bank
 * transfers bring dollars, and the transfer types of other countries are not available to it.
 */
export const CASH_BALANCE_CURRENCY = 'usd';

/** The bank transfer types Stripe offers and the one currency each takes (docs.stripe.com/payments/bank-transfers). */
const TRANSFER_CURRENCY: Record<string, string> = {
  us_bank_transfer: 'usd',
  gb_bank_transfer: 'gbp',
  eu_bank_transfer: 'eur',
  jp_bank_transfer: 'jpy',
  mx_bank_transfer: 'mxn',
};

export interface FundingInstructionsInput {
  currency: string;
  funding_type: string;
  bank_transfer: { type: string; requested_address_types?: string[] | undefined };
}

export class CashBalances {
  constructor(private readonly kernel: Kernel) {}

  private customer(scope: Scope, id: string): StoredObject<Stripe.Customer, unknown> {
    const row = getScoped<Stripe.Customer, unknown>(this.kernel, 'customer', scope, id, 'customer', 'customer');
    if ((row.body as { deleted?: boolean }).deleted) throw resourceMissing('customer', id, 'customer');
    return row;
  }

  /** The settings kept beside the customer: the balance itself is made on first use, as on Stripe. */
  private settings(scope: Scope, customer: string): StoredObject<{ customer: string }, CashBalanceInternal> | undefined {
    return this.kernel.store.list<{ customer: string }, CashBalanceInternal>('cash_balance_settings', scope, { customer }, { limit: 1 }).data[0];
  }

  private settingsOrNew(scope: Scope, customer: string): StoredObject<{ customer: string }, CashBalanceInternal> {
    return this.settings(scope, customer) ?? this.kernel.store.insert<{ id: string; customer: string }, CashBalanceInternal>('cash_balance_settings', scope, { id: `cbs_${customer}`, customer }, { reconciliationMode: 'merchant_default' });
  }

  private present(scope: Scope, customer: string, internal: CashBalanceInternal | undefined): Stripe.CashBalance {
    const mode = internal?.reconciliationMode ?? 'merchant_default';
    return {
      object: 'cash_balance',
      available: internal?.available ? { ...internal.available } : null,
      customer,
      livemode: scope.livemode,
      settings: { reconciliation_mode: mode === 'merchant_default' ? 'automatic' : mode, using_merchant_default: mode === 'merchant_default' },
    } as Stripe.CashBalance;
  }

  retrieve(scope: Scope, customer: string): Stripe.CashBalance {
    this.customer(scope, customer);
    return this.present(scope, customer, this.settings(scope, customer)?.internal);
  }

  update(origin: Origin, customer: string, mode: ReconciliationMode | undefined): Stripe.CashBalance {
    this.customer(origin.scope, customer);
    const row = this.settingsOrNew(origin.scope, customer);
    if (mode !== undefined) row.internal.reconciliationMode = mode;
    this.kernel.store.save(row);
    return this.present(origin.scope, customer, row.internal);
  }

  /** Whether incoming funds are applied to the customer's waiting PaymentIntents by themselves (the merchant default is automatic, as on Stripe). */
  reconcilesAutomatically(scope: Scope, customer: string): boolean {
    return (this.settings(scope, customer)?.internal.reconciliationMode ?? 'merchant_default') !== 'manual';
  }

  /** What the balance holds in `currency`. */
  available(scope: Scope, customer: string, currency: string): number {
    return this.settings(scope, customer)?.internal.available?.[currency] ?? 0;
  }

  /**
   * `POST /v1/test_helpers/customers/:id/fund_cash_balance`: a bank transfer from the customer
   * arrives. Only in test mode, as on Stripe.
   */
  fund(origin: Origin, customer: string, input: { amount: number; currency: string; reference?: string | undefined }): CashBalanceTransaction {
    if (origin.scope.livemode) throw invalidRequest('Test helpers can only be used in test mode.');
    const row = this.customer(origin.scope, customer);
    if (input.amount <= 0) throw invalidRequest('Invalid positive integer', 'amount', 'parameter_invalid');
    const currency = input.currency.toLowerCase();
    if (currency !== CASH_BALANCE_CURRENCY) {
      throw invalidRequest(`The simulator's platform is in the US: its customers' cash balances are funded in ${CASH_BALANCE_CURRENCY} (us_bank_transfer), not ${currency}.`, 'currency', 'parameter_invalid');
    }
    const name = (row.body as { name?: string | null }).name ?? null;
    return this.move(origin.scope, customer, currency, input.amount, {
      type: 'funded',
      funded: { bank_transfer: { reference: input.reference ?? null, type: 'us_bank_transfer', us_bank_transfer: { network: 'ach', sender_name: name } } },
    } as Partial<CashBalanceTransaction>);
  }

  /** Takes `amount` from the balance for a PaymentIntent; the caller checked the balance holds it. */
  applyToPayment(scope: Scope, customer: string, currency: string, amount: number, paymentIntent: string): CashBalanceTransaction {
    if (amount > this.available(scope, customer, currency)) throw new Error(`cash balance of ${customer} holds less than ${amount} ${currency}`);
    return this.move(scope, customer, currency, -amount, { type: 'applied_to_payment', applied_to_payment: { payment_intent: paymentIntent } } as Partial<CashBalanceTransaction>);
  }

  /** Gives back to the balance what it paid of a PaymentIntent that was canceled before being paid in full. */
  returnFromPayment(scope: Scope, customer: string, currency: string, amount: number, paymentIntent: string): CashBalanceTransaction {
    return this.move(scope, customer, currency, amount, { type: 'unapplied_from_payment', unapplied_from_payment: { payment_intent: paymentIntent } } as Partial<CashBalanceTransaction>);
  }

  private move(scope: Scope, customer: string, currency: string, net: number, detail: Partial<CashBalanceTransaction>): CashBalanceTransaction {
    const row = this.settingsOrNew(scope, customer);
    const available = { ...(row.internal.available ?? {}) };
    available[currency] = (available[currency] ?? 0) + net;
    row.internal.available = available;
    this.kernel.store.save(row);
    const txn = {
      id: newId('ccsbtxn'),
      object: 'customer_cash_balance_transaction',
      created: unixSeconds(this.kernel.now()),
      currency,
      customer,
      ending_balance: available[currency],
      livemode: scope.livemode,
      net_amount: net,
      ...detail,
    } as CashBalanceTransaction;
    this.kernel.store.insert('customer_cash_balance_transaction', scope, txn, {});
    return txn;
  }

  listTransactions(scope: Scope, customer: string, page: Page): ListEnvelope<CashBalanceTransaction> {
    this.customer(scope, customer);
    const found = this.kernel.store.list<CashBalanceTransaction, Record<string, never>>('customer_cash_balance_transaction', scope, { customer }, page);
    return list(`/v1/customers/${customer}/cash_balance_transactions`, found.data.map((row) => row.body), found.hasMore);
  }

  retrieveTransaction(scope: Scope, customer: string, id: string): CashBalanceTransaction {
    this.customer(scope, customer);
    const found = this.kernel.store.find<CashBalanceTransaction, Record<string, never>>(id);
    if (!found || found.type !== 'customer_cash_balance_transaction' || found.livemode !== scope.livemode || found.account !== scope.account || found.body.customer !== customer) {
      throw resourceMissing('customer cash balance transaction', id, 'transaction');
    }
    return found.body;
  }

  /**
   * The account a customer sends transfers to, as Stripe gives it: one per customer and type. Each
   * transfer type takes one currency, and Stripe refuses the others.
   */
  fundingInstructions(origin: Origin, customer: string, input: FundingInstructionsInput): Stripe.FundingInstructions {
    this.customer(origin.scope, customer);
    if (input.funding_type !== 'bank_transfer') throw invalidRequest(`Invalid funding_type: must be bank_transfer`, 'funding_type', 'parameter_invalid');
    const expected = TRANSFER_CURRENCY[input.bank_transfer.type];
    if (!expected) throw invalidRequest(`Invalid bank_transfer[type]: must be one of ${Object.keys(TRANSFER_CURRENCY).join(', ')}`, 'bank_transfer[type]', 'parameter_invalid');
    const currency = input.currency.toLowerCase();
    if (currency !== expected) {
      throw invalidRequest(`The currency ${currency} is not supported for bank_transfer[type] ${input.bank_transfer.type}; use ${expected}.`, 'currency', 'parameter_invalid');
    }
    if (input.bank_transfer.type !== 'us_bank_transfer') {
      throw invalidRequest(`The simulator's platform is in the US: bank_transfer[type] ${input.bank_transfer.type} is not available to it.`, 'bank_transfer[type]', 'parameter_invalid');
    }
    // A fixed test account number per customer, as Stripe gives each customer its own.
    const number = `1${customer.replace(/\D/g, '').padStart(11, '0').slice(-11)}`;
    return {
      object: 'funding_instructions',
      bank_transfer: {
        country: 'US',
        financial_addresses: [
          { type: 'aba', supported_networks: ['ach', 'domestic_wire_us'], aba: { account_number: number, bank_name: 'STRIPE TEST BANK', routing_number: '110000000' } },
          { type: 'swift', supported_networks: ['swift'], swift: { account_number: number, bank_name: 'STRIPE TEST BANK', swift_code: 'TSTEZ122' } },
        ],
        type: 'us_bank_transfer',
      },
      currency,
      funding_type: 'bank_transfer',
      livemode: origin.scope.livemode,
    } as unknown as Stripe.FundingInstructions;
  }
}
