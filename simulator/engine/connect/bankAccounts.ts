import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import { invalidRequest, missingParam } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getScoped } from '../kernel.js';
import { list, type ListEnvelope, type Metadata, mergeMetadata } from '../shapes.js';
import { ACH_TEST_ROUTING, bankTokenAccount, cardTokenNumber, fingerprint, testCard } from '../payments/instruments.js';

/**
 * Connected accounts' external accounts: bank accounts, where payouts go, and debit cards. They
 * live on the connected account (`account` scope) and are mirrored in the account's
 * `external_accounts` list. A bank account whose payout failed is `errored`, as on Stripe:
 * automatic payouts skip it until another is added. A debit card (`tok_visa_debit`, …) is kept,
 * listed, updated and deleted as on Stripe, but payouts go to bank accounts only: instant payouts,
 * the ones a card receives, are not modelled.
 */

export interface BankAccountInternal {
  accountNumber: string;
}

export type BankAccountRow = StoredObject<Stripe.BankAccount, BankAccountInternal>;
type CardRow = StoredObject<Stripe.Card, unknown>;

/** A Card object names its brand as Stripe prints it (a PaymentMethod's card uses the lowercase code). */
const CARD_BRAND: Record<string, string> = {
  visa: 'Visa', mastercard: 'MasterCard', amex: 'American Express', discover: 'Discover', diners: 'Diners Club', jcb: 'JCB', unionpay: 'UnionPay',
};

/** The store type of a connected account's debit card (a customer's saved card is another object). */
const EXTERNAL_CARD = 'external_card';

export interface BankAccountHashInput {
  object?: string | undefined;
  account_number?: string | undefined;
  routing_number?: string | undefined;
  country?: string | undefined;
  currency?: string | undefined;
  account_holder_name?: string | undefined;
  account_holder_type?: 'individual' | 'company' | undefined;
}

export interface ExternalAccountInput {
  external_account: string | BankAccountHashInput;
  default_for_currency?: boolean | undefined;
  metadata?: Metadata | '' | undefined;
}

export interface BankAccountUpdateInput {
  account_holder_name?: string | undefined;
  /** A card's holder name. */
  name?: string | undefined;
  account_holder_type?: 'individual' | 'company' | undefined;
  default_for_currency?: boolean | undefined;
  metadata?: Metadata | '' | undefined;
}

function accountScope(livemode: boolean, account: string): Scope {
  return { livemode, account };
}

export class BankAccounts {
  constructor(private readonly kernel: Kernel) {}

  /** `POST /v1/accounts/:id/external_accounts`: a `btok_…` or debit card `tok_…` test token, or a bank account hash. */
  create(origin: Origin, account: string, input: ExternalAccountInput): Stripe.BankAccount | Stripe.Card {
    const cardNumber = typeof input.external_account === 'string' ? cardTokenNumber(input.external_account.replace(/^tok_/, 'pm_card_')) : undefined;
    if (cardNumber) return this.createCard(origin, account, cardNumber, input);
    let details: BankAccountHashInput;
    if (typeof input.external_account === 'string') {
      const number = bankTokenAccount(input.external_account);
      if (!number) throw invalidRequest(`No such token: '${input.external_account}'`, 'external_account', 'resource_missing');
      details = { account_number: number, routing_number: ACH_TEST_ROUTING, country: 'US', currency: 'usd' };
    } else {
      details = input.external_account;
      if (details.object !== 'bank_account') {
        throw invalidRequest('The simulator supports bank accounts only: external_account[object] must be bank_account.', 'external_account[object]', 'parameter_invalid');
      }
      if (!details.account_number) throw missingParam('external_account[account_number]');
      if (!details.country) throw missingParam('external_account[country]');
      if (details.country.toUpperCase() === 'US') {
        if (!details.routing_number) throw missingParam('external_account[routing_number]');
        if (!/^\d{9}$/.test(details.routing_number)) throw invalidRequest('Invalid routing number.', 'external_account[routing_number]', 'routing_number_invalid');
        if (!/^\d{4,17}$/.test(details.account_number)) throw invalidRequest('Invalid account number.', 'external_account[account_number]', 'account_number_invalid');
      } else {
        // Elsewhere an IBAN, or a local account number with its bank/branch code (sort code, BSB, transit number).
        if (details.routing_number !== undefined && !/^[0-9-]{3,12}$/.test(details.routing_number)) {
          throw invalidRequest('Invalid routing number.', 'external_account[routing_number]', 'routing_number_invalid');
        }
        if (!/^[A-Za-z0-9]{4,34}$/.test(details.account_number)) throw invalidRequest('Invalid account number.', 'external_account[account_number]', 'account_number_invalid');
      }
    }
    const livemode = origin.scope.livemode;
    const currency = (details.currency ?? 'usd').toLowerCase();
    const hasDefault = this.all(livemode, account).some((row) => row.body.currency === currency && row.body.default_for_currency);
    const body = this.insert(livemode, account, { ...details, currency }, input.default_for_currency === true || !hasDefault, input.metadata);
    this.kernel.events.emit({ ...origin, scope: accountScope(livemode, account) }, 'account.external_account.created', body);
    return body;
  }

