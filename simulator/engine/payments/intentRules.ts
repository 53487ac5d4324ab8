import type Stripe from 'stripe';
import { type SimError, invalidRequest, unexpectedState } from '../../errors.js';
import type { Scope } from '../../store.js';
import { type Kernel, getAny, getScoped } from '../kernel.js';
import { ACH_CAPABILITY } from '../connect/accountTypes.js';
import { capabilityStatus } from '../connect/capabilityState.js';
import type { PaymentMethodRow } from './paymentMethods.js';
import type { AccountChecks, PaymentIntentInternal, PaymentIntentRow } from './types.js';

/** The checks every PaymentIntent operation shares: finding the intent, its amount, currency and payment method type. */

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

/**
 * The presentment currencies of Stripe's local payment methods that take one or two (Stripe's
 * payment method pages). The simulator models none of them, but a request in another currency is
 * refused first, for that reason, as Stripe refuses it.
 */
const LOCAL_METHOD_CURRENCIES: Record<string, string[]> = {
  p24: ['eur', 'pln'],
  blik: ['pln'],
  ideal: ['eur'],
  bancontact: ['eur'],
  eps: ['eur'],
  giropay: ['eur'],
  sofort: ['eur'],
};

/** Refuses a local payment method in a currency it cannot be presented in, in Stripe's words. */
export function assertMethodCurrency(type: string | undefined, currency: string): void {
  const currencies = type === undefined ? undefined : LOCAL_METHOD_CURRENCIES[type];
  if (!currencies || currencies.includes(currency)) return;
  throw invalidRequest(`The currency provided (${currency}) is invalid. Payments with ${type} support the following currencies: ${currencies.join(', ')}.`, 'currency');
}

export const CANCELABLE: Stripe.PaymentIntent.Status[] = ['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action'];
export const CONFIRMABLE: Stripe.PaymentIntent.Status[] = ['requires_payment_method', 'requires_confirmation', 'requires_action'];
/** Before confirmation: what the payment is, how it is paid and captured. */
const BEFORE_CONFIRMATION: Stripe.PaymentIntent.Status[] = ['requires_payment_method', 'requires_confirmation', 'requires_action'];
/** Until the money moved: what the platform keeps and how the transfer is grouped can still change at capture. */
const BEFORE_CAPTURE: Stripe.PaymentIntent.Status[] = [...BEFORE_CONFIRMATION, 'requires_capture'];

/**
 * Stripe refuses an update per parameter, by the intent's status: metadata, description and the
 * receipt email are always updatable (succeeded and canceled intents included); the amount, the
 * payment method and everything that shapes the authorisation only before confirmation; the
 * application fee and transfer group until capture. Parameters not listed here are always allowed.
 */
const UPDATABLE_IN: Record<string, Stripe.PaymentIntent.Status[]> = {
  amount: BEFORE_CONFIRMATION,
  currency: BEFORE_CONFIRMATION,
  payment_method: BEFORE_CONFIRMATION,
  payment_method_types: BEFORE_CONFIRMATION,
  capture_method: BEFORE_CONFIRMATION,
  setup_future_usage: BEFORE_CONFIRMATION,
  statement_descriptor: BEFORE_CONFIRMATION,
  statement_descriptor_suffix: BEFORE_CONFIRMATION,
  application_fee_amount: BEFORE_CAPTURE,
  transfer_group: BEFORE_CAPTURE,
};

/** The first parameter of `input` the intent's status does not allow to change, refused in Stripe's words. */
export function assertUpdatable(pi: Stripe.PaymentIntent, input: object): void {
  for (const [param, value] of Object.entries(input)) {
    const allowed = Object.hasOwn(UPDATABLE_IN, param) ? UPDATABLE_IN[param] : undefined;
    if (value === undefined || !allowed || allowed.includes(pi.status)) continue;
    throw unexpectedState(
      `This PaymentIntent's ${param} could not be updated because it has a status of ${pi.status}. You may only update the ${param} of a PaymentIntent with one of the following statuses: ${statusList(allowed)}.`,
      { payment_intent: pi },
    );
  }
}

