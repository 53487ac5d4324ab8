import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from './rate-limit.js';

describe('MemoryRateLimiter', () => {
  it('allows the limit per window and key, then refuses until the window turns', () => {
    const limiter = new MemoryRateLimiter(2, 60);
    const t0 = 1_800_000_000_000; // on a minute boundary
    expect(limiter.hit('a', t0)).toEqual({ allowed: true, limit: 2, remaining: 1, resetSeconds: 60 });
    expect(limiter.hit('a', t0 + 1_000).remaining).toBe(0);
    expect(limiter.hit('a', t0 + 30_500)).toEqual({ allowed: false, limit: 2, remaining: 0, resetSeconds: 30 });
    expect(limiter.hit('b', t0 + 30_500).allowed).toBe(true);
    expect(limiter.hit('a', t0 + 60_000)).toMatchObject({ allowed: true, remaining: 1 });
  });
});
