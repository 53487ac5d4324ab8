import type Stripe from 'stripe';
import { newId, newSecret } from '../../ids.js';
import { SimError, invalidRequest, missingParam, unexpectedState } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getAny, getScoped, systemOrigin, unixSeconds } from '../kernel.js';
import { type Metadata, list, type ListEnvelope, mergeMetadata } from '../shapes.js';
import { ACH_CAPABILITY, type Accounts } from '../connect/accounts.js';
import { type CardOutcome, type Decline, achOutcome, testCard } from './instruments.js';
import type { ChargeRow, Charges } from './charges.js';
import type { Customers } from '../customers/customers.js';
import { type PaymentMethodBody, type PaymentMethodDataInput, type PaymentMethodRow, type PaymentMethods } from './paymentMethods.js';

/**
 * PaymentIntents: creation, confirmation, declines, authentication, capture and cancellation; the
 * charges they create and the money a capture moves are in charges.ts. Statuses move exactly as on
 * Stripe:
 *
 *   requires_payment_method → requires_confirmation → (requires_action) → processing
 *     → requires_capture → succeeded, or canceled from any state but processing/succeeded.
 *
 * A decline is not a rollback: the failed charge, the intent's `last_payment_error` and the events
 * are committed, and the 402 is the answer. Services therefore return `{ intent, error }` instead of
 * throwing card errors.
 */

export interface PaymentIntentInternal {
  /** 3DS was completed for the current payment method: the next attempt goes straight to the issuer. */
  authenticated?: boolean;
  /** The reader collecting a card for this intent, while a `process_payment_intent` action runs. */
  readerId?: string | null;
  /** An authorisation (card-present) or ACH settlement in flight; the intent cannot be canceled. */
  timerId?: string | null;
}

export type PaymentIntentRow = StoredObject<Stripe.PaymentIntent, PaymentIntentInternal>;

export interface IntentResult {
  intent: Stripe.PaymentIntent;
  error?: SimError;
}

export interface PaymentIntentCreateInput {
  amount: number;
  currency: string;
  payment_method?: string | undefined;
  payment_method_data?: PaymentMethodDataInput | undefined;
  payment_method_types?: string[] | undefined;
  confirm?: boolean | undefined;
  capture_method?: 'automatic' | 'automatic_async' | 'manual' | undefined;
  application_fee_amount?: number | undefined;
  transfer_data?: { destination?: string | undefined; amount?: number | undefined } | undefined;
  on_behalf_of?: string | undefined;
  metadata?: Metadata | '' | undefined;
  description?: string | null | undefined;
  receipt_email?: string | null | undefined;
  customer?: string | undefined;
  return_url?: string | undefined;
  setup_future_usage?: 'off_session' | 'on_session' | null | undefined;
  statement_descriptor?: string | null | undefined;
  statement_descriptor_suffix?: string | null | undefined;
  transfer_group?: string | undefined;
}

/** What an update may change: the create fields that stay editable until the intent settles, and clearing the fee. */
export type PaymentIntentUpdateInput = Partial<
  Pick<
    PaymentIntentCreateInput,
    | 'amount'
    | 'currency'
    | 'payment_method'
    | 'payment_method_types'
    | 'capture_method'
    | 'metadata'
    | 'description'
    | 'receipt_email'
    | 'setup_future_usage'
    | 'statement_descriptor'
    | 'statement_descriptor_suffix'
    | 'transfer_group'
  >
> & { application_fee_amount?: number | null | undefined };

export interface PaymentIntentConfirmInput {
  payment_method?: string | undefined;
  payment_method_data?: PaymentMethodDataInput | undefined;
  return_url?: string | undefined;
  receipt_email?: string | null | undefined;
  capture_method?: 'automatic' | 'automatic_async' | 'manual' | undefined;
  setup_future_usage?: 'off_session' | 'on_session' | null | undefined;
}

export interface CaptureInput {
  amount_to_capture?: number | undefined;
  application_fee_amount?: number | undefined;
  metadata?: Metadata | '' | undefined;
}

/**
 * Stripe's minimum charge amounts in the smallest unit (docs: "Minimum and maximum charge
 * amounts"); currencies not listed use 50, the most common minimum.
 */