const ZERO_DECIMAL = new Set(['jpy', 'krw', 'vnd', 'clp', 'pyg', 'xof', 'xaf', 'ugx', 'rwf', 'kmf', 'gnf', 'djf', 'bif', 'mga', 'vuv', 'xpf']);

/** Stripe's own wording of an amount in its limit messages ("$0.50 usd"), which clients may match on. */
function stripeAmount(amount: number, currency: string): string {
  const symbol: Record<string, string> = { usd: '$', eur: '€', gbp: '£', cad: '$', aud: '$', jpy: '¥' };
  const value = ZERO_DECIMAL.has(currency) ? String(amount) : (amount / 100).toFixed(2);
  return `${symbol[currency] ?? ''}${value} ${currency}`;
}

export function statusList(statuses: readonly string[]): string {
  return statuses.join(', ');
}

export function getIntent(kernel: Kernel, scope: Scope, id: string): PaymentIntentRow {
  return getScoped<Stripe.PaymentIntent, PaymentIntentInternal>(kernel, 'payment_intent', scope, id, 'payment_intent', 'intent');
}

/** An intent by id whatever its scope: timers and the control API act by id. */
export function getAnyIntent(kernel: Kernel, id: string): PaymentIntentRow {
  return getAny<Stripe.PaymentIntent, PaymentIntentInternal>(kernel, 'payment_intent', id, 'payment_intent');
}

export function validateAmount(amount: number, currency: string, param = 'amount'): void {
  const minimum = (Object.hasOwn(MINIMUM_AMOUNT, currency) ? MINIMUM_AMOUNT[currency] : undefined) ?? DEFAULT_MINIMUM_AMOUNT;
  if (amount < minimum) {
    throw invalidRequest(`Amount must be at least ${stripeAmount(minimum, currency)}`, param, 'amount_too_small');
  }
  if (amount > MAXIMUM_AMOUNT) {
    throw invalidRequest(`Amount must be no more than ${stripeAmount(MAXIMUM_AMOUNT, currency)}`, param, 'amount_too_large');
  }
}

export function validateCurrency(currency: string): string {
  const lower = currency.toLowerCase();
  if (!/^[a-z]{3}$/.test(lower)) throw invalidRequest(`Invalid currency: ${currency}.`, 'currency', 'parameter_invalid');
  return lower;
}

export function assertClientSecret(pi: Stripe.PaymentIntent, clientSecret: string | undefined): void {
  if (clientSecret !== undefined && clientSecret !== pi.client_secret) {
    throw invalidRequest('The client_secret provided does not match the client_secret associated with the PaymentIntent.', 'client_secret');
  }
}

export function missingPaymentMethod(pi?: Stripe.PaymentIntent): SimError {
  return unexpectedState(
    "You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a payment method.",
    pi ? { payment_intent: pi } : undefined,
  );
}

export function assertTypeAllowed(pi: Stripe.PaymentIntent, pm: PaymentMethodRow): void {
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

/**
 * Live mode only: a destination (or on-behalf-of) account must hold an active ACH capability before
 * an intent can debit a bank account for it. Test mode does not check, as on Stripe.
 */
export function checkAchCapability(accounts: AccountChecks, scope: Scope, pi: Stripe.PaymentIntent, types: string[]): void {
  if (!scope.livemode || !types.includes('us_bank_account')) return;
  const candidates = [typeof pi.transfer_data?.destination === 'string' ? pi.transfer_data.destination : null, typeof pi.on_behalf_of === 'string' ? pi.on_behalf_of : null, scope.account];
  for (const accountId of candidates) {
    if (!accountId) continue;
    const account = accounts.findConnected(scope.livemode, accountId);
    if (account && capabilityStatus(account, ACH_CAPABILITY) !== 'active') {
      throw invalidRequest(
        `The payment method type \`us_bank_account\` cannot be used because the account ${accountId} does not have the \`${ACH_CAPABILITY}\` capability active. Request the capability and wait for it to become active.`,
        'payment_method_types',
        'payment_method_unactivated',
      );
    }
  }
}
