import { randomFillSync } from 'node:crypto';
import { v7 as uuidV7 } from 'uuid';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Uniform random base62 string. Rejection sampling keeps every character uniform: bytes at or
 * above 248 (4 × 62) are dropped instead of being folded, which would bias the first 8 letters.
 */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    const byte = randomByte();
    if (byte >= 248) continue;
    out += BASE62[byte % 62];
  }
  return out;
}

/**
 * Random bytes are drawn from the CSPRNG a pool at a time: one call per id cost more than the
 * id itself (every request gets one). Each byte is handed out once.
 */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolAt = POOL_BYTES;

/** Refills the pool when fewer than `length` of its bytes are left to hand out. */
function reserve(length: number): void {
  if (poolAt + length > POOL_BYTES) {
    randomFillSync(pool);
    poolAt = 0;
  }
}

function randomByte(): number {
  reserve(1);
  return pool[poolAt++]!;
}

/** `length` fresh random bytes from the pool (a view of it: used at once, before the pool refills). */
function randomBytes(length: number): Uint8Array {
  reserve(length);
  const bytes = pool.subarray(poolAt, poolAt + length);
  poolAt += length;
  return bytes;
}

/**
 * A UUID version 7 (RFC 9562, the `uuid` package): the time in milliseconds first, then 74 random
 * bits, so it is no easier to guess for one who knows when it was made. Consecutive ids sort
 * together, so a batch of inserts adds to the end of the id index instead of touching a random
 * page of it for every row (and writing each of those pages at its commit).
 */
export function timeOrderedUuid(now: number = Date.now()): string {
  // Its random bits from the pool: the package's own source draws from the CSPRNG per id, which
  // cost as much as the rest of a delivery row's insert.
  return uuidV7({ msecs: now, random: randomBytes(16) });
}

/** Typed references shown to people next to the uuid: `txn_…`, `re_…`, `cs_…`, `pl_…`, `cus_…`. */
export const REFERENCE_PREFIXES = {
  transaction: 'txn',
  refund: 're',
  checkoutSession: 'cs',
  paymentLink: 'pl',
  customer: 'cus',
  dispute: 'dp',
  payout: 'po',
  event: 'evt',
  webhookEndpoint: 'we',
  location: 'loc',
  reader: 'rdr',
  request: 'req',
  audit: 'aud',
} as const;

export type ReferenceKind = keyof typeof REFERENCE_PREFIXES;

/** 20 base62 characters after the prefix: the time (`timePrefix`), then 12 random ones. */
const REFERENCE_LENGTH = 20;

/** Base62 digits of the time in a time prefix: 62⁸ ms reach past the year 8000, at a fixed width. */
const TIME_PREFIX_LENGTH = 8;

/**
 * Epoch milliseconds as fixed-width base62 digits. The alphabet is in ASCII order, so ids that
 * start with it sort by time, as bytes and as text: rows inserted together add to the end of their
 * id's index instead of each touching a random page of it (and making its commit write that page).
 */
export function timePrefix(now: number = Date.now()): string {
  let out = '';
  let rest = Math.max(0, Math.floor(now));
  for (let i = 0; i < TIME_PREFIX_LENGTH; i++) {
    out = BASE62[rest % 62]! + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

/**
 * `txn_…`, `evt_…`, `aud_…`: time first (`timePrefix`), so a table's references sort together, then
 * 12 random base62 characters ≈ 71 bits, which keeps them guess-proof, not just unique: one who
 * knows the very millisecond an object was made still has 2⁷¹ to try.
 */
export function newReference(kind: ReferenceKind, now: number = Date.now()): string {
  return `${REFERENCE_PREFIXES[kind]}_${timePrefix(now)}${randomBase62(REFERENCE_LENGTH - TIME_PREFIX_LENGTH)}`;
}

export interface Identity {
  id: string;
  reference: string;
}

/**
 * The one generator of object identities: a uuid plus its typed reference, both in time order
 * (`timeOrderedUuid`, `newReference`) so that the rows of a busy shop add to the end of the indexes
 * on them.
 */
export function newIdentity(kind: ReferenceKind): Identity {
  const now = Date.now();
  return { id: timeOrderedUuid(now), reference: newReference(kind, now) };
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}
