import { describe, expect, it } from 'vitest';
import { baseDelay, nextAttemptAt, parseRetryAfter, RETRY_WINDOW_MS } from './schedule.js';

describe('webhook retry schedule', () => {
  it('backs off exponentially from 5 s, capped at 8 h', () => {
    expect([1, 2, 3, 4, 5].map((n) => baseDelay(n))).toEqual([5_000, 15_000, 45_000, 135_000, 405_000]);
    expect(baseDelay(20)).toBe(8 * 3_600_000);
  });

  it('keeps retrying for 3 days, then gives up; about 16 attempts in all', () => {
    let now = 0;
    let failures = 0;
    for (;;) {
      failures += 1;
      const at = nextAttemptAt({ now, eventCreatedAt: 0, failures, scale: 1, random: () => 0.5 });
      if (at === null) break;
      now = at;
    }
    expect(now).toBeLessThanOrEqual(RETRY_WINDOW_MS);
    expect(now).toBeGreaterThan(RETRY_WINDOW_MS - 8 * 3_600_000);
    expect(failures).toBeGreaterThanOrEqual(14);
    expect(failures).toBeLessThanOrEqual(18);
  });

  it('jitters by at most 20 % and scales for tests', () => {
    expect(nextAttemptAt({ now: 0, eventCreatedAt: 0, failures: 1, scale: 1, random: () => 0 })).toBe(4_000);
    expect(nextAttemptAt({ now: 0, eventCreatedAt: 0, failures: 1, scale: 1, random: () => 1 })).toBe(6_000);
    expect(nextAttemptAt({ now: 0, eventCreatedAt: 0, failures: 1, scale: 0.001, random: () => 0.5 })).toBe(5);
  });

  it('honours Retry-After in seconds or as a date', () => {
    expect(parseRetryAfter('120', 0)).toBe(120_000);
    expect(parseRetryAfter(new Date(60_000).toUTCString(), 0)).toBe(60_000);
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
    expect(nextAttemptAt({ now: 0, eventCreatedAt: 0, failures: 1, scale: 1, retryAfterMs: 60_000, random: () => 0.5 })).toBe(60_000);
  });
});
