import { formatAmount } from '../../shared/money.js';
import { MAX_LINE_DESCRIPTION, MAX_LINE_ITEMS, MAX_LINE_QUANTITY, type LineItem } from '../../shared/cart.js';
import { MAX_AMOUNT, parseAmount } from '../amount.js';

/**
 * The charge screen's cart (pure, no Ink): `+` opens a line, typed in three steps (description,
 * unit price, quantity) each ended by Enter; `-` takes the last line off. The cart's total is what
 * Enter then charges, with the lines sent as the payment's line_items for the reader to show.
 * Refused here with words, before anything is sent: the API's limits (shared/cart.ts).
 */

export type CartStep = 'description' | 'amount' | 'quantity';

export interface CartDraft {
  step: CartStep;
  description: string;
  /** The unit price once its step is done, minor units. */
  amount: number | null;
  /** What is being typed at the current step. */
  text: string;
}

export interface CartState {
  lines: LineItem[];
  draft: CartDraft | null;
  error: string | null;
}

export type CartAction =
  | { type: 'cart_open' }
  | { type: 'cart_input'; text: string }
  | { type: 'cart_backspace' }
  | { type: 'cart_next' }
  | { type: 'cart_close' }
  | { type: 'cart_remove_last' }
  | { type: 'cart_clear' };

export const emptyCart = (): CartState => ({ lines: [], draft: null, error: null });

export function isCartAction(action: { type: string }): action is CartAction {
  return action.type.startsWith('cart_');
}

export function cartTotal(lines: readonly LineItem[]): number {
  return lines.reduce((sum, line) => sum + line.quantity * line.amount, 0);
}

/** A quantity field holds digits only, and no more than the largest quantity has. */
const QUANTITY_DIGITS = String(MAX_LINE_QUANTITY).length;

function next(cart: CartState, draft: CartDraft, currency: string): CartState {
  const text = draft.text.trim();
  if (draft.step === 'description') {
    if (text === '') return { ...cart, error: 'Type what is sold (a description), then Enter.' };
    if (text.length > MAX_LINE_DESCRIPTION) return { ...cart, error: `A description is at most ${MAX_LINE_DESCRIPTION} characters (this one has ${text.length}).` };
    return { ...cart, error: null, draft: { ...draft, step: 'amount', description: text, text: '' } };
  }
  if (draft.step === 'amount') {
    try {
      const amount = parseAmount(text, currency);
      return { ...cart, error: null, draft: { ...draft, step: 'quantity', amount, text: '' } };
    } catch (err) {
      return { ...cart, error: err instanceof Error ? err.message.replace(/^amount/, 'Price') : String(err) };
    }
  }
  const quantity = text === '' ? 1 : Number(text);
  if (!/^\d*$/.test(text) || !Number.isInteger(quantity) || quantity < 1 || quantity > MAX_LINE_QUANTITY) {
    return { ...cart, error: `The quantity is a whole number from 1 to ${MAX_LINE_QUANTITY.toLocaleString('en')}.` };
  }
  const line: LineItem = { description: draft.description, quantity, amount: draft.amount ?? 0 };
  const total = cartTotal(cart.lines) + line.quantity * line.amount;
  if (total > MAX_AMOUNT) return { ...cart, error: `That line would take the cart over the maximum charge of ${formatAmount(MAX_AMOUNT, currency)}.` };
  return { lines: [...cart.lines, line], draft: null, error: null };
}

export function reduceCart(cart: CartState, action: CartAction, currency: string): CartState {
  const draft = cart.draft;
  switch (action.type) {
    case 'cart_open':
      if (draft) return cart;
      if (cart.lines.length >= MAX_LINE_ITEMS) return { ...cart, error: `A cart holds at most ${MAX_LINE_ITEMS} lines.` };
      return { ...cart, error: null, draft: { step: 'description', description: '', amount: null, text: '' } };
    case 'cart_input': {
      if (!draft) return cart;
      // A description takes any printable text; a price and a quantity only what they can hold.
      const text =
        draft.step === 'description'
          ? (draft.text + action.text.replace(/[\u0000-\u001f\u007f]/g, '')).slice(0, MAX_LINE_DESCRIPTION + 1)
          : draft.step === 'amount'
            ? (draft.text + action.text).replace(/[^0-9.,c]/gi, '').slice(0, 12)
            : (draft.text + action.text).replace(/\D/g, '').slice(0, QUANTITY_DIGITS);
      return { ...cart, error: null, draft: { ...draft, text } };
    }
    case 'cart_backspace':
      return draft ? { ...cart, error: null, draft: { ...draft, text: draft.text.slice(0, -1) } } : cart;
    case 'cart_next':
      return draft ? next(cart, draft, currency) : cart;
    case 'cart_close':
      return { ...cart, draft: null, error: null };
    case 'cart_remove_last':
      return draft ? cart : { ...cart, lines: cart.lines.slice(0, -1), error: null };
    case 'cart_clear':
      return emptyCart();
  }
}
