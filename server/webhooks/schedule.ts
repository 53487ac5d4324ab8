/**
 * When a failed webhook delivery is tried again (docs/webhooks.md). Exponential backoff: 5 s after
 * the first failure, three times longer after each further one, at most 8 h apart, each delay
 * jittered by ±20 % so a receiver coming back from an outage is not hit by every retry at once.
 * Retries stop 3 days after the event (Stripe's window): long enough to survive a weekend outage
 * of a shop's server. `scale` compresses the whole schedule, for tests only.
 */
export const FIRST_RETRY_MS = 5_000;
export const BACKOFF_FACTOR = 3;
export const MAX_RETRY_DELAY_MS = 8 * 60 * 60 * 1000;
export const RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;
/** ±20 %: enough to spread a burst, small enough that the documented schedule stays true. */
export const JITTER = 0.2;
/** A Retry-After longer than a day is a misconfigured receiver; we come back after a day instead. */
export const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

export interface RetrySchedule {
  scale: number;
}

/** Delay after the `failures`-th failed attempt (1-based), before jitter. */
export function baseDelay(failures: number, scale = 1): number {
  const delay = Math.min(FIRST_RETRY_MS * BACKOFF_FACTOR ** Math.max(0, failures - 1), MAX_RETRY_DELAY_MS);
  return delay * scale;
}

export function retryWindow(scale = 1): number {
  return RETRY_WINDOW_MS * scale;
}

/**
 * When to try again after a failure, or null when the 3-day window is used up. A Retry-After from
 * the receiver is honoured (never sooner than it asks, nor sooner than our first step).
 */
export function nextAttemptAt(opts: { now: number; eventCreatedAt: number; failures: number; scale: number; retryAfterMs?: number | undefined; random?: () => number }): number | null {
  const random = opts.random ?? Math.random;
  let delay = baseDelay(opts.failures, opts.scale) * (1 - JITTER + 2 * JITTER * random());
  if (opts.retryAfterMs !== undefined) {
    delay = Math.max(delay, Math.min(opts.retryAfterMs, MAX_RETRY_AFTER_MS * opts.scale));
  }
  const at = opts.now + Math.round(delay);
  return at > opts.eventCreatedAt + retryWindow(opts.scale) ? null : at;
}

/** Retry-After as seconds or an HTTP date, in ms from now; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
