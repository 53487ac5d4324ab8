import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import { SimError, invalidRequest, missingParam, resourceMissing } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getScoped, unixSeconds } from '../kernel.js';
import { emptyBillingDetails, type Metadata, mergeMetadata } from '../shapes.js';
import { ACH_TEST_ROUTING, achTokenAccount, cardTokenNumber, fingerprint, luhnValid, testCard } from './instruments.js';

/**
 * PaymentMethods: Stripe's test tokens, cards and bank accounts given as `payment_method_data`, and
 * the card-present methods a reader creates. Every object carries the top-level `card` key (null for
 * other types) so clients can read `pm.card?.brand` whatever the type.
 */

export type PaymentMethodBody = Omit<Stripe.PaymentMethod, 'card'> & { card: Stripe.PaymentMethod.Card | null };

/** What the simulator needs to decide an outcome; never on the wire. */
export interface PaymentMethodInternal {
  cardNumber?: string;
  accountNumber?: string;
}

export type PaymentMethodRow = StoredObject<PaymentMethodBody, PaymentMethodInternal>;

export interface CardInput {
  token?: string | undefined;
  number?: string | undefined;
  exp_month?: number | undefined;
  exp_year?: number | undefined;
  cvc?: string | undefined;
}

export interface BankAccountInput {
  account_number?: string | undefined;
  routing_number?: string | undefined;
  account_holder_type?: 'individual' | 'company' | undefined;
  account_type?: 'checking' | 'savings' | undefined;
}

export interface BillingDetailsInput {
  name?: string | undefined;
  email?: string | undefined;
  phone?: string | undefined;
  address?: Record<string, string | undefined> | undefined;
}

export interface PaymentMethodDataInput {
  type: string;
  card?: CardInput | undefined;
  us_bank_account?: BankAccountInput | undefined;
  billing_details?: BillingDetailsInput | undefined;
  metadata?: Metadata | '' | undefined;
}

/** Test tokens are valid for years; Stripe shows an expiry a few years ahead. */
const TOKEN_EXPIRY_YEARS_AHEAD = 3;

function cardError(code: string, message: string, param: string): SimError {
  return new SimError(402, 'card_error', message, { code, param });
}

function billingDetails(input: BillingDetailsInput | undefined): Stripe.PaymentMethod.BillingDetails {
  const details = emptyBillingDetails();
  if (!input) return details;
  details.name = input.name ?? null;
  details.email = input.email ?? null;
  details.phone = input.phone ?? null;
  if (input.address) {
    for (const key of ['city', 'country', 'line1', 'line2', 'postal_code', 'state'] as const) {
      details.address![key] = input.address[key] ?? null;
    }
  }
  return details;
}

export function cardDetails(number: string, expMonth: number, expYear: number, cvcChecked: boolean): Stripe.PaymentMethod.Card {
  const card = testCard(number);
  return {
    brand: card.brand,
    checks: { address_line1_check: null, address_postal_code_check: null, cvc_check: cvcChecked ? 'pass' : null },
    country: 'US',
    display_brand: card.brand,
    exp_month: expMonth,
    exp_year: expYear,
    fingerprint: fingerprint(number),
    funding: card.funding,
    generated_from: null,
    last4: number.slice(-4),
    networks: { available: [card.brand], preferred: null },
    regulated_status: 'unregulated',
    three_d_secure_usage: { supported: true },
    wallet: null,
  };
}

export class PaymentMethods {
  constructor(private readonly kernel: Kernel) {}

  private base(scope: Scope, type: Stripe.PaymentMethod.Type, billing: BillingDetailsInput | undefined, metadata: Metadata | '' | undefined): PaymentMethodBody {
    return {
      id: newId('pm'),
      object: 'payment_method',
      allow_redisplay: 'unspecified',
      billing_details: billingDetails(billing),
      card: null,
      created: unixSeconds(this.kernel.now()),
      customer: null,
      customer_account: null,
      livemode: scope.livemode,
      metadata: mergeMetadata({}, metadata),
      type,
    };
  }

