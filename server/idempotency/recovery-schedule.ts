/**
 * How an idempotent request that failed for a passing reason (the processor unreachable, a 5xx, a
 * 429, a timeout, our own database hiccup) is tried again, and when it is given up (docs/payments.md).
 *
 * The recovery pass waits 5 s after the first failure, twice as long after each further one, at
 * most 5 min apart. The request is given up at its 10th failed attempt or once it is 30 min old,
 * whichever comes first: 10 attempts on this schedule span about 20 min, and each attempt is
 * already three tries inside the SDK (server/processor/stripe/processor.ts). `scale` compresses every delay
 * and the age limit, for tests only; the attempt count stays.
 */

/** The reconciler's default interval: a shorter first delay would not be seen any sooner. */
export const FIRST_RECOVERY_DELAY_MS = 5_000;
export const RECOVERY_BACKOFF_FACTOR = 2;
/**
 * Processor outages are mostly minutes long; 5 min between late attempts bounds how long a payment
 * stays pending after the processor is back, at a cost of a few calls per key.
 */
export const MAX_RECOVERY_DELAY_MS = 5 * 60 * 1000;
/** Enough to ride out a ~20 min outage on the schedule above; see the module comment. */
export const MAX_RECOVERY_ATTEMPTS = 10;
/**
 * A payment that could not be created in half an hour has lost its customer (a counter, a checkout
 * page), and half an hour is far inside the 24 h the processor (and we) keep idempotency keys, so a
 * late attempt can never create a second PaymentIntent under a forgotten key.
 */
export const MAX_RECOVERY_AGE_MS = 30 * 60 * 1000;

/** Delay before the recovery pass tries again after the `attempts`-th failed attempt (1-based). */
export function recoveryDelay(attempts: number, scale = 1): number {
  const delay = Math.min(FIRST_RECOVERY_DELAY_MS * RECOVERY_BACKOFF_FACTOR ** Math.max(0, attempts - 1), MAX_RECOVERY_DELAY_MS);
  return Math.round(delay * scale);
}

/** True once a request with this many failed attempts, started at `createdAt`, is to be given up. */
export function recoveryExhausted(opts: { attempts: number; createdAt: number; now: number; scale?: number }): boolean {
  return opts.attempts >= MAX_RECOVERY_ATTEMPTS || opts.now - opts.createdAt >= MAX_RECOVERY_AGE_MS * (opts.scale ?? 1);
}