  private insert(livemode: boolean, account: string, details: BankAccountHashInput, makeDefault: boolean, metadata: Metadata | '' | undefined): Stripe.BankAccount {
    const number = details.account_number ?? '';
    const currency = (details.currency ?? 'usd').toLowerCase();
    if (makeDefault) {
      for (const row of this.all(livemode, account)) {
        if (row.body.currency !== currency || !row.body.default_for_currency) continue;
        row.body.default_for_currency = false;
        this.kernel.store.save(row);
      }
    }
    const body: Stripe.BankAccount = {
      id: newId('ba'),
      object: 'bank_account',
      account,
      account_holder_name: details.account_holder_name ?? null,
      account_holder_type: details.account_holder_type ?? null,
      account_type: null,
      available_payout_methods: ['standard'],
      bank_name: details.routing_number === ACH_TEST_ROUTING ? 'STRIPE TEST BANK' : null,
      country: (details.country ?? 'US').toUpperCase(),
      currency,
      default_for_currency: makeDefault,
      fingerprint: fingerprint(`${details.routing_number}:${number}`),
      last4: number.slice(-4),
      metadata: mergeMetadata({}, metadata),
      routing_number: details.routing_number ?? null,
      status: 'new',
    };
    this.kernel.store.insert<Stripe.BankAccount, BankAccountInternal>('bank_account', accountScope(livemode, account), body, { accountNumber: number });
    this.sync(livemode, account);
    return body;
  }

  /** As on Stripe, only a debit card can receive payouts, so only a debit card is an external account. */
  private createCard(origin: Origin, account: string, number: string, input: ExternalAccountInput): Stripe.Card {
    const card = testCard(number);
    if (card.funding !== 'debit') throw invalidRequest("This card doesn't appear to be a debit card.", 'external_account', 'invalid_card_type');
    const livemode = origin.scope.livemode;
    const hasDefault = this.all(livemode, account).some((row) => row.body.currency === 'usd' && row.body.default_for_currency);
    const expiry = new Date(this.kernel.now());
    const body = {
      id: newId('card'), object: 'card', account, address_city: null, address_country: null, address_line1: null, address_line1_check: null,
      address_line2: null, address_state: null, address_zip: null, address_zip_check: null, available_payout_methods: ['standard', 'instant'],
      brand: CARD_BRAND[card.brand] ?? 'Unknown', country: 'US', currency: 'usd', cvc_check: 'pass', default_for_currency: input.default_for_currency === true || !hasDefault,
      dynamic_last4: null, exp_month: expiry.getUTCMonth() + 1, exp_year: expiry.getUTCFullYear() + 3, fingerprint: fingerprint(number),
      funding: 'debit', last4: number.slice(-4), metadata: mergeMetadata({}, input.metadata), name: null, status: 'new', tokenization_method: null,
      wallet: null,
    } as unknown as Stripe.Card;
    this.kernel.store.insert<Stripe.Card, unknown>(EXTERNAL_CARD, accountScope(livemode, account), body, {});
    this.sync(livemode, account);
    this.kernel.events.emit({ ...origin, scope: accountScope(livemode, account) }, 'account.external_account.created', body);
    return body;
  }

