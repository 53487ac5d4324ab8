import type { Kysely } from 'kysely';
import type { Tables } from '../db/schema.js';

/**
 * Fixed-window request counting per merchant and mode (or per client address when no valid key
 * was given). One process's memory is the whole truth while the store is SQLite; the PostgreSQL
 * deployment swaps in a shared implementation of the same interface.
 */
export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets. */
  resetSeconds: number;
}

export interface RateLimiter {
  hit(key: string, nowMs: number): RateLimitDecision | Promise<RateLimitDecision>;
}

/**
 * Windows of keys that stopped sending are dropped once this many are held, so memory stays
 * bounded by active clients rather than by every address ever seen.
 */
const MAX_TRACKED_KEYS = 100_000;

export class MemoryRateLimiter implements RateLimiter {
  readonly #windows = new Map<string, { start: number; count: number }>();
  readonly #limit: number;
  readonly #windowMs: number;

  constructor(limit: number, windowSeconds: number) {
    this.#limit = limit;
    this.#windowMs = windowSeconds * 1000;
  }

  hit(key: string, nowMs: number): RateLimitDecision {
    const start = nowMs - (nowMs % this.#windowMs);
    let window = this.#windows.get(key);
    if (!window || window.start !== start) {
      if (this.#windows.size >= MAX_TRACKED_KEYS) this.#evictStale(start);
      window = { start, count: 0 };
      this.#windows.set(key, window);
    }
    window.count += 1;
    return {
      allowed: window.count <= this.#limit,
      limit: this.#limit,
      remaining: Math.max(0, this.#limit - window.count),
      resetSeconds: Math.max(1, Math.ceil((start + this.#windowMs - nowMs) / 1000)),
    };
  }

  #evictStale(currentStart: number): void {
    for (const [key, window] of this.#windows) if (window.start !== currentStart) this.#windows.delete(key);
  }
}

/**
 * Windows of old keys are deleted every this many hits: often enough that the table holds little
 * more than the live windows, rarely enough to cost nothing per request.
 */
const PRUNE_EVERY_HITS = 1_000;

/**
 * The same fixed windows, counted in the database so that every instance on one PostgreSQL sees
 * one count per merchant and mode. PostgreSQL rather than Redis: the deployment already depends on
 * it, and one upsert on a connection that skips the commit flush (a lost count after a crash costs
 * nothing) adds well under a millisecond per request.
 */
export class DatabaseRateLimiter implements RateLimiter {
  #hits = 0;

  constructor(
    private readonly db: Kysely<Tables>,
    private readonly limit: number,
    private readonly windowSeconds: number,
  ) {}

  async hit(key: string, nowMs: number): Promise<RateLimitDecision> {
    const windowMs = this.windowSeconds * 1000;
    const start = nowMs - (nowMs % windowMs);
    const row = await this.db
      .insertInto('rate_limit_windows')
      .values({ key, window_start: start, count: 1 })
      .onConflict((oc) => oc.columns(['key', 'window_start']).doUpdateSet((eb) => ({ count: eb('rate_limit_windows.count', '+', 1) })))
      .returning('count')
      .executeTakeFirstOrThrow();
    if (++this.#hits % PRUNE_EVERY_HITS === 0) {
      await this.db.deleteFrom('rate_limit_windows').where('window_start', '<', start - windowMs).execute();
    }
    const count = row.count;
    return {
      allowed: count <= this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - count),
      resetSeconds: Math.max(1, Math.ceil((start + windowMs - nowMs) / 1000)),
    };
  }
}
