import type Stripe from 'stripe';
import { invalidRequest, unexpectedState } from '../../errors.js';
import type { Scope } from '../../store.js';
import type { Kernel, Origin } from '../kernel.js';
import { CASH_BALANCE_CURRENCY, type CashBalances } from '../customers/cashBalances.js';
import type { PaymentMethodRow, PaymentMethods } from './paymentMethods.js';
import { getIntent } from './intentRules.js';
import type { CustomerBalanceOptions, IntentResult, PaymentIntentRow } from './types.js';

/**
 * PaymentIntents paid from a customer's cash balance (`customer_balance`), as Stripe's test mode
 * pays them (docs.stripe.com/payments/customer-balance, …/reconciliation):
 *
 * - Confirmed with a balance that covers the amount, the intent succeeds at once.
 * - Otherwise, with `payment_method_options[customer_balance][funding_type]=bank_transfer`, it
 *   waits for funds in `requires_action` with `display_bank_transfer_instructions` (the customer's
 *   bank account and the `amount_remaining`); without it, it goes back to `requires_payment_method`.
 * - A waiting intent is funded from the balance by `apply_customer_balance`, or, when the
 *   customer's reconciliation mode is automatic (the default), by funds as they arrive, oldest
 *   intent first; partly funded, it keeps waiting for the rest (`payment_intent.partially_funded`).
 * - Canceled while partly funded, what it took goes back to the balance.
 *
 * Stripe also matches incoming transfers by their reference and by exact amounts across several
 * intents; US bank transfers carry no reference, and the simulator funds the oldest first.
 */

/** What paying approves with: the attempt's approval (paymentAttempts.ts), which makes and captures the charge. */
export type Approve = (origin: Origin, row: PaymentIntentRow, pm: PaymentMethodRow) => IntentResult;

/** Keeps the customer balance options on the intent as Stripe shows them. */
export function withCustomerBalanceOptions(pi: Stripe.PaymentIntent, options: CustomerBalanceOptions | undefined): void {
  if (!options) return;
  const bankTransfer = options.bank_transfer ? { type: options.bank_transfer.type ?? null, ...(options.bank_transfer.requested_address_types ? { requested_address_types: options.bank_transfer.requested_address_types } : {}) } : undefined;
  pi.payment_method_options = {
    ...pi.payment_method_options,
    customer_balance: { ...(bankTransfer ? { bank_transfer: bankTransfer } : {}), funding_type: options.funding_type ?? null },
  } as Stripe.PaymentIntent.PaymentMethodOptions;
}

function awaitingFunds(pi: Stripe.PaymentIntent): boolean {
  return pi.status === 'requires_action' && pi.next_action?.type === 'display_bank_transfer_instructions';
}

export class CashBalancePayments {
  constructor(
    private readonly kernel: Kernel,
    private readonly cashBalances: CashBalances,
    private readonly paymentMethods: PaymentMethods,
    private readonly approve: Approve,
  ) {}

  private remaining(row: PaymentIntentRow): number {
    return row.body.amount - (row.internal.cashApplied ?? 0);
  }

