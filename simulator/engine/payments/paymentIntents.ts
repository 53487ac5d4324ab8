import type Stripe from 'stripe';
import { newId, newSecret } from '../../ids.js';
import { SimError, invalidRequest, missingParam, unexpectedState } from '../../errors.js';
import type { Scope } from '../../store.js';
import { type Kernel, type Origin, unixSeconds } from '../kernel.js';
import { list, type ListEnvelope, mergeMetadata } from '../shapes.js';
import { assertCanCharge, capabilityStatus } from '../connect/capabilityState.js';
import type { Customers } from '../customers/customers.js';
import type { PaymentMethodRow, PaymentMethods } from './paymentMethods.js';
import type { PaymentAttempts } from './paymentAttempts.js';
import { withCustomerBalanceOptions } from './cashBalancePayments.js';
import {
  CONFIRMABLE,
  assertUpdatable,
  assertClientSecret,
  assertTypeAllowed,
  checkAchCapability,
  getIntent,
  missingPaymentMethod,
  statusList,
  validateAmount,
  validateCurrency,
  assertMethodCurrency,
} from './intentRules.js';
import type {
  AccountChecks,
  ChallengeView,
  IntentResult,
  PaymentIntentConfirmInput,
  PaymentIntentCreateInput,
  PaymentIntentInternal,
  PaymentIntentRow,
  PaymentIntentUpdateInput,
} from './types.js';


/**
 * PaymentIntents: creation, update and confirmation. What an attempt leads to (approval, decline,
 * 3DS, ACH) is in paymentAttempts.ts, capture and cancellation in captures.ts, the charges they
 * create and the money a capture moves in charges.ts. Statuses move exactly as on Stripe:
 *
 *   requires_payment_method → requires_confirmation → (requires_action) → processing
 *     → requires_capture → succeeded, or canceled from any state but processing/succeeded.
 */

export class PaymentIntents {
  constructor(
    private readonly kernel: Kernel,
    private readonly accounts: AccountChecks,
    private readonly paymentMethods: PaymentMethods,
    private readonly customers: Customers,
    private readonly attempts: PaymentAttempts,
  ) {}

  private now(): number {
    return unixSeconds(this.kernel.now());
  }

  private get(scope: Scope, id: string): PaymentIntentRow {
    return getIntent(this.kernel, scope, id);
  }

