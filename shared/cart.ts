/**
 * A cart's limits, shared by the API (shared/contract/terminal.ts), the agent's local protocol
 * and the counter, so each refuses the same cart with its own words before the next one is asked.
 */

/** Stripe's cap on a cart line's description (`cart[line_items][][description]`). */
export const MAX_LINE_DESCRIPTION = 5000;
/**
 * Lines on one cart. Stripe states no cap; a hundred is far past a counter sale and keeps the
 * reader's screen (and the stored row) small.
 */
export const MAX_LINE_ITEMS = 100;
/** A line's quantity: a counter sells units, not tonnes; this keeps quantity × amount a safe integer. */
export const MAX_LINE_QUANTITY = 10_000;

export interface LineItem {
  description: string;
  quantity: number;
  /** Unit price, minor units. */
  amount: number;
}