const MINIMUM_AMOUNT: Record<string, number> = {
  usd: 50, eur: 50, gbp: 30, cad: 50, aud: 50, chf: 50, nzd: 50, sgd: 50, jpy: 50,
  dkk: 250, nok: 300, sek: 300, hkd: 400, mxn: 1000, pln: 200, czk: 1500, huf: 17500, inr: 50,
};
/** Currencies not listed: 50 in the smallest unit, as for the US dollar (Stripe's most common minimum). */
const DEFAULT_MINIMUM_AMOUNT = 50;
/** Stripe's maximum for a single charge: eight digits in the smallest unit. */
const MAXIMUM_AMOUNT = 99_999_999;

const CANCELABLE: Stripe.PaymentIntent.Status[] = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action'];
const CONFIRMABLE: Stripe.PaymentIntent.Status[] = ['requires_payment_method', 'requires_confirmation', 'requires_action'];
const UPDATABLE: Stripe.PaymentIntent.Status[] = ['requires_payment_method', 'requires_confirmation', 'requires_action', 'requires_capture'];

const ZERO_DECIMAL = new Set(['jpy', 'krw', 'vnd', 'clp', 'pyg', 'xof', 'xaf', 'ugx', 'rwf', 'kmf', 'gnf', 'djf', 'bif', 'mga', 'vuv', 'xpf']);

function formatAmount(amount: number, currency: string): string {
  const symbol: Record<string, string> = { usd: '$', eur: '€', gbp: '£', cad: '$', aud: '$', jpy: '¥' };
  const value = ZERO_DECIMAL.has(currency) ? String(amount) : (amount / 100).toFixed(2);
  return `${symbol[currency] ?? ''}${value} ${currency}`;
}

function statusList(statuses: readonly string[]): string {
  return statuses.join(', ');
}

export class Payments {
  constructor(
    private readonly kernel: Kernel,
    private readonly accounts: Accounts,
    private readonly paymentMethods: PaymentMethods,
    private readonly charges: Charges,
    private readonly customers: Customers,
  ) {}

  private now(): number {
    return unixSeconds(this.kernel.now());
  }

  get(scope: Scope, id: string): PaymentIntentRow {
    return getScoped<Stripe.PaymentIntent, PaymentIntentInternal>(this.kernel, 'payment_intent', scope, id, 'payment_intent', 'intent');
  }

  getAny(id: string): PaymentIntentRow {
    return getAny<Stripe.PaymentIntent, PaymentIntentInternal>(this.kernel, 'payment_intent', id, 'payment_intent');
  }

  private save(row: { id: string } & StoredObject<unknown, unknown>): void {
    this.kernel.store.save(row);
  }

  private validateAmount(amount: number, currency: string, param = 'amount'): void {
    const minimum = (Object.hasOwn(MINIMUM_AMOUNT, currency) ? MINIMUM_AMOUNT[currency] : undefined) ?? DEFAULT_MINIMUM_AMOUNT;
    if (amount < minimum) {
      throw invalidRequest(`Amount must be at least ${formatAmount(minimum, currency)}`, param, 'amount_too_small');
    }
    if (amount > MAXIMUM_AMOUNT) {
      throw invalidRequest(`Amount must be no more than ${formatAmount(MAXIMUM_AMOUNT, currency)}`, param, 'amount_too_large');
    }
  }

  private validateCurrency(currency: string): string {
    const lower = currency.toLowerCase();
    if (!/^[a-z]{3}$/.test(lower)) throw invalidRequest(`Invalid currency: ${currency}.`, 'currency', 'parameter_invalid');
    return lower;
  }

  /**
   * Live mode only: a destination (or on-behalf-of) account must hold an active ACH capability before
   * an intent can debit a bank account for it. Test mode does not check, as on Stripe.
   */
  private checkAchCapability(scope: Scope, pi: Stripe.PaymentIntent, types: string[]): void {
    if (!scope.livemode || !types.includes('us_bank_account')) return;
    const candidates = [typeof pi.transfer_data?.destination === 'string' ? pi.transfer_data.destination : null, typeof pi.on_behalf_of === 'string' ? pi.on_behalf_of : null, scope.account];
    for (const accountId of candidates) {
      if (!accountId) continue;
      const account = this.accounts.findConnected(scope.livemode, accountId);
      if (account && this.accounts.capabilityStatus(account, ACH_CAPABILITY) !== 'active') {
        throw invalidRequest(
          `The payment method type \`us_bank_account\` cannot be used because the account ${accountId} does not have the \`${ACH_CAPABILITY}\` capability active. Request the capability and wait for it to become active.`,
          'payment_method_types',
          'payment_method_unactivated',
        );
      }
    }
  }

