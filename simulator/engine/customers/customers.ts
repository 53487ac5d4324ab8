import { randomBytes } from 'node:crypto';
import type Stripe from 'stripe';
import { newCustomerId } from '../../ids.js';
import { SimError, resourceMissing } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getScoped, unixSeconds } from '../kernel.js';
import { emptyAddress, list, type ListEnvelope, type Metadata, mergeMetadata } from '../shapes.js';

/**
 * Customers on the platform or a connected account. A deleted customer stays retrievable as
 * Stripe's deleted stub (`{ id, object, deleted: true }`), leaves every list and cannot be updated
 * or named by a new PaymentIntent.
 */

export type CustomerRow = StoredObject<Stripe.Customer | Stripe.DeletedCustomer, Record<string, never>>;

export interface CustomerInput {
  name?: string | null | undefined;
  email?: string | null | undefined;
  phone?: string | null | undefined;
  description?: string | null | undefined;
  metadata?: Metadata | '' | undefined;
  address?: Record<string, string | undefined> | '' | undefined;
  preferred_locales?: string[] | undefined;
}

/** Stripe's invoice prefixes are 8 upper-case hexadecimal characters, unique per customer. */
const INVOICE_PREFIX_BYTES = 4;

const ADDRESS_FIELDS = ['city', 'country', 'line1', 'line2', 'postal_code', 'state'] as const;

function isDeleted(body: Stripe.Customer | Stripe.DeletedCustomer): body is Stripe.DeletedCustomer {
  return (body as { deleted?: unknown }).deleted === true;
}

function toAddress(input: Record<string, string | undefined> | '' | undefined, current: Stripe.Address | null): Stripe.Address | null {
  if (input === undefined) return current;
  if (input === '') return null;
  const address = current ? { ...current } : emptyAddress();
  for (const field of ADDRESS_FIELDS) {
    const value = input[field];
    if (value !== undefined) address[field] = value === '' ? null : value;
  }
  return address;
}

export class Customers {
  constructor(private readonly kernel: Kernel) {}

  private row(scope: Scope, id: string): CustomerRow {
    return getScoped<Stripe.Customer | Stripe.DeletedCustomer, Record<string, never>>(this.kernel, 'customer', scope, id, 'customer', 'customer');
  }

  /** A customer that exists and is not deleted, or Stripe's `resource_missing`. */
  private live(scope: Scope, id: string, param: string): StoredObject<Stripe.Customer, Record<string, never>> {
    const row = this.row(scope, id);
    if (isDeleted(row.body)) throw resourceMissing('customer', id, param);
    return row as StoredObject<Stripe.Customer, Record<string, never>>;
  }

  /**
   * The check a PaymentIntent's `customer` goes through: a parameter naming a missing object is a
   * 400 on Stripe (the 404 is for the object in the path).
   */
  assertUsable(scope: Scope, id: string): void {
    try {
      this.live(scope, id, 'customer');
    } catch (error) {
      if (!(error instanceof SimError)) throw error;
      throw new SimError(400, 'invalid_request_error', error.message, { code: 'resource_missing', param: 'customer' });
    }
  }

  create(origin: Origin, input: CustomerInput): Stripe.Customer {
    const customer: Stripe.Customer = {
      id: newCustomerId(),
      object: 'customer',
      address: toAddress(input.address, null),
      balance: 0,
      created: unixSeconds(this.kernel.now()),
      currency: null,
      default_source: null,
      delinquent: false,
      description: input.description ?? null,
      discount: null,
      email: input.email ?? null,
      invoice_prefix: randomBytes(INVOICE_PREFIX_BYTES).toString('hex').toUpperCase(),
      invoice_settings: { custom_fields: null, default_payment_method: null, footer: null, rendering_options: null },
      livemode: origin.scope.livemode,
      metadata: mergeMetadata({}, input.metadata),
      name: input.name ?? null,
      next_invoice_sequence: 1,
      phone: input.phone ?? null,
      preferred_locales: input.preferred_locales ?? [],
      shipping: null,
      tax_exempt: 'none',
      test_clock: null,
    };
    this.kernel.store.insert('customer', origin.scope, customer, {});
    this.kernel.events.emit(origin, 'customer.created', customer);
    return customer;
  }

  retrieve(scope: Scope, id: string): Stripe.Customer | Stripe.DeletedCustomer {
    return this.row(scope, id).body;
  }

  update(origin: Origin, id: string, input: CustomerInput): Stripe.Customer {
    const row = this.live(origin.scope, id, 'customer');
    const customer = row.body;
    const previous: Record<string, unknown> = {};
    const set = <K extends 'name' | 'email' | 'phone' | 'description'>(field: K, value: string | null | undefined): void => {
      if (value === undefined || value === customer[field]) return;
      previous[field] = customer[field] ?? null;
      customer[field] = value;
    };
    set('name', input.name);
    set('email', input.email);
    set('phone', input.phone);
    set('description', input.description);
    if (input.address !== undefined) {
      previous.address = customer.address ?? null;
      customer.address = toAddress(input.address, customer.address ?? null);
    }
    if (input.preferred_locales !== undefined) {
      previous.preferred_locales = customer.preferred_locales ?? [];
      customer.preferred_locales = input.preferred_locales;
    }
    if (input.metadata !== undefined) {
      previous.metadata = customer.metadata;
      customer.metadata = mergeMetadata(customer.metadata, input.metadata);
    }
    this.kernel.store.save(row);
    if (Object.keys(previous).length > 0) this.kernel.events.emit(origin, 'customer.updated', customer, previous);
    return customer;
  }

  remove(origin: Origin, id: string): Stripe.DeletedCustomer {
    const row = this.live(origin.scope, id, 'customer');
    const last = row.body;
    const stub: Stripe.DeletedCustomer = { id: row.id, object: 'customer', deleted: true };
    (row as CustomerRow).body = stub;
    this.kernel.store.save(row);
    // The event carries the customer as it was, as Stripe's customer.deleted does.
    this.kernel.events.emit(origin, 'customer.deleted', last);
    return stub;
  }

  list(
    scope: Scope,
    filters: { email?: string | undefined },
    page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined },
  ): ListEnvelope<Stripe.Customer> {
    const result = this.kernel.store.list<Stripe.Customer, Record<string, never>>('customer', scope, { ...filters, deleted: null }, page);
    return list('/v1/customers', result.data.map((row) => row.body), result.hasMore);
  }
}