  private cards(livemode: boolean, account: string): CardRow[] {
    return this.kernel.store.list<Stripe.Card, unknown>(EXTERNAL_CARD, accountScope(livemode, account), {}, { limit: 100 }).data.reverse();
  }

  private card(livemode: boolean, account: string, id: string): CardRow {
    return getScoped<Stripe.Card, unknown>(this.kernel, EXTERNAL_CARD, accountScope(livemode, account), id, 'external account', 'id');
  }

  /** `GET /v1/accounts/:id/external_accounts/:id`: a bank account or a debit card. */
  retrieveExternal(livemode: boolean, account: string, id: string): Stripe.BankAccount | Stripe.Card {
    return id.startsWith('card_') ? this.card(livemode, account, id).body : this.retrieve(livemode, account, id);
  }

  /** Both kinds, newest first, or one kind (`object`). */
  listExternal(livemode: boolean, account: string, object?: 'bank_account' | 'card'): ListEnvelope<Stripe.BankAccount | Stripe.Card> {
    const banks = object === 'card' ? [] : this.all(livemode, account).map((row) => ({ body: row.body as Stripe.BankAccount | Stripe.Card, seq: row.seq }));
    const cards = object === 'bank_account' ? [] : this.cards(livemode, account).map((row) => ({ body: row.body as Stripe.BankAccount | Stripe.Card, seq: row.seq }));
    // Store order is creation order, across both kinds.
    const newestFirst = [...banks, ...cards].sort((a, b) => b.seq - a.seq).map((entry) => entry.body);
    return list(`/v1/accounts/${account}/external_accounts`, newestFirst);
  }

  get(livemode: boolean, account: string, id: string): BankAccountRow {
    return getScoped<Stripe.BankAccount, BankAccountInternal>(this.kernel, 'bank_account', accountScope(livemode, account), id, 'external account', 'destination');
  }

  retrieve(livemode: boolean, account: string, id: string): Stripe.BankAccount {
    return this.get(livemode, account, id).body;
  }

  /** Every bank account of a connected account, oldest first (a handful at most). */
  all(livemode: boolean, account: string): BankAccountRow[] {
    const page = this.kernel.store.list<Stripe.BankAccount, BankAccountInternal>('bank_account', accountScope(livemode, account), {}, { limit: 100 });
    return page.data.reverse();
  }

  list(livemode: boolean, account: string): ListEnvelope<Stripe.BankAccount> {
    return list(`/v1/accounts/${account}/external_accounts`, this.all(livemode, account).reverse().map((row) => row.body));
  }

  /** The account payouts in `currency` go to when none is named. */
  defaultFor(livemode: boolean, account: string, currency: string): BankAccountRow | undefined {
    return this.all(livemode, account).find((row) => row.body.currency === currency && row.body.default_for_currency);
  }

  /** `POST /v1/accounts/:id/external_accounts/:card`: its holder's name, metadata, or make it the default. */
  private updateCard(origin: Origin, account: string, id: string, input: BankAccountUpdateInput): Stripe.Card {
    const row = this.card(origin.scope.livemode, account, id);
    if (input.account_holder_name !== undefined || input.account_holder_type !== undefined) {
      throw invalidRequest('Received unknown parameter: account_holder_name (a card has a `name`)', input.account_holder_name !== undefined ? 'account_holder_name' : 'account_holder_type', 'parameter_unknown');
    }
    if (input.default_for_currency === true) this.clearDefault(row.livemode, account, row.body.currency ?? 'usd', row.id);
    if (input.default_for_currency === true) row.body.default_for_currency = true;
    if (input.name !== undefined) row.body.name = input.name;
    row.body.metadata = mergeMetadata(row.body.metadata ?? {}, input.metadata);
    this.kernel.store.save(row);
    this.sync(row.livemode, account);
    this.kernel.events.emit({ ...origin, scope: accountScope(row.livemode, account) }, 'account.external_account.updated', row.body);
    return row.body;
  }