  create(origin: Origin, input: PaymentIntentCreateInput): IntentResult {
    const scope = origin.scope;
    const currency = this.validateCurrency(input.currency);
    this.validateAmount(input.amount, currency);
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
      if (this.accounts.capabilityStatus(account, 'transfers') !== 'active') {
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
      if (account) this.accounts.assertCanCharge(account);
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
    this.checkAchCapability(scope, pi, pi.payment_method_types);
    let pm: PaymentMethodRow | undefined;
    if (input.payment_method_data) pm = this.paymentMethods.create(origin, input.payment_method_data, 'payment_method_data');
    else if (input.payment_method) pm = this.paymentMethods.resolve(origin, input.payment_method, 'payment_method');
    if (pm) {
      this.assertTypeAllowed(pi, pm);
      pi.payment_method = pm.id;
      pi.status = 'requires_confirmation';
    }
    const row = this.kernel.store.insert<Stripe.PaymentIntent, PaymentIntentInternal>('payment_intent', scope, pi, {});
    this.kernel.events.emit(origin, 'payment_intent.created', row.body);
    if (!input.confirm) return { intent: row.body };
    if (!pm) {
      throw unexpectedState(
        "You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a payment method.",
      );
    }
    return this.attempt(origin, row, pm, input.return_url);
  }

  private assertTypeAllowed(pi: Stripe.PaymentIntent, pm: PaymentMethodRow): void {
    const type = pm.body.type;
    const automatic = pi.automatic_payment_methods?.enabled === true && type !== 'card_present' && type !== 'interac_present';
    if (!automatic && !pi.payment_method_types.includes(type)) {
      throw invalidRequest(
        `The PaymentMethod provided (${type}) is not allowed for this PaymentIntent. Please attach a PaymentMethod of one of the following types: ${pi.payment_method_types.join(', ')}. Alternatively update the allowed payment_method_types for this PaymentIntent to include "${type}".`,
        'payment_method',
        'payment_intent_incompatible_payment_method',
      );
    }
  }

  retrieve(scope: Scope, id: string, clientSecret?: string): Stripe.PaymentIntent {
    const row = this.get(scope, id);
    if (clientSecret !== undefined && clientSecret !== row.body.client_secret) {
      throw invalidRequest('The client_secret provided does not match the client_secret associated with the PaymentIntent.', 'client_secret');
    }
    return row.body;
  }

  list(scope: Scope, filters: { customer?: string | undefined }, page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined }): ListEnvelope<Stripe.PaymentIntent> {
    const result = this.kernel.store.list<Stripe.PaymentIntent, PaymentIntentInternal>('payment_intent', scope, { customer: filters.customer }, page);
    return list('/v1/payment_intents', result.data.map((row) => row.body), result.hasMore);
  }

  update(origin: Origin, id: string, input: PaymentIntentUpdateInput): Stripe.PaymentIntent {
    const row = this.get(origin.scope, id);
    const pi = row.body;
    if (!UPDATABLE.includes(pi.status)) {
      throw unexpectedState(
        `This PaymentIntent could not be updated because it has a status of ${pi.status}. You may only update a PaymentIntent with one of the following statuses: ${statusList(UPDATABLE)}.`,
      );
    }
    const money = input.amount !== undefined || input.currency !== undefined || input.payment_method !== undefined || input.capture_method !== undefined;
    if (pi.status === 'requires_capture' && money) {
      throw unexpectedState('This PaymentIntent has already been authorized; only metadata, description and similar fields may be updated before capture.');
    }
    if (input.currency !== undefined) pi.currency = this.validateCurrency(input.currency);
    if (input.amount !== undefined) pi.amount = input.amount;
    if (input.amount !== undefined || input.currency !== undefined) this.validateAmount(pi.amount, pi.currency);
    if (input.payment_method_types !== undefined) {
      pi.payment_method_types = input.payment_method_types;
      pi.allowed_payment_method_types = input.payment_method_types as Stripe.PaymentIntent.AllowedPaymentMethodType[];
      pi.automatic_payment_methods = null;
      this.checkAchCapability(origin.scope, pi, pi.payment_method_types);
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
      this.assertTypeAllowed(pi, pm);
      pi.payment_method = pm.id;
      pi.status = 'requires_confirmation';
      pi.next_action = null;
      row.internal.authenticated = false;
    }
    this.save(row);
    return pi;
  }

