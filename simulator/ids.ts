import { randomBase62, timePrefix } from '../shared/ids.js';

/**
 * Stripe-looking identifiers: 24 base62 characters, the length of Stripe's own object ids, so they
 * look familiar in logs. The first 8 are the time (shared/ids.ts `timePrefix`), so the objects
 * made together add to the end of the id index; the 16 random ones (≈ 95 bits) keep them unguessable.
 */
const ID_LENGTH = 24;

export function newId(prefix: string): string {
  const time = timePrefix();
  return `${prefix}_${time}${randomBase62(ID_LENGTH - time.length)}`;
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