  create(origin: Origin, input: PaymentIntentCreateInput): IntentResult {
    const scope = origin.scope;
    const currency = validateCurrency(input.currency);
    validateAmount(input.amount, currency);
    for (const type of [input.payment_method_data?.type, ...(input.payment_method_types ?? [])]) assertMethodCurrency(type, currency);
    let destination: string | null = null;
    if (input.transfer_data) {
      if (!input.transfer_data.destination) throw missingParam('transfer_data[destination]');
      if (scope.account !== null) {
        throw invalidRequest('transfer_data cannot be used on a request made with the Stripe-Account header.', 'transfer_data[destination]');
      }
      const account = this.accounts.findConnected(scope.livemode, input.transfer_data.destination);
      if (!account) {
        throw new SimError(400, 'invalid_request_error', `No such destination: '${input.transfer_data.destination}'`, {
          code: 'resource_missing',
          param: 'transfer_data[destination]',
        });
      }
      if (capabilityStatus(account, 'transfers') !== 'active') {
        throw invalidRequest(
          'Your destination account needs to have at least one of the following capabilities enabled: transfers, crypto_transfers, legacy_payments',
          'transfer_data[destination]',
          'insufficient_capabilities_for_transfer',
        );
      }
      destination = account.id;
      if (input.transfer_data.amount !== undefined && input.transfer_data.amount > input.amount) {
        throw invalidRequest('The transfer amount must be no more than the PaymentIntent amount.', 'transfer_data[amount]');
      }
    }
    if (input.on_behalf_of && !this.accounts.findConnected(scope.livemode, input.on_behalf_of)) {
      throw new SimError(400, 'invalid_request_error', `No such account: '${input.on_behalf_of}'`, { code: 'resource_missing', param: 'on_behalf_of' });
    }
    for (const chargedAccount of [scope.account, input.on_behalf_of ?? null]) {
      const account = chargedAccount === null ? undefined : this.accounts.findConnected(scope.livemode, chargedAccount);
      if (account) assertCanCharge(account);
    }
    if (input.customer !== undefined) this.customers.assertUsable(scope, input.customer);
    if (input.application_fee_amount !== undefined) {
      if (destination === null && scope.account === null) {
        throw invalidRequest(
          'Can only apply an application_fee_amount when the PaymentIntent is attempting a direct payment (using an OAuth key or Stripe-Account header) or destination payment (using `transfer_data[destination]`).',
          'application_fee_amount',
        );
      }
      if (input.application_fee_amount > input.amount) {
        throw invalidRequest('The application fee amount must be no more than the PaymentIntent amount.', 'application_fee_amount');
      }
    }
    const id = newId('pi');
    const types = input.payment_method_types;
    const pi: Stripe.PaymentIntent = {
      id,
      object: 'payment_intent',
      allowed_payment_method_types: (types as Stripe.PaymentIntent.AllowedPaymentMethodType[] | undefined) ?? null,
      amount: input.amount,
      amount_capturable: 0,
      amount_details: { tip: {} },
      amount_received: 0,
      application: null,
      application_fee_amount: input.application_fee_amount ?? null,
      automatic_payment_methods: types ? null : { allow_redirects: 'always', enabled: true },
      canceled_at: null,
      cancellation_reason: null,
      capture_method: input.capture_method ?? 'automatic',
      client_secret: `${id}_secret_${newSecret('')}`,
      confirmation_method: 'automatic',
      created: this.now(),
      currency,
      customer: input.customer ?? null,
      customer_account: null,
      description: input.description ?? null,
      excluded_payment_method_types: null,
      last_payment_error: null,
      latest_charge: null,
      livemode: scope.livemode,
      managed_payments: null,
      metadata: mergeMetadata({}, input.metadata),
      next_action: null,
      on_behalf_of: input.on_behalf_of ?? null,
      payment_method: null,
      payment_method_configuration_details: null,
      payment_method_options: {},
      payment_method_types: types ?? ['card'],
      payment_record: null,
      processing: null,
      receipt_email: input.receipt_email ?? null,
      review: null,
      setup_future_usage: input.setup_future_usage ?? null,
      shipping: null,
      source: null,
      statement_descriptor: input.statement_descriptor ?? null,
      statement_descriptor_suffix: input.statement_descriptor_suffix ?? null,
      status: 'requires_payment_method',
      transfer_data: destination ? ({ destination, ...(input.transfer_data?.amount !== undefined ? { amount: input.transfer_data.amount } : {}) } as Stripe.PaymentIntent.TransferData) : null,
      transfer_group: input.transfer_group ?? null,
    };
    checkAchCapability(this.accounts, scope, pi, pi.payment_method_types);
    let pm: PaymentMethodRow | undefined;
    if (input.payment_method_data) pm = this.paymentMethods.create(origin, input.payment_method_data, 'payment_method_data');
    else if (input.payment_method) pm = this.paymentMethods.resolve(origin, input.payment_method, 'payment_method');
    if (pm) {
      assertTypeAllowed(pi, pm);
      pi.payment_method = pm.id;
      pi.status = 'requires_confirmation';
    }
    const microdeposits = input.payment_method_options?.us_bank_account?.verification_method === 'microdeposits';
    if (microdeposits) pi.payment_method_options = { us_bank_account: { verification_method: 'microdeposits' } } as Stripe.PaymentIntent.PaymentMethodOptions;
    withCustomerBalanceOptions(pi, input.payment_method_options?.customer_balance);
    const row = this.kernel.store.insert<Stripe.PaymentIntent, PaymentIntentInternal>('payment_intent', scope, pi, microdeposits ? { microdeposits: 'required' } : {});
    this.kernel.events.emit(origin, 'payment_intent.created', row.body);
    if (!input.confirm) return { intent: row.body };
    if (!pm) throw missingPaymentMethod();
    return this.attempts.attempt(origin, row, pm, input.return_url);
  }

