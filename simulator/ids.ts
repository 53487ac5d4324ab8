import { randomBase62 } from '../shared/ids.js';

/**
 * Stripe-looking identifiers. 24 base62 characters ≈ 143 bits, the length of Stripe's own object
 * ids, so ids are unguessable and look familiar in logs.
 */
const ID_LENGTH = 24;

export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(ID_LENGTH)}`;
}

/** Connected account ids are shorter in Stripe (`acct_` + 16). */
const ACCOUNT_ID_LENGTH = 16;

export function newAccountId(): string {
  return `acct_${randomBase62(ACCOUNT_ID_LENGTH)}`;
}

/** Secrets (client secrets, webhook secrets, keys): 32 characters ≈ 190 bits. */
const SECRET_LENGTH = 32;

export function newSecret(prefix: string): string {
  return `${prefix}${randomBase62(SECRET_LENGTH)}`;
}

/** Customer ids are shorter too (`cus_` + 14). */
const CUSTOMER_ID_LENGTH = 14;

export function newCustomerId(): string {
  return `cus_${randomBase62(CUSTOMER_ID_LENGTH)}`;
}
