import type Stripe from 'stripe';
import { newId } from '../../ids.js';
import { invalidRequest, resourceMissing } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getScoped, unixSeconds } from '../kernel.js';
import { list, type ListEnvelope, type Metadata, mergeMetadata } from '../shapes.js';
import { ACH_TEST_ROUTING, bankTokenAccount, cardTokenNumber, fingerprint, testCard } from '../payments/instruments.js';

/**
 * What a customer holds besides PaymentMethods: tax ids, the customer balance's transactions
 * (credits negative, as on Stripe, and summed into `customer.balance`) and the legacy sources (a
 * card from a `tok_…` test token, a bank account from a `btok_…` one, verified with Stripe's test
 * microdeposit amounts 32 and 45).
 */

type Page = { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined };
type Source = Stripe.Card | Stripe.BankAccount;

/** Stripe's test microdeposit amounts that verify a bank account. */
const VERIFYING_AMOUNTS = [32, 45];

export class CustomerObjects {
  constructor(private readonly kernel: Kernel) {}

  private customer(scope: Scope, id: string): StoredObject<Stripe.Customer, Record<string, never>> {
    const row = getScoped<Stripe.Customer, Record<string, never>>(this.kernel, 'customer', scope, id, 'customer', 'customer');
    if ((row.body as { deleted?: boolean }).deleted) throw resourceMissing('customer', id, 'customer');
    return row;
  }

  private child<T>(scope: Scope, type: string, customer: string, id: string, what: string): StoredObject<T & { customer?: unknown }, Record<string, never>> {
    const row = getScoped<T & { customer?: unknown }, Record<string, never>>(this.kernel, type, scope, id, what, 'id');
    if (row.body.customer !== customer) throw resourceMissing(what, id, 'id');
    return row;
  }

  private listOf<T>(scope: Scope, type: string, customer: string, path: string, page: Page, filters: Record<string, string | undefined> = {}): ListEnvelope<T> {
    this.customer(scope, customer);
    const found = this.kernel.store.list<T, Record<string, never>>(type, scope, { customer, ...filters }, page);
    return list(`/v1/customers/${customer}/${path}`, found.data.map((row) => row.body), found.hasMore);
  }

  createTaxId(origin: Origin, customer: string, input: { type: string; value: string }): Stripe.TaxId {
    this.customer(origin.scope, customer);
    const taxId = {
      id: newId('txi'),
      object: 'tax_id',
      country: input.type.slice(0, 2).toUpperCase(),
      created: unixSeconds(this.kernel.now()),
      customer,
      livemode: origin.scope.livemode,
      owner: { customer, type: 'customer' },
      type: input.type,
      value: input.value,
      verification: { status: 'pending', verified_address: null, verified_name: null },
    } as unknown as Stripe.TaxId;
    this.kernel.store.insert('tax_id', origin.scope, taxId, {});
    this.kernel.events.emit(origin, 'customer.tax_id.created', taxId);
    return taxId;
  }

  retrieveTaxId(scope: Scope, customer: string, id: string): Stripe.TaxId {
    return this.child<Stripe.TaxId>(scope, 'tax_id', customer, id, 'tax id').body;
  }

  deleteTaxId(origin: Origin, customer: string, id: string): Stripe.DeletedTaxId {
    const row = this.child<Stripe.TaxId>(origin.scope, 'tax_id', customer, id, 'tax id');
    this.kernel.store.remove(row.id);
    this.kernel.events.emit(origin, 'customer.tax_id.deleted', row.body);
    return { id: row.id, object: 'tax_id', deleted: true };
  }

  listTaxIds(scope: Scope, customer: string, page: Page): ListEnvelope<Stripe.TaxId> {
    return this.listOf(scope, 'tax_id', customer, 'tax_ids', page);
  }

  createBalanceTransaction(origin: Origin, customerId: string, input: { amount: number; currency: string; description?: string | undefined; metadata?: Metadata | '' | undefined }): Stripe.CustomerBalanceTransaction {
    const customer = this.customer(origin.scope, customerId);
    const currency = input.currency.toLowerCase();
    if (customer.body.currency && customer.body.currency !== currency) {
      throw invalidRequest(`The customer's balance is in ${customer.body.currency}; a transaction in ${currency} cannot be added.`, 'currency');
    }
    const ending = customer.body.balance + input.amount;
    const txn = {
      id: newId('cbtxn'),
      object: 'customer_balance_transaction',
      amount: input.amount,
      created: unixSeconds(this.kernel.now()),
      credit_note: null,
      currency,
      customer: customerId,
      description: input.description ?? null,
      ending_balance: ending,
      invoice: null,
      livemode: origin.scope.livemode,
      metadata: mergeMetadata({}, input.metadata),
      type: 'adjustment',
    } as Stripe.CustomerBalanceTransaction;
    this.kernel.store.insert('customer_balance_transaction', origin.scope, txn, {});
    const previous = customer.body.balance;
    customer.body.balance = ending;
    customer.body.currency = currency;
    this.kernel.store.save(customer);
    this.kernel.events.emit(origin, 'customer.updated', customer.body, { balance: previous });
    return txn;
  }

  retrieveBalanceTransaction(scope: Scope, customer: string, id: string): Stripe.CustomerBalanceTransaction {
    return this.child<Stripe.CustomerBalanceTransaction>(scope, 'customer_balance_transaction', customer, id, 'customer balance transaction').body;
  }

