import { parseAmount } from './amount.js';
import { usageError } from './errors.js';

export interface CartLine {
  description: string;
  quantity: number;
  /** Unit price, minor units. */
  amount: number;
}

/** A line's quantity as typed at a counter; the API's cap (MAX_LINE_QUANTITY) is the same. */
const MAX_QUANTITY = 10_000;

/**
 * A cart line as typed on the command line: `DESCRIPTION:PRICE` or `DESCRIPTION:PRICExQTY`, the
 * price as `parseAmount` reads it (`Coffee:3.50x2`, `Bagel:250c`). The last colon separates the
 * price, so a description may hold colons.
 */
export function parseCartLine(input: string, currency: string): CartLine {
  const at = input.lastIndexOf(':');
  const description = at > 0 ? input.slice(0, at).trim() : '';
  if (!description) throw usageError(`item "${input}" needs a description and a price: write e.g. "Coffee:3.50x2"`);
  const m = /^(.+?)(?:[x×](\d+))?$/i.exec(input.slice(at + 1).trim());
  if (!m?.[1]) throw usageError(`item "${input}" has no price: write e.g. "Coffee:3.50x2"`);
  const quantity = m[2] === undefined ? 1 : Number(m[2]);
  if (!Number.isInteger(quantity) || quantity < 1 || quantity > MAX_QUANTITY) throw usageError(`item "${input}": the quantity must be a whole number from 1 to ${MAX_QUANTITY}`);
  return { description, quantity, amount: parseAmount(m[1], currency) };
}

export function cartTotal(lines: readonly CartLine[], tax = 0): number {
  return lines.reduce((sum, line) => sum + line.quantity * line.amount, tax);
}
