import type Stripe from 'stripe';

/** Small pieces of Stripe objects that several resources share. */

export interface ListEnvelope<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  url: string;
}

export function list<T>(url: string, data: T[], hasMore = false): ListEnvelope<T> {
  return { object: 'list', data, has_more: hasMore, url };
}

export function emptyAddress(): Stripe.Address {
  return { city: null, country: null, line1: null, line2: null, postal_code: null, state: null };
}

export function emptyBillingDetails(): Stripe.PaymentMethod.BillingDetails {
  return { address: emptyAddress(), email: null, name: null, phone: null, tax_id: null };
}

export function emptyRequirements(): Stripe.Account.Requirements & Stripe.Capability.Requirements {
  return {
    alternatives: [],
    current_deadline: null,
    currently_due: [],
    disabled_reason: null,
    errors: [],
    eventually_due: [],
    past_due: [],
    pending_verification: [],
  };
}

export type Metadata = Record<string, string>;

/**
 * Stripe's metadata update rule: keys are merged, an empty value deletes its key, and an empty
 * string for the whole hash clears it.
 */
export function mergeMetadata(current: Metadata, update: Metadata | '' | undefined): Metadata {
  if (update === undefined) return current;
  if (update === '') return {};
  const next: Metadata = { ...current };
  for (const [key, value] of Object.entries(update)) {
    if (value === '') delete next[key];
    else next[key] = value;
  }
  return next;
}
