import { describe, expect, it } from 'vitest';
import { cartTotal, parseCartLine } from './cart.js';

describe('cart lines typed on the command line', () => {
  it('reads description, unit price and quantity', () => {
    expect(parseCartLine('Coffee:3.50x2', 'usd')).toEqual({ description: 'Coffee', quantity: 2, amount: 350 });
    expect(parseCartLine('Bagel:250c', 'usd')).toEqual({ description: 'Bagel', quantity: 1, amount: 250 });
    expect(parseCartLine('Ramen: 900 x3', 'jpy')).toEqual({ description: 'Ramen', quantity: 3, amount: 900 });
    expect(parseCartLine('Table 4: soup:4.00', 'usd')).toEqual({ description: 'Table 4: soup', quantity: 1, amount: 400 });
  });

  it('refuses what it cannot read, saying what to type', () => {
    for (const bad of ['Coffee', ':3.50', 'Coffee:', 'Coffee:3.50x0', 'Coffee:3.50x1.5', 'Coffee:abc', 'Coffee:3.505']) {
      expect(() => parseCartLine(bad, 'usd'), bad).toThrow();
    }
  });

  it('totals quantity × price plus tax', () => {
    expect(cartTotal([{ description: 'a', quantity: 2, amount: 350 }, { description: 'b', quantity: 1, amount: 250 }], 77)).toBe(1027);
  });
});
