import type Stripe from 'stripe';
import { invalidRequest, resourceMissing } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getScoped } from '../kernel.js';
import { list, type ListEnvelope } from '../shapes.js';

/**
 * A customer's cash balance: its settings and funding instructions. Nothing funds it — bank
 * transfers from customers, and PaymentIntents paid from the balance (`customer_balance`), are not
 * modelled — so it holds nothing and has no transactions, as a balance no transfer reached does
 * on Stripe.
 */

type ReconciliationMode = 'automatic' | 'manual' | 'merchant_default';
type Page = { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined };

interface CashBalanceInternal {
  reconciliationMode: ReconciliationMode;
}

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

  private present(scope: Scope, customer: string, mode: ReconciliationMode): Stripe.CashBalance {
    return {
      object: 'cash_balance',
      available: null,
      customer,
      livemode: scope.livemode,
      settings: { reconciliation_mode: mode === 'merchant_default' ? 'automatic' : mode, using_merchant_default: mode === 'merchant_default' },
    } as Stripe.CashBalance;
  }

  retrieve(scope: Scope, customer: string): Stripe.CashBalance {
    this.customer(scope, customer);
    return this.present(scope, customer, this.settings(scope, customer)?.internal.reconciliationMode ?? 'merchant_default');
  }

  update(origin: Origin, customer: string, mode: ReconciliationMode | undefined): Stripe.CashBalance {
    this.customer(origin.scope, customer);
    const row = this.settings(origin.scope, customer);
    const next = mode ?? row?.internal.reconciliationMode ?? 'merchant_default';
    if (row) {
      row.internal.reconciliationMode = next;
      this.kernel.store.save(row);
    } else {
      this.kernel.store.insert<{ id: string; customer: string }, CashBalanceInternal>('cash_balance_settings', origin.scope, { id: `cbs_${customer}`, customer }, { reconciliationMode: next });
    }
    return this.present(origin.scope, customer, next);
  }

  listTransactions(scope: Scope, customer: string, _page: Page): ListEnvelope<Stripe.CustomerCashBalanceTransaction> {
    this.customer(scope, customer);
    return list(`/v1/customers/${customer}/cash_balance_transactions`, []);
  }

  retrieveTransaction(scope: Scope, customer: string, id: string): never {
    this.customer(scope, customer);
    throw resourceMissing('customer cash balance transaction', id, 'transaction');
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
