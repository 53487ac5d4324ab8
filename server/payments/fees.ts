import type { PaymentMethodType } from '../db/schema.js';

/**
 * The platform fee (spec §8), computed once at creation and stored as `platform_fee_cents`.
 * Rates are in basis points. Fractions of a cent round half up (0.5 → 1): 3 % of 50 is 1.5 → 2,
 * 3 % of 150 is 4.5 → 5, 1 % of 149 is 1.49 → 1. Integer arithmetic only.
 */
const CARD_BPS = 300;
const ACH_BPS = 100;
/** ACH fees stop at 7.00 (spec §8: "1 %, capped at 7.00 in USD"). */
const ACH_CAP = 700;

function percentOf(amount: number, bps: number): number {
  return Math.floor((amount * bps + 5_000) / 10_000);
}

export function platformFee(amount: number, method: PaymentMethodType): number {
  switch (method) {
    case 'card':
    case 'wallet':
    case 'terminal':
      return percentOf(amount, CARD_BPS);
    case 'ach':
    case 'bank_transfer':
      return Math.min(percentOf(amount, ACH_BPS), ACH_CAP);
    case 'cash':
      // The platform moves none of a cash sale's money, so it has nothing to take a fee from.
      return 0;
  }
}