  /** The 3DS challenge page's view of an intent (the page acts by id, as the cardholder's browser does), or null when there is none. */
  challenge(id: string): ChallengeView | null {
    const found = this.kernel.store.find<Stripe.PaymentIntent, PaymentIntentInternal>(id);
    if (!found || found.type !== 'payment_intent') return null;
    const pi = found.body;
    return { id: pi.id, amount: pi.amount, currency: pi.currency, status: pi.status, returnUrl: pi.next_action?.redirect_to_url?.return_url ?? null };
  }

  retrieve(scope: Scope, id: string, clientSecret?: string): Stripe.PaymentIntent {
    const row = this.get(scope, id);
    assertClientSecret(row.body, clientSecret);
    return row.body;
  }

  list(scope: Scope, filters: { customer?: string | undefined }, page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined }): ListEnvelope<Stripe.PaymentIntent> {
    const result = this.kernel.store.list<Stripe.PaymentIntent, PaymentIntentInternal>('payment_intent', scope, { customer: filters.customer }, page);
    return list('/v1/payment_intents', result.data.map((row) => row.body), result.hasMore);
  }

  update(origin: Origin, id: string, input: PaymentIntentUpdateInput): Stripe.PaymentIntent {
    const row = this.get(origin.scope, id);
    const pi = row.body;
    assertUpdatable(pi, input);
    if (input.currency !== undefined) pi.currency = validateCurrency(input.currency);
    if (input.amount !== undefined) pi.amount = input.amount;
    if (input.amount !== undefined || input.currency !== undefined) validateAmount(pi.amount, pi.currency);
    if (input.payment_method_types !== undefined) {
      pi.payment_method_types = input.payment_method_types;
      pi.allowed_payment_method_types = input.payment_method_types as Stripe.PaymentIntent.AllowedPaymentMethodType[];
      pi.automatic_payment_methods = null;
      checkAchCapability(this.accounts, origin.scope, pi, pi.payment_method_types);
    }
    if (input.capture_method !== undefined) pi.capture_method = input.capture_method;
    if (input.application_fee_amount !== undefined) pi.application_fee_amount = input.application_fee_amount;
    if (input.description !== undefined) pi.description = input.description;
    if (input.receipt_email !== undefined) pi.receipt_email = input.receipt_email;
    if (input.setup_future_usage !== undefined) pi.setup_future_usage = input.setup_future_usage;
    if (input.statement_descriptor !== undefined) pi.statement_descriptor = input.statement_descriptor;
    if (input.statement_descriptor_suffix !== undefined) pi.statement_descriptor_suffix = input.statement_descriptor_suffix;
    if (input.transfer_group !== undefined) pi.transfer_group = input.transfer_group;
    pi.metadata = mergeMetadata(pi.metadata, input.metadata);
    if (input.payment_method !== undefined) {
      const pm = this.paymentMethods.resolve(origin, input.payment_method, 'payment_method');
      assertTypeAllowed(pi, pm);
      pi.payment_method = pm.id;
      pi.status = 'requires_confirmation';
      pi.next_action = null;
      row.internal.authenticated = false;
    }
    this.kernel.store.save(row);
    return pi;
  }

  confirm(origin: Origin, id: string, input: PaymentIntentConfirmInput, clientSecret?: string): IntentResult {
    const row = this.get(origin.scope, id);
    const pi = row.body;
    assertClientSecret(pi, clientSecret);
    if (!CONFIRMABLE.includes(pi.status)) {
      throw unexpectedState(
        `You cannot confirm this PaymentIntent because it has a status of ${pi.status}. Only a PaymentIntent with one of the following statuses may be confirmed: ${statusList(CONFIRMABLE)}.`,
        { payment_intent: pi },
      );
    }
    if (row.internal.readerId) {
      throw unexpectedState('This PaymentIntent is being processed by a Terminal reader and cannot be confirmed through the API.', { payment_intent: pi });
    }
    if (input.receipt_email !== undefined) pi.receipt_email = input.receipt_email;
    if (input.capture_method !== undefined) pi.capture_method = input.capture_method;
    if (input.setup_future_usage !== undefined) pi.setup_future_usage = input.setup_future_usage;
    let pm: PaymentMethodRow;
    if (input.payment_method_data) {
      pm = this.paymentMethods.create(origin, input.payment_method_data, 'payment_method_data');
    } else if (input.payment_method) {
      pm = this.paymentMethods.resolve(origin, input.payment_method, 'payment_method');
    } else if (typeof pi.payment_method === 'string') {
      pm = this.paymentMethods.resolve(origin, pi.payment_method, 'payment_method');
    } else {
      throw missingPaymentMethod(pi);
    }
    if (pm.id !== pi.payment_method) row.internal.authenticated = false;
    if (input.payment_method_options?.us_bank_account?.verification_method === 'microdeposits' && row.internal.microdeposits !== 'verified') {
      row.internal.microdeposits = 'required';
      pi.payment_method_options = { ...pi.payment_method_options, us_bank_account: { verification_method: 'microdeposits' } } as Stripe.PaymentIntent.PaymentMethodOptions;
    }
    withCustomerBalanceOptions(pi, input.payment_method_options?.customer_balance);
    return this.attempts.attempt(origin, row, pm, input.return_url);
  }

  /**
   * `POST /v1/payment_intents/:id/verify_microdeposits`: Stripe's test amounts (32 and 45 cents) or
   * descriptor code (`SM11AA`) verify the bank account, and the debit starts.
   */
  verifyMicrodeposits(origin: Origin, id: string, input: { amounts?: number[] | undefined; descriptor_code?: string | undefined }): Stripe.PaymentIntent {
    const row = this.get(origin.scope, id);
    const pi = row.body;
    if (pi.status !== 'requires_action' || pi.next_action?.type !== 'verify_with_microdeposits') {
      throw unexpectedState(`This PaymentIntent is not awaiting microdeposit verification: its status is ${pi.status}.`, { payment_intent: pi });
    }
    if (input.amounts === undefined && input.descriptor_code === undefined) throw invalidRequest('You must provide either amounts or descriptor_code.', 'amounts', 'parameter_missing');
    if (input.descriptor_code !== undefined && input.descriptor_code !== MICRODEPOSIT_DESCRIPTOR_CODE) {
      throw invalidRequest('The descriptor code provided does not match the one sent to the bank account.', 'descriptor_code', 'payment_method_microdeposit_verification_descriptor_code_mismatch');
    }
    if (input.amounts !== undefined && (input.amounts.length !== 2 || input.amounts[0] !== MICRODEPOSIT_AMOUNTS[0] || input.amounts[1] !== MICRODEPOSIT_AMOUNTS[1])) {
      throw invalidRequest('The amounts provided do not match the amounts that were sent to the bank account.', 'amounts', 'payment_method_microdeposit_verification_amounts_mismatch');
    }
    row.internal.microdeposits = 'verified';
    const pm = this.paymentMethods.resolve(origin, String(pi.payment_method), 'payment_method');
    return this.attempts.attempt(origin, row, pm, undefined).intent;
  }
}

/** Stripe's test microdeposits: the two amounts, in cents, and the descriptor code of a single deposit. */
const MICRODEPOSIT_AMOUNTS = [32, 45];
const MICRODEPOSIT_DESCRIPTOR_CODE = 'SM11AA';