  private tokenExpiry(): { month: number; year: number } {
    const now = new Date(this.kernel.now());
    return { month: now.getUTCMonth() + 1, year: now.getUTCFullYear() + TOKEN_EXPIRY_YEARS_AHEAD };
  }

  /** A fresh object for a test token: Stripe mints a new `pm_…` each time a token is used. */
  private fromToken(scope: Scope, token: string): { body: PaymentMethodBody; internal: PaymentMethodInternal } | undefined {
    const number = cardTokenNumber(token);
    if (number) {
      const { month, year } = this.tokenExpiry();
      const body = this.base(scope, 'card', undefined, undefined);
      body.card = cardDetails(number, month, year, true);
      return { body, internal: { cardNumber: number } };
    }
    const account = achTokenAccount(token);
    if (account) {
      const body = this.base(scope, 'us_bank_account', { name: 'Jenny Rosen' }, undefined);
      body.us_bank_account = this.bankDetails({ account_number: account, routing_number: ACH_TEST_ROUTING });
      return { body, internal: { accountNumber: account } };
    }
    return undefined;
  }

  private bankDetails(input: BankAccountInput): Stripe.PaymentMethod.UsBankAccount {
    const account = input.account_number ?? '';
    return {
      account_holder_type: input.account_holder_type ?? 'individual',
      account_type: input.account_type ?? 'checking',
      bank_name: 'STRIPE TEST BANK',
      financial_connections_account: null,
      fingerprint: fingerprint(`${input.routing_number}:${account}`),
      last4: account.slice(-4),
      networks: { preferred: 'ach', supported: ['ach'] },
      routing_number: input.routing_number ?? null,
      status_details: null,
    };
  }

  /** The object behind `payment_method` on an intent: a token minted now, or an existing `pm_…`. */
  resolve(origin: Origin, id: string, param: string): PaymentMethodRow {
    const minted = this.fromToken(origin.scope, id);
    if (minted) return this.kernel.store.insert('payment_method', origin.scope, minted.body, minted.internal);
    const found = this.kernel.store.find<PaymentMethodBody, PaymentMethodInternal>(id);
    if (found && found.type === 'payment_method' && found.livemode === origin.scope.livemode && found.account === origin.scope.account) return found;
    throw resourceMissing('PaymentMethod', id, param, found && found.type === 'payment_method' && found.account === origin.scope.account ? { livemode: found.livemode } : undefined);
  }

  retrieve(scope: Scope, id: string): PaymentMethodBody {
    const minted = this.fromToken(scope, id);
    if (minted) return { ...minted.body, id };
    return getScoped<PaymentMethodBody, PaymentMethodInternal>(this.kernel, 'payment_method', scope, id, 'PaymentMethod', 'payment_method').body;
  }

