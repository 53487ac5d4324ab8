import { invalidRequest } from '../../errors.js';
import type { Scope } from '../../store.js';
import { type Kernel, type Origin, getScoped } from '../kernel.js';
import { list, type ListEnvelope, type Metadata, mergeMetadata } from '../shapes.js';
import type { Customers } from '../customers/customers.js';
import type { PaymentMethodBody, PaymentMethodInternal, PaymentMethodRow } from './paymentMethods.js';

/**
 * PaymentMethods saved to customers: attach, detach, update and list, with Stripe's rules: a
 * method belongs to one customer, a detached method cannot be used again, and only a saved method
 * can be updated.
 */

export interface PaymentMethodUpdateInput {
  billing_details?: { name?: string | undefined; email?: string | undefined; phone?: string | undefined; address?: Record<string, string> | undefined } | undefined;
  card?: { exp_month?: number | undefined; exp_year?: number | undefined } | undefined;
  allow_redisplay?: 'always' | 'limited' | 'unspecified' | undefined;
  metadata?: Metadata | '' | undefined;
}

type AttachedInternal = PaymentMethodInternal & { detached?: boolean };

export class PaymentMethodAttachments {
  constructor(
    private readonly kernel: Kernel,
    private readonly customers: Customers,
  ) {}

  private get(scope: Scope, id: string): PaymentMethodRow & { internal: AttachedInternal } {
    return getScoped<PaymentMethodBody, AttachedInternal>(this.kernel, 'payment_method', scope, id, 'PaymentMethod', 'payment_method');
  }

  attach(origin: Origin, id: string, customer: string): PaymentMethodBody {
    this.customers.assertUsable(origin.scope, customer);
    const row = this.get(origin.scope, id);
    if (row.internal.detached) {
      throw invalidRequest(
        'This PaymentMethod was previously used without being attached to a Customer or was detached from a Customer, and may not be used again.',
        'payment_method',
      );
    }
    if (row.body.customer === customer) return row.body;
    if (row.body.customer !== null) throw invalidRequest('The payment method you provided has already been attached to a customer.', 'payment_method');
    row.body.customer = customer;
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'payment_method.attached', row.body);
    return row.body;
  }

  detach(origin: Origin, id: string): PaymentMethodBody {
    const row = this.get(origin.scope, id);
    if (row.body.customer === null) {
      throw invalidRequest('The payment method you provided is not attached to a customer so detachment is impossible.', 'payment_method');
    }
    row.body.customer = null;
    row.internal.detached = true;
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'payment_method.detached', row.body);
    return row.body;
  }

  update(origin: Origin, id: string, input: PaymentMethodUpdateInput): PaymentMethodBody {
    const row = this.get(origin.scope, id);
    if (row.body.customer === null) throw invalidRequest('You must save this PaymentMethod to a customer before you can update it.', 'payment_method');
    const previous = structuredClone(row.body);
    const billing = input.billing_details;
    if (billing) {
      const details = row.body.billing_details;
      if (billing.name !== undefined) details.name = billing.name;
      if (billing.email !== undefined) details.email = billing.email;
      if (billing.phone !== undefined) details.phone = billing.phone;
      if (billing.address !== undefined) details.address = { ...(details.address ?? { city: null, country: null, line1: null, line2: null, postal_code: null, state: null }), ...billing.address };
    }
    if (input.card && row.body.card) {
      if (input.card.exp_month !== undefined) row.body.card.exp_month = input.card.exp_month;
      if (input.card.exp_year !== undefined) row.body.card.exp_year = input.card.exp_year;
    }
    if (input.allow_redisplay !== undefined) row.body.allow_redisplay = input.allow_redisplay;
    row.body.metadata = mergeMetadata(row.body.metadata ?? {}, input.metadata);
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'payment_method.updated', row.body, { metadata: previous.metadata, billing_details: previous.billing_details });
    return row.body;
  }

  /** A customer's saved methods (`GET /v1/payment_methods?customer=` and `GET /v1/customers/:id/payment_methods`). */
  list(scope: Scope, filters: { customer?: string | undefined; type?: string | undefined }, page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined }, url: string): ListEnvelope<PaymentMethodBody> {
    if (filters.customer !== undefined) this.customers.assertUsable(scope, filters.customer);
    const found = this.kernel.store.list<PaymentMethodBody, PaymentMethodInternal>('payment_method', scope, { customer: filters.customer ?? null, type: filters.type }, page);
    return list(url, found.data.map((row) => row.body), found.hasMore);
  }
}