  private clearDefault(livemode: boolean, account: string, currency: string, except: string): void {
    for (const other of [...this.all(livemode, account), ...this.cards(livemode, account)] as StoredObject<{ currency?: string | null; default_for_currency?: boolean | null }, unknown>[]) {
      if (other.id === except || other.body.currency !== currency || !other.body.default_for_currency) continue;
      other.body.default_for_currency = false;
      this.kernel.store.save(other);
    }
  }

  /** `POST /v1/accounts/:id/external_accounts/:ba`: holder details, metadata, or make it the currency's default. */
  update(origin: Origin, account: string, id: string, input: BankAccountUpdateInput): Stripe.BankAccount | Stripe.Card {
    if (id.startsWith('card_')) return this.updateCard(origin, account, id, input);
    if (input.name !== undefined) throw invalidRequest('Received unknown parameter: name', 'name', 'parameter_unknown');
    const row = this.get(origin.scope.livemode, account, id);
    if (input.default_for_currency === true && !row.body.default_for_currency) {
      this.clearDefault(row.livemode, account, row.body.currency, row.id);
      row.body.default_for_currency = true;
    }
    if (input.account_holder_name !== undefined) row.body.account_holder_name = input.account_holder_name;
    if (input.account_holder_type !== undefined) row.body.account_holder_type = input.account_holder_type;
    row.body.metadata = mergeMetadata(row.body.metadata ?? {}, input.metadata);
    this.kernel.store.save(row);
    this.sync(row.livemode, account);
    this.kernel.events.emit({ ...origin, scope: accountScope(row.livemode, account) }, 'account.external_account.updated', row.body);
    return row.body;
  }

  /** Stripe keeps a default per currency: that one can only go once another took its place. */
  remove(origin: Origin, account: string, id: string): Stripe.DeletedBankAccount | Stripe.DeletedCard {
    if (id.startsWith('card_')) {
      const card = this.card(origin.scope.livemode, account, id);
      if (card.body.default_for_currency) {
        throw invalidRequest('You cannot delete the default external account for your default currency. Please make another external account the default using the `default_for_currency` param, and then delete this one.', 'id');
      }
      this.kernel.store.remove(card.id);
      this.sync(card.livemode, account);
      this.kernel.events.emit({ ...origin, scope: accountScope(card.livemode, account) }, 'account.external_account.deleted', card.body);
      return { id: card.id, object: 'card', currency: card.body.currency ?? 'usd', deleted: true } as Stripe.DeletedCard;
    }
    const row = this.get(origin.scope.livemode, account, id);
    if (row.body.default_for_currency) {
      throw invalidRequest(
        'You cannot delete the default bank account for your default currency. Please make another bank account the default using the `default_for_currency` param, and then delete this one.',
        'id',
      );
    }
    this.kernel.store.remove(row.id);
    this.sync(row.livemode, account);
    this.kernel.events.emit({ ...origin, scope: accountScope(row.livemode, account) }, 'account.external_account.deleted', row.body);
    return { id: row.id, object: 'bank_account', currency: row.body.currency, deleted: true };
  }

  /** A payout to it failed: Stripe marks it `errored` and sends no more automatic payouts to it. */
  markErrored(row: BankAccountRow): void {
    row.body.status = 'errored';
    this.kernel.store.save(row);
    this.sync(row.livemode, String(row.body.account));
  }

  /** Mirrors the bank accounts into the account object's `external_accounts`. */
  private sync(livemode: boolean, account: string): void {
    const row = this.kernel.store.find<Stripe.Account, unknown>(account);
    if (!row || row.type !== 'account') return;
    row.body.external_accounts = this.listExternal(livemode, account) as unknown as Stripe.ApiList<Stripe.BankAccount | Stripe.Card>;
    this.kernel.store.save(row);
  }
}