  /** An attempt with a `customer_balance` PaymentMethod: paid from the balance, waiting for funds, or back to requires_payment_method. */
  attempt(origin: Origin, row: PaymentIntentRow, pm: PaymentMethodRow): IntentResult {
    const pi = row.body;
    const customer = typeof pi.customer === 'string' ? pi.customer : undefined;
    if (!customer) throw invalidRequest('A PaymentIntent paid from a customer balance (customer_balance) needs a customer: set customer on the PaymentIntent.', 'customer');
    if (pi.capture_method === 'manual') {
      throw invalidRequest('The payment method type customer_balance does not support capture_method manual: the payment is captured as soon as it is funded.', 'capture_method');
    }
    if (pi.currency !== CASH_BALANCE_CURRENCY) {
      throw invalidRequest(`The simulator's platform is in the US: a customer balance pays in ${CASH_BALANCE_CURRENCY}, not ${pi.currency}.`, 'currency');
    }
    const options = (pi.payment_method_options as { customer_balance?: CustomerBalanceOptions } | null)?.customer_balance;
    const transferType = options?.bank_transfer?.type;
    if (options?.funding_type && transferType !== 'us_bank_transfer') {
      throw invalidRequest(
        `The simulator's platform is in the US: payment_method_options[customer_balance][bank_transfer][type] must be us_bank_transfer${transferType ? `, not ${transferType}` : ''}.`,
        'payment_method_options[customer_balance][bank_transfer][type]',
      );
    }
    const scope = this.scopeOf(row);
    if (this.cashBalances.available(scope, customer, pi.currency) >= this.remaining(row)) return this.fund(origin, row, this.remaining(row));
    if (!options?.funding_type) {
      pi.status = 'requires_payment_method';
      pi.payment_method = null;
      pi.last_payment_error = {
        type: 'invalid_request_error',
        code: 'payment_intent_payment_attempt_failed',
        message: "The customer's cash balance does not cover this payment, and no funding_type was given to collect the rest by bank transfer.",
        payment_method: pm.body as unknown as Stripe.PaymentMethod,
        payment_method_type: 'customer_balance',
      } as Stripe.PaymentIntent.LastPaymentError;
      this.kernel.store.save(row);
      this.kernel.events.emit(origin, 'payment_intent.payment_failed', pi);
      return { intent: pi };
    }
    pi.status = 'requires_action';
    this.setInstructions(origin, row, customer);
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'payment_intent.requires_action', pi);
    if (this.cashBalances.reconcilesAutomatically(scope, customer)) {
      const available = this.cashBalances.available(scope, customer, pi.currency);
      if (available > 0) this.fund(origin, row, available);
    }
    return { intent: row.body };
  }

  /** `POST /v1/payment_intents/:id/apply_customer_balance`: funds a waiting intent from the balance by hand. */
  apply(origin: Origin, id: string, input: { amount?: number | undefined; currency?: string | undefined }): Stripe.PaymentIntent {
    const row = getIntent(this.kernel, origin.scope, id);
    const pi = row.body;
    if (!pi.payment_method_types.includes('customer_balance')) {
      throw unexpectedState(`This PaymentIntent cannot apply a customer balance: \`customer_balance\` is not one of its payment_method_types (${pi.payment_method_types.join(', ')}).`, { payment_intent: pi });
    }
    if (!awaitingFunds(pi)) {
      throw unexpectedState(
        `You cannot apply a customer balance to this PaymentIntent because it has a status of ${pi.status}. Only a PaymentIntent confirmed with a customer_balance PaymentMethod and waiting for funds (requires_action) can be funded.`,
        { payment_intent: pi },
      );
    }
    if (input.currency !== undefined && input.currency.toLowerCase() !== pi.currency) {
      throw invalidRequest(`The currency (${input.currency.toLowerCase()}) must be the PaymentIntent's currency (${pi.currency}).`, 'currency');
    }
    const remaining = this.remaining(row);
    if (input.amount !== undefined && (input.amount <= 0 || input.amount > remaining)) {
      throw invalidRequest(`The amount must be a positive integer no larger than what remains to be paid on this PaymentIntent (${remaining}).`, 'amount');
    }
    const available = this.cashBalances.available(this.scopeOf(row), String(pi.customer), pi.currency);
    if (input.amount !== undefined && input.amount > available) {
      throw invalidRequest(`The customer's cash balance (${available} ${pi.currency}) is less than the amount to apply (${input.amount}).`, 'amount', 'balance_insufficient');
    }
    // Without an amount, what remains is applied as far as the balance goes; the rest is still awaited.
    const amount = Math.min(input.amount ?? remaining, available);
    return amount > 0 ? this.fund(origin, row, amount).intent : pi;
  }

  /**
   * `POST /v1/test_helpers/customers/:id/fund_cash_balance`: a bank transfer from the customer
   * arrives; in automatic reconciliation it pays the customer's waiting intents, oldest first.
   */
  receive(origin: Origin, customer: string, input: { amount: number; currency: string; reference?: string | undefined }): Stripe.CustomerCashBalanceTransaction {
    const txn = this.cashBalances.fund(origin, customer, input);
    const scope = origin.scope;
    if (this.cashBalances.reconcilesAutomatically(scope, customer)) {
      const waiting = this.kernel.store
        .all<Stripe.PaymentIntent, PaymentIntentRow['internal']>('payment_intent')
        .filter((row) => row.livemode === scope.livemode && row.account === scope.account && row.body.customer === customer && row.body.currency === txn.currency && awaitingFunds(row.body))
        .sort((a, b) => a.body.created - b.body.created);
      for (const row of waiting) {
        const available = this.cashBalances.available(scope, customer, txn.currency);
        if (available <= 0) break;
        this.fund(origin, row, Math.min(available, this.remaining(row)));
      }
    }
    if (this.cashBalances.available(scope, customer, txn.currency) > 0) this.kernel.events.emit(origin, 'cash_balance.funds_available', this.cashBalances.retrieve(scope, customer));
    return txn;
  }

  /** A canceled intent gives back what the balance had paid of it. */
  canceled(origin: Origin, row: PaymentIntentRow): void {
    const applied = row.internal.cashApplied ?? 0;
    if (applied <= 0 || typeof row.body.customer !== 'string') return;
    this.cashBalances.returnFromPayment(this.scopeOf(row), row.body.customer, row.body.currency, applied, row.body.id);
    row.internal.cashApplied = 0;
    this.kernel.store.save(row);
  }

  private scopeOf(row: PaymentIntentRow): Scope {
    return { livemode: row.livemode, account: row.account };
  }

  /** Takes `amount` from the balance for the intent: paid in full, it succeeds; else it waits for the rest. */
  private fund(origin: Origin, row: PaymentIntentRow, amount: number): IntentResult {
    const pi = row.body;
    const customer = String(pi.customer);
    this.cashBalances.applyToPayment(this.scopeOf(row), customer, pi.currency, amount, pi.id);
    row.internal.cashApplied = (row.internal.cashApplied ?? 0) + amount;
    if (this.remaining(row) === 0) {
      const pm = this.paymentMethods.resolve({ ...origin, scope: this.scopeOf(row) }, String(pi.payment_method), 'payment_method');
      return this.approve(origin, row, pm);
    }
    this.setInstructions(origin, row, customer);
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'payment_intent.partially_funded', pi);
    return { intent: pi };
  }

  /** Where the customer sends the rest: their bank account for transfers, and how much remains. */
  private setInstructions(origin: Origin, row: PaymentIntentRow, customer: string): void {
    const pi = row.body;
    const instructions = this.cashBalances.fundingInstructions({ ...origin, scope: this.scopeOf(row) }, customer, {
      currency: pi.currency,
      funding_type: 'bank_transfer',
      bank_transfer: { type: 'us_bank_transfer' },
    });
    pi.next_action = {
      type: 'display_bank_transfer_instructions',
      display_bank_transfer_instructions: {
        amount_remaining: this.remaining(row),
        currency: pi.currency,
        financial_addresses: instructions.bank_transfer.financial_addresses,
        // Stripe's hosted page of these instructions is not modelled.
        hosted_instructions_url: null,
        // US bank transfers carry no reference (Stripe gives one only in some countries).
        reference: null,
        type: 'us_bank_transfer',
      },
    } as Stripe.PaymentIntent.NextAction;
  }
}
