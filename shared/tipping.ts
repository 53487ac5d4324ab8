import { formatAmount } from './money.js';

/**
 * On-reader tipping as Stripe's smart readers apply a Terminal Configuration's tipping for one
 * currency (https://docs.stripe.com/terminal/features/collecting-tips/on-reader): three suggestions,
 * as percentages of the tip-eligible amount or as fixed amounts; with a smart-tip threshold, fixed
 * amounts below it and percentages at or above it ("Below this amount, fixed amounts will be
 * displayed; above it, percentages will be displayed"). The simulator's reader and the in-memory
 * processor both show what this computes.
 */
export interface TippingConfig {
  percentages?: number[] | undefined;
  fixed_amounts?: number[] | undefined;
  smart_tip_threshold?: number | undefined;
}

export interface TipOption {
  /** 1, 2, 3: the button's place on the screen, left to right. */
  option: number;
  /** Null for a fixed amount. */
  percentage: number | null;
  amount: number;
  label: string;
}

export interface TipSuggestions {
  kind: 'percentages' | 'fixed_amounts';
  eligible_amount: number;
  options: TipOption[];
}

/** Stripe's readers show three tip buttons; a configuration may name at most three of each kind. */
export const MAX_TIP_OPTIONS = 3;
/** Stripe refuses tip percentages outside 1–100 ("Tip percentages must be integers in the range 1% to 100%"). */
export const MAX_TIP_PERCENTAGE = 100;

/** A percentage of a minor-unit amount, rounded half up to the minor unit (zero-decimal currencies included). */
export function percentageTip(eligibleAmount: number, percentage: number): number {
  return Math.round((eligibleAmount * percentage) / 100);
}

export function tipSuggestions(config: TippingConfig, eligibleAmount: number, currency: string): TipSuggestions | null {
  const percentages = config.percentages ?? [];
  const fixed = config.fixed_amounts ?? [];
  if (percentages.length === 0 && fixed.length === 0) return null;
  const useFixed = fixed.length > 0 && (percentages.length === 0 || (config.smart_tip_threshold !== undefined && eligibleAmount < config.smart_tip_threshold));
  if (useFixed) {
    return {
      kind: 'fixed_amounts',
      eligible_amount: eligibleAmount,
      options: fixed.slice(0, MAX_TIP_OPTIONS).map((amount, i) => ({ option: i + 1, percentage: null, amount, label: formatAmount(amount, currency) })),
    };
  }
  return {
    kind: 'percentages',
    eligible_amount: eligibleAmount,
    options: percentages.slice(0, MAX_TIP_OPTIONS).map((percentage, i) => {
      const amount = percentageTip(eligibleAmount, percentage);
      return { option: i + 1, percentage, amount, label: `${percentage}% (${formatAmount(amount, currency)})` };
    }),
  };
}
