import type Stripe from 'stripe';

/**
 * Stripe's fees as balance transactions show them: the processing fee of a captured charge and the
 * dispute fee. The simulator applies Stripe's US list prices to every currency (in its minor unit);
 * it has no country or card-origin pricing.
 */

/**
 * Stripe's US dispute fee, $15.00: debited with the disputed amount when a chargeback opens and
 * returned if the dispute is won (support.stripe.com, "Dispute fees FAQ"). Inquiries carry none.
 */
export const DISPUTE_FEE = 1_500;

/** US online cards: 2.9% + 30¢ (stripe.com/pricing). */
const CARD_RATE = 0.029;
const CARD_FIXED = 30;
/** US Terminal (card present): 2.7% + 5¢. */
const CARD_PRESENT_RATE = 0.027;
const CARD_PRESENT_FIXED = 5;
/** US ACH Direct Debit: 0.8%, capped at $5.00. */
const ACH_RATE = 0.008;
const ACH_CAP = 500;

/** US bank transfers paid from a customer's cash balance: 0.5%, capped at $5.00. */
const BANK_TRANSFER_RATE = 0.005;
const BANK_TRANSFER_CAP = 500;

/** Stripe's processing fee on `amount` captured with a payment method of `type`. */
export function processingFee(amount: number, type: string): number {
  if (amount <= 0) return 0;
  if (type === 'us_bank_account') return Math.min(Math.round(amount * ACH_RATE), ACH_CAP);
  if (type === 'customer_balance') return Math.min(Math.round(amount * BANK_TRANSFER_RATE), BANK_TRANSFER_CAP);
  if (type === 'card_present' || type === 'interac_present') return Math.round(amount * CARD_PRESENT_RATE) + CARD_PRESENT_FIXED;
  return Math.round(amount * CARD_RATE) + CARD_FIXED;
}

export function stripeFee(amount: number, currency: string, description: string): Stripe.BalanceTransaction.FeeDetail {
  return { amount, application: null, currency, description, type: 'stripe_fee' };
}

export function applicationFee(amount: number, currency: string): Stripe.BalanceTransaction.FeeDetail {
  return { amount, application: 'ca_simulator', currency, description: 'Application fee', type: 'application_fee' };
}