  updateBalanceTransaction(origin: Origin, customer: string, id: string, input: { description?: string | undefined; metadata?: Metadata | '' | undefined }): Stripe.CustomerBalanceTransaction {
    const row = this.child<Stripe.CustomerBalanceTransaction>(origin.scope, 'customer_balance_transaction', customer, id, 'customer balance transaction');
    if (input.description !== undefined) row.body.description = input.description;
    row.body.metadata = mergeMetadata(row.body.metadata ?? {}, input.metadata);
    this.kernel.store.save(row);
    return row.body;
  }

  listBalanceTransactions(scope: Scope, customer: string, page: Page): ListEnvelope<Stripe.CustomerBalanceTransaction> {
    return this.listOf(scope, 'customer_balance_transaction', customer, 'balance_transactions', page);
  }

  createSource(origin: Origin, customerId: string, input: { source: string; metadata?: Metadata | '' | undefined }): Source {
    this.customer(origin.scope, customerId);
    const cardNumber = cardTokenNumber(input.source.replace(/^tok_/, 'pm_card_'));
    const bankNumber = bankTokenAccount(input.source);
    let source: Source;
    if (cardNumber) {
      const card = testCard(cardNumber);
      const expiry = new Date(this.kernel.now());
      source = {
        id: newId('card'), object: 'card', address_city: null, address_country: null, address_line1: null, address_line1_check: null,
        address_line2: null, address_state: null, address_zip: null, address_zip_check: null, brand: card.brand, country: 'US',
        customer: customerId, cvc_check: 'pass', dynamic_last4: null, exp_month: expiry.getUTCMonth() + 1, exp_year: expiry.getUTCFullYear() + 3,
        fingerprint: fingerprint(cardNumber), funding: card.funding, last4: cardNumber.slice(-4), metadata: mergeMetadata({}, input.metadata),
        name: null, tokenization_method: null, wallet: null,
      } as unknown as Stripe.Card;
    } else if (bankNumber) {
      source = {
        id: newId('ba'), object: 'bank_account', account_holder_name: null, account_holder_type: 'individual', account_type: null,
        bank_name: 'STRIPE TEST BANK', country: 'US', currency: 'usd', customer: customerId, fingerprint: fingerprint(`${ACH_TEST_ROUTING}:${bankNumber}`),
        last4: bankNumber.slice(-4), metadata: mergeMetadata({}, input.metadata), routing_number: ACH_TEST_ROUTING, status: 'new',
      } as unknown as Stripe.BankAccount;
    } else {
      throw invalidRequest(`No such token: '${input.source}'`, 'source', 'resource_missing');
    }
    this.kernel.store.insert('customer_source', origin.scope, source, {});
    this.kernel.events.emit(origin, 'customer.source.created', source);
    return source;
  }

  retrieveSource(scope: Scope, customer: string, id: string): Source {
    return this.child<Source>(scope, 'customer_source', customer, id, 'source').body;
  }

  updateSource(origin: Origin, customer: string, id: string, input: { name?: string | undefined; account_holder_name?: string | undefined; metadata?: Metadata | '' | undefined; exp_month?: number | undefined; exp_year?: number | undefined }): Source {
    const row = this.child<Source>(origin.scope, 'customer_source', customer, id, 'source');
    const body = row.body as unknown as Record<string, unknown>;
    if (row.body.object === 'card') {
      if (input.name !== undefined) body.name = input.name;
      if (input.exp_month !== undefined) body.exp_month = input.exp_month;
      if (input.exp_year !== undefined) body.exp_year = input.exp_year;
    } else if (input.account_holder_name !== undefined) body.account_holder_name = input.account_holder_name;
    row.body.metadata = mergeMetadata(row.body.metadata ?? {}, input.metadata);
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'customer.source.updated', row.body);
    return row.body;
  }

  verifySource(origin: Origin, customer: string, id: string, amounts: number[] | undefined): Stripe.BankAccount {
    const row = this.child<Source>(origin.scope, 'customer_source', customer, id, 'source');
    if (row.body.object !== 'bank_account') throw invalidRequest('Only bank accounts can be verified.', 'id');
    if (row.body.status === 'verified') throw invalidRequest('This bank account has already been verified.', 'id');
    if (!amounts || amounts.length !== 2 || amounts[0] !== VERIFYING_AMOUNTS[0] || amounts[1] !== VERIFYING_AMOUNTS[1]) {
      throw invalidRequest('The amounts provided do not match the amounts that were sent to the bank account.', 'amounts', 'bank_account_verification_failed');
    }
    row.body.status = 'verified';
    this.kernel.store.save(row);
    return row.body;
  }

  deleteSource(origin: Origin, customer: string, id: string): { id: string; object: string; deleted: true } {
    const row = this.child<Source>(origin.scope, 'customer_source', customer, id, 'source');
    this.kernel.store.remove(row.id);
    this.kernel.events.emit(origin, 'customer.source.deleted', row.body);
    return { id: row.id, object: row.body.object, deleted: true };
  }

  listSources(scope: Scope, customer: string, object: string | undefined, page: Page): ListEnvelope<Source> {
    return this.listOf(scope, 'customer_source', customer, 'sources', page, { object });
  }
}
