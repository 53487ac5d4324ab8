import { describe, expect, it } from 'vitest';
import { percentageTip, tipSuggestions } from './tipping.js';

const SMART = { percentages: [15, 18, 20], fixed_amounts: [100, 200, 300], smart_tip_threshold: 1000 };

describe("Stripe's smart-tip rule", () => {
  it('shows fixed amounts below the threshold and percentages at or above it', () => {
    expect(tipSuggestions(SMART, 999, 'usd')).toMatchObject({ kind: 'fixed_amounts', options: [{ option: 1, amount: 100, label: '$1.00' }, { amount: 200 }, { amount: 300 }] });
    expect(tipSuggestions(SMART, 1000, 'usd')).toMatchObject({ kind: 'percentages', options: [{ option: 1, percentage: 15, amount: 150 }, { amount: 180 }, { amount: 200 }] });
  });

  it('with one list, shows that list whatever the amount', () => {
    expect(tipSuggestions({ fixed_amounts: [50] }, 1_000_000, 'usd')?.kind).toBe('fixed_amounts');
    expect(tipSuggestions({ percentages: [10] }, 1, 'usd')).toMatchObject({ kind: 'percentages', options: [{ amount: 0 }] });
    expect(tipSuggestions({}, 1000, 'usd')).toBeNull();
  });

  it('rounds percentages half up to the minor unit, zero-decimal currencies included', () => {
    expect(percentageTip(1275, 18)).toBe(230); // 229.5
    expect(percentageTip(1274, 18)).toBe(229); // 229.32
    expect(tipSuggestions({ percentages: [15] }, 1250, 'jpy')).toMatchObject({ options: [{ amount: 188, label: '15% (¥188)' }] });
  });
});
