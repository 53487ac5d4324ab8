import { describe, expect, it } from 'vitest';
import { platformFee } from './fees.js';

describe('platformFee', () => {
  it('charges 3 % on cards, wallets and terminal payments, rounding half up', () => {
    expect(platformFee(50, 'card')).toBe(2); // 1.5
    expect(platformFee(150, 'card')).toBe(5); // 4.5
    expect(platformFee(149, 'wallet')).toBe(4); // 4.47
    expect(platformFee(4750, 'terminal')).toBe(143); // 142.5
    expect(platformFee(10_000, 'card')).toBe(300);
    expect(platformFee(99_999_999, 'card')).toBe(3_000_000); // 2,999,999.97
  });

  it('charges 1 % on ACH and bank transfers, capped at 700', () => {
    expect(platformFee(50, 'ach')).toBe(1); // 0.5
    expect(platformFee(149, 'ach')).toBe(1); // 1.49
    expect(platformFee(150, 'bank_transfer')).toBe(2); // 1.5
    expect(platformFee(69_949, 'ach')).toBe(699); // 699.49
    expect(platformFee(69_950, 'ach')).toBe(700); // 699.5
    expect(platformFee(70_000, 'ach')).toBe(700);
    expect(platformFee(10_000_000, 'ach')).toBe(700);
  });
});
