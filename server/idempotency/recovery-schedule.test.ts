import { describe, expect, it } from 'vitest';
import { MAX_RECOVERY_AGE_MS, MAX_RECOVERY_ATTEMPTS, recoveryDelay, recoveryExhausted } from './recovery-schedule.js';

describe('recovery schedule', () => {
  it('doubles from 5 s and stops growing at 5 min', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => recoveryDelay(n))).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000, 300_000]);
    expect(recoveryDelay(3, 0.01)).toBe(200);
  });

  it('gives up at the attempt cap or the age cap, whichever comes first', () => {
    expect(recoveryExhausted({ attempts: MAX_RECOVERY_ATTEMPTS - 1, createdAt: 0, now: 1_000 })).toBe(false);
    expect(recoveryExhausted({ attempts: MAX_RECOVERY_ATTEMPTS, createdAt: 0, now: 1_000 })).toBe(true);
    expect(recoveryExhausted({ attempts: 1, createdAt: 0, now: MAX_RECOVERY_AGE_MS })).toBe(true);
    expect(recoveryExhausted({ attempts: 1, createdAt: 0, now: MAX_RECOVERY_AGE_MS / 100, scale: 0.01 })).toBe(true);
  });

  it('the attempts before the cap fit inside the age limit', () => {
    let total = 0;
    for (let n = 1; n < MAX_RECOVERY_ATTEMPTS; n += 1) total += recoveryDelay(n);
    expect(total).toBeLessThan(MAX_RECOVERY_AGE_MS);
  });
});