  /** `payment_method_data[…]` on an intent, or `POST /v1/payment_methods`; `prefix` names the params in errors. */
  create(origin: Origin, data: PaymentMethodDataInput, prefix: string): PaymentMethodRow {
    const p = (name: string): string => (prefix ? `${prefix}[${name}]` : name);
    if (data.type === 'card' && data.card?.token !== undefined) {
      // `card[token]`: a card token (`tok_visa`, …) becomes the PaymentMethod's card.
      const token = data.card.token;
      const number = cardTokenNumber(token.replace(/^tok_/, 'pm_card_'));
      if (!number) throw resourceMissing('token', token, `${p('card')}[token]`);
      const { month, year } = this.tokenExpiry();
      const body = this.base(origin.scope, 'card', data.billing_details, data.metadata);
      body.card = cardDetails(number, month, year, true);
      return this.kernel.store.insert('payment_method', origin.scope, body, { cardNumber: number });
    }
    if (data.type === 'card') {
      const card = data.card;
      if (!card?.number) throw missingParam(`${p('card')}[number]`);
      const number = card.number.replace(/[\s-]/g, '');
      if (!/^\d{12,19}$/.test(number)) throw cardError('invalid_number', 'Your card number is invalid.', `${p('card')}[number]`);
      if (!luhnValid(number)) throw cardError('incorrect_number', 'Your card number is incorrect.', `${p('card')}[number]`);
      if (card.exp_month === undefined) throw missingParam(`${p('card')}[exp_month]`);
      if (card.exp_year === undefined) throw missingParam(`${p('card')}[exp_year]`);
      if (card.exp_month < 1 || card.exp_month > 12) {
        throw cardError('invalid_expiry_month', "Your card's expiration month is invalid.", `${p('card')}[exp_month]`);
      }
      const year = card.exp_year < 100 ? 2000 + card.exp_year : card.exp_year;
      const now = new Date(this.kernel.now());
      const expired = year < now.getUTCFullYear() || (year === now.getUTCFullYear() && card.exp_month < now.getUTCMonth() + 1);
      if (expired) throw cardError('invalid_expiry_year', "Your card's expiration year is invalid.", `${p('card')}[exp_year]`);
      if (card.cvc !== undefined && !/^\d{3,4}$/.test(card.cvc)) {
        throw cardError('invalid_cvc', "Your card's security code is invalid.", `${p('card')}[cvc]`);
      }
      const body = this.base(origin.scope, 'card', data.billing_details, data.metadata);
      body.card = cardDetails(number, card.exp_month, year, card.cvc !== undefined);
      return this.kernel.store.insert('payment_method', origin.scope, body, { cardNumber: number });
    }
    if (data.type === 'us_bank_account') {
      const bank = data.us_bank_account;
      if (!bank?.account_number) throw missingParam(`${p('us_bank_account')}[account_number]`);
      if (!bank.routing_number) throw missingParam(`${p('us_bank_account')}[routing_number]`);
      if (!/^\d{9}$/.test(bank.routing_number)) {
        throw invalidRequest('Invalid routing number.', `${p('us_bank_account')}[routing_number]`, 'routing_number_invalid');
      }
      if (!/^\d{4,17}$/.test(bank.account_number)) {
        throw invalidRequest('Invalid account number.', `${p('us_bank_account')}[account_number]`, 'account_number_invalid');
      }
      if (!data.billing_details?.name) throw missingParam(`${p('billing_details')}[name]`);
      const body = this.base(origin.scope, 'us_bank_account', data.billing_details, data.metadata);
      body.us_bank_account = this.bankDetails(bank);
      return this.kernel.store.insert('payment_method', origin.scope, body, { accountNumber: bank.account_number });
    }
    if (data.type === 'customer_balance') {
      // Paid from the customer's cash balance: no details of its own (cashBalancePayments.ts).
      const body = this.base(origin.scope, 'customer_balance', data.billing_details, data.metadata);
      body.customer_balance = {};
      return this.kernel.store.insert('payment_method', origin.scope, body, {});
    }
    throw invalidRequest(`The payment method type \`${data.type}\` is not supported by the simulator.`, p('type'), 'parameter_invalid');
  }

  /** The card-present method a reader creates when a card is tapped or inserted. */
  createCardPresent(scope: Scope, number: string, interac: boolean): PaymentMethodRow {
    const card = testCard(number);
    const { month, year } = this.tokenExpiry();
    const body = this.base(scope, interac ? 'interac_present' : 'card_present', undefined, undefined);
    const details = {
      brand: interac ? 'interac' : card.brand,
      brand_product: null,
      cardholder_name: null,
      country: interac ? 'CA' : 'US',
      exp_month: month,
      exp_year: year,
      fingerprint: fingerprint(number),
      funding: card.funding,
      last4: number.slice(-4),
      networks: { available: [interac ? 'interac' : card.brand], preferred: null },
      offline: null,
      preferred_locales: ['en'],
      read_method: 'contactless_emv' as const,
    };
    if (interac) body.interac_present = details as Stripe.PaymentMethod.InteracPresent;
    else body.card_present = details;
    return this.kernel.store.insert('payment_method', scope, body, { cardNumber: number });
  }
}