  confirm(origin: Origin, id: string, input: PaymentIntentConfirmInput, clientSecret?: string): IntentResult {
    const row = this.get(origin.scope, id);
    const pi = row.body;
    if (clientSecret !== undefined && clientSecret !== pi.client_secret) {
      throw invalidRequest('The client_secret provided does not match the client_secret associated with the PaymentIntent.', 'client_secret');
    }
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
      throw unexpectedState(
        "You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a payment method.",
        { payment_intent: pi },
      );
    }
    if (pm.id !== pi.payment_method) row.internal.authenticated = false;
    return this.attempt(origin, row, pm, input.return_url);
  }

  /** One payment attempt with `pm`: the outcome of the instrument decides the next status. */
  private attempt(origin: Origin, row: PaymentIntentRow, pm: PaymentMethodRow, returnUrl: string | undefined): IntentResult {
    const pi = row.body;
    this.assertTypeAllowed(pi, pm);
    if (pm.body.type === 'card_present' || pm.body.type === 'interac_present') {
      throw invalidRequest('card_present PaymentMethods can only be confirmed by a Terminal reader (process_payment_intent).', 'payment_method');
    }
    pi.payment_method = pm.id;
    pi.last_payment_error = null;
    pi.next_action = null;
    if (pm.body.type === 'us_bank_account') {
      this.checkAchCapability(origin.scope, pi, ['us_bank_account']);
      return this.startAch(origin, row, pm);
    }
    const outcome: CardOutcome = row.internal.authenticated ? { kind: 'approve' } : testCard(pm.internal.cardNumber ?? '').outcome;
    if (outcome.kind === 'authenticate') {
      pi.status = 'requires_action';
      const url = `${this.kernel.config.baseUrl}/_sim/3ds/${pi.id}`;
      pi.next_action = { type: 'redirect_to_url', redirect_to_url: { url, return_url: returnUrl ?? null } };
      this.save(row);
      this.kernel.events.emit(origin, 'payment_intent.requires_action', pi);
      return { intent: pi };
    }
    if (outcome.kind === 'decline') return this.decline(origin, row, pm, outcome.decline);
    return this.approve(origin, row, pm, {});
  }

  /** A declined attempt: failed charge, intent back to `requires_payment_method`, 402 answer. */
  decline(origin: Origin, row: PaymentIntentRow, pm: PaymentMethodRow, decline: Decline): IntentResult {
    const pi = row.body;
    const charge = this.charges.build(this.charges.scopeOf(row), pi, pm, pi.amount);
    charge.status = 'failed';
    charge.failure_code = decline.code;
    charge.failure_message = decline.message;
    charge.outcome = {
      advice_code: null,
      network_advice_code: null,
      network_decline_code: null,
      network_status: decline.code === 'processing_error' ? 'not_sent_to_network' : 'declined_by_network',
      reason: decline.declineCode,
      risk_level: 'normal',
      seller_message: decline.code === 'processing_error' ? 'There was an error processing this payment.' : 'The bank did not return any further details with this decline.',
      type: decline.code === 'processing_error' ? 'blocked' : 'issuer_declined',
    };
    this.kernel.store.insert('charge', this.charges.scopeOf(row), charge, {});
    pi.status = 'requires_payment_method';
    pi.latest_charge = charge.id;
    pi.next_action = null;
    pi.processing = null;
    pi.payment_method = null;
    pi.last_payment_error = {
      type: 'card_error',
      charge: charge.id,
      code: decline.code as Stripe.PaymentIntent.LastPaymentError.Code,
      decline_code: decline.declineCode,
      doc_url: `https://stripe.com/docs/error-codes/${decline.code.replace(/_/g, '-')}`,
      message: decline.message,
      payment_method: pm.body as unknown as Stripe.PaymentMethod,
    };
    row.internal.authenticated = false;
    row.internal.timerId = null;
    this.save(row);
    this.kernel.events.emit(origin, 'charge.failed', charge);
    this.kernel.events.emit(origin, 'payment_intent.payment_failed', pi);
    const error = new SimError(402, 'card_error', decline.message, {
      code: decline.code,
      declineCode: decline.declineCode,
      extra: { charge: charge.id, payment_intent: pi, payment_method: pm.body },
    });
    return { intent: pi, error };
  }

  /** An approved authorisation: captured now (automatic) or held for `capture` (manual). */
  approve(origin: Origin, row: PaymentIntentRow, pm: PaymentMethodRow, options: { tip?: number }): IntentResult {
    const pi = row.body;
    if (options.tip) {
      pi.amount += options.tip;
      pi.amount_details = { ...pi.amount_details, tip: { amount: options.tip } };
    }
    const charge = this.charges.build(this.charges.scopeOf(row), pi, pm, pi.amount);
    charge.status = 'succeeded';
    charge.paid = true;
    charge.outcome = {
      advice_code: null,
      network_advice_code: null,
      network_decline_code: null,
      network_status: 'approved_by_network',
      reason: null,
      risk_level: 'normal',
      risk_score: 20,
      seller_message: 'Payment complete.',
      type: 'authorized',
    };
    if (row.internal.authenticated && charge.payment_method_details?.card) {
      charge.payment_method_details.card.three_d_secure = {
        authentication_flow: 'challenge',
        electronic_commerce_indicator: '05',
        result: 'authenticated',
        result_reason: null,
        transaction_id: newId('3ds').slice(4),
        version: '2.2.0',
      } as Stripe.Charge.PaymentMethodDetails.Card.ThreeDSecure;
    }
    const chargeRow = this.kernel.store.insert<Stripe.Charge, Record<string, never>>('charge', this.charges.scopeOf(row), charge, {});
    pi.latest_charge = charge.id;
    pi.payment_method = pm.id;
    pi.next_action = null;
    pi.processing = null;
    pi.last_payment_error = null;
    row.internal.timerId = null;
    if (pi.capture_method === 'manual') {
      pi.status = 'requires_capture';
      pi.amount_capturable = pi.amount;
      this.kernel.store.save(chargeRow);
      this.save(row);
      this.kernel.events.emit(origin, 'charge.succeeded', chargeRow.body);
      this.kernel.events.emit(origin, 'payment_intent.amount_capturable_updated', pi);
      return { intent: pi };
    }
    this.capturePayment(origin, row, chargeRow, pi.amount);
    this.kernel.events.emit(origin, 'charge.succeeded', chargeRow.body);
    this.kernel.events.emit(origin, 'payment_intent.succeeded', pi);
    return { intent: pi };
  }

  /** Captures `amount`: the charge moves the money, the intent records it. */
  private capturePayment(origin: Origin, row: PaymentIntentRow, chargeRow: ChargeRow, amount: number): void {
    this.charges.capture(origin, row, chargeRow, amount);
    const pi = row.body;
    pi.status = 'succeeded';
    pi.amount_received = amount;
    pi.amount_capturable = 0;
    this.save(row);
  }

  capture(origin: Origin, id: string, input: CaptureInput): Stripe.PaymentIntent {
    const row = this.get(origin.scope, id);
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
    this.capturePayment(origin, row, chargeRow, amount);
    this.kernel.events.emit(origin, 'charge.captured', chargeRow.body);
    if (amount < chargeRow.body.amount) this.kernel.events.emit(origin, 'charge.refunded', chargeRow.body);
    this.kernel.events.emit(origin, 'payment_intent.succeeded', pi);
    return pi;
  }

  cancel(origin: Origin, id: string, reason: Stripe.PaymentIntent.CancellationReason | undefined): Stripe.PaymentIntent {
    const row = this.get(origin.scope, id);
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
    pi.canceled_at = this.now();
    pi.cancellation_reason = reason ?? null;
    pi.next_action = null;
    pi.amount_capturable = 0;
    row.internal.readerId = null;
    this.save(row);
    this.kernel.events.emit(origin, 'payment_intent.canceled', pi);
    return pi;
  }

  /** ACH debit: `processing` now, settled by a persisted timer after the settlement delay. */
  private startAch(origin: Origin, row: PaymentIntentRow, pm: PaymentMethodRow): IntentResult {
    const pi = row.body;
    const charge = this.charges.build(this.charges.scopeOf(row), pi, pm, pi.amount);
    charge.status = 'pending';
    charge.outcome = {
      advice_code: null,
      network_advice_code: null,
      network_decline_code: null,
      network_status: 'approved_by_network',
      reason: null,
      risk_level: 'not_assessed',
      seller_message: 'Payment complete.',
      type: 'authorized',
    };
    this.kernel.store.insert('charge', this.charges.scopeOf(row), charge, {});
    pi.status = 'processing';
    pi.latest_charge = charge.id;
    pi.payment_method = pm.id;
    row.internal.timerId = this.kernel.timers.schedule('ach_settlement', this.kernel.now() + this.kernel.config.achSettlementDelayMs, {
      paymentIntent: pi.id,
      apiVersion: origin.apiVersion,
    });
    this.save(row);
    this.kernel.events.emit(origin, 'charge.pending', charge);
    this.kernel.events.emit(origin, 'payment_intent.processing', pi);
    return { intent: pi };
  }

  /** Timer: the ACH debit settles (or is returned by the bank). */
  settleAch(payload: { paymentIntent: string; apiVersion: string }): void {
    const row = this.getAny(payload.paymentIntent);
    const pi = row.body;
    if (pi.status !== 'processing' || typeof pi.latest_charge !== 'string') return;
    const origin = systemOrigin({ livemode: row.livemode, account: row.account }, payload.apiVersion);
    const chargeRow = this.charges.get(origin.scope, pi.latest_charge);
    const pm = this.kernel.store.find<PaymentMethodBody, { accountNumber?: string }>(String(pi.payment_method));
    const result = achOutcome(pm?.internal.accountNumber ?? '');
    row.internal.timerId = null;
    if (result.succeeds) {
      this.capturePayment(origin, row, chargeRow, chargeRow.body.amount);
      this.kernel.events.emit(origin, 'charge.succeeded', chargeRow.body);
      this.kernel.events.emit(origin, 'payment_intent.succeeded', pi);
      return;
    }
    const charge = chargeRow.body;
    charge.status = 'failed';
    charge.failure_code = result.code ?? 'payment_method_provider_decline';
    charge.failure_message = result.message ?? 'The payment was declined.';
    this.kernel.store.save(chargeRow);
    pi.status = 'requires_payment_method';
    pi.payment_method = null;
    pi.last_payment_error = {
      type: 'invalid_request_error',
      charge: charge.id,
      code: charge.failure_code as Stripe.PaymentIntent.LastPaymentError.Code,
      message: charge.failure_message,
      payment_method: pm?.body as unknown as Stripe.PaymentMethod,
      payment_method_type: 'us_bank_account',
    };
    this.save(row);
    this.kernel.events.emit(origin, 'charge.failed', charge);
    this.kernel.events.emit(origin, 'payment_intent.payment_failed', pi);
  }

  /** 3DS challenge outcome, from the simulator's challenge page or the control API. */
  finishAuthentication(origin: Origin, id: string, succeeded: boolean): Stripe.PaymentIntent {
    const row = this.getAny(id);
    const pi = row.body;
    if (pi.status !== 'requires_action' || pi.next_action?.type !== 'redirect_to_url') {
      throw unexpectedState(`This PaymentIntent has no pending authentication (status ${pi.status}).`, { payment_intent: pi });
    }
    const scoped: Origin = { ...origin, scope: { livemode: row.livemode, account: row.account } };
    const pm = this.paymentMethods.resolve(scoped, String(pi.payment_method), 'payment_method');
    if (succeeded) {
      row.internal.authenticated = true;
      return this.attempt(scoped, row, pm, pi.next_action.redirect_to_url?.return_url ?? undefined).intent;
    }
    pi.status = 'requires_payment_method';
    pi.next_action = null;
    pi.payment_method = null;
    pi.last_payment_error = {
      type: 'invalid_request_error',
      code: 'payment_intent_authentication_failure',
      doc_url: 'https://stripe.com/docs/error-codes/payment-intent-authentication-failure',
      message:
        'The provided PaymentMethod has failed authentication. You can provide payment_method_data or a new PaymentMethod to attempt to fulfill this PaymentIntent again.',
      payment_method: pm.body as unknown as Stripe.PaymentMethod,
    };
    row.internal.authenticated = false;
    this.save(row);
    this.kernel.events.emit(scoped, 'payment_intent.payment_failed', pi);
    return pi;
  }

  /** Persists an intent changed by another service (the terminal). */
  store(row: PaymentIntentRow): void {
    this.save(row);
  }
}
