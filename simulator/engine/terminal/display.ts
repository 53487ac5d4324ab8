import { formatAmount } from '../../../shared/money.js';
import type { ReaderDisplay } from './types.js';

/** The display as lines of text, top to bottom, for a person reading the control API. */
export function displayLines(d: ReaderDisplay): string[] {
  const money = (amount: number | null, currency: string | null) => (amount === null || currency === null ? '' : formatAmount(amount, currency));
  const lines: string[] = [];
  if (d.cart) {
    for (const item of d.cart.line_items) lines.push(`${item.quantity} x ${item.description}  ${money(item.amount * item.quantity, d.cart.currency)}`);
    if (d.cart.tax !== null) lines.push(`Tax  ${money(d.cart.tax, d.cart.currency)}`);
    lines.push(`Total  ${money(d.cart.total, d.cart.currency)}`);
  }
  switch (d.screen) {
    case 'idle':
      if (!d.cart) lines.push('Welcome');
      break;
    case 'cart':
      break;
    case 'tip_selection':
      lines.push(`Add a tip? ${money(d.amount, d.currency)}`);
      for (const o of d.tipping?.options ?? []) lines.push(`[${o.option}] ${o.label}`);
      lines.push('[custom] Custom amount', '[none] No tip');
      break;
    case 'collect_payment':
      if (d.tip !== null && d.tip > 0) lines.push(`Tip  ${money(d.tip, d.currency)}`);
      lines.push(`Tap, insert or swipe  ${money(d.total, d.currency)}`);
      break;
    case 'processing':
      lines.push(`Processing  ${money(d.total, d.currency)}`);
      break;
    case 'approved':
      lines.push(`Approved  ${money(d.total, d.currency)}`);
      break;
    case 'declined':
      lines.push(`Declined: ${d.message ?? ''}`);
      break;
    case 'canceled':
      lines.push(`Canceled: ${d.message ?? ''}`);
      break;
  }
  if (d.customer_cancellation && (d.screen === 'tip_selection' || d.screen === 'collect_payment')) lines.push('[cancel] Cancel');
  return lines;
}
