import { Box, Text } from 'ink';
import { money } from '../../format.js';
import { cartTotal, type CartState, type CartStep } from '../cart.js';
import type { Theme } from '../theme.js';

/** Lines shown at once: the charge screen has 14 rows, and the reader, the error and the total need theirs. */
const SHOWN_LINES = 7;
/** A description's width on screen; the reader and the receipt get it whole. */
const DESCRIPTION_WIDTH = 32;

const PROMPTS: Record<CartStep, string> = { description: 'Description', amount: 'Unit price', quantity: 'Quantity' };

const clip = (s: string, width: number) => (s.length > width ? `${s.slice(0, width - 1)}…` : s.padEnd(width));

/** The cart on the charge screen: its lines (the last few), the running total and the line being typed. */
export function CartView({ cart, currency, theme }: { cart: CartState; currency: string; theme: Theme }) {
  const hidden = Math.max(0, cart.lines.length - SHOWN_LINES);
  const draft = cart.draft;
  return (
    <Box flexDirection="column">
      <Text bold>{`Cart  ${cart.lines.length} ${cart.lines.length === 1 ? 'line' : 'lines'}`}</Text>
      {hidden > 0 ? <Text dimColor={theme.dim}>{`  … ${hidden} more above`}</Text> : null}
      {cart.lines.slice(hidden).map((line, i) => (
        <Text key={hidden + i}>{`  ${String(line.quantity).padStart(5)} × ${clip(line.description, DESCRIPTION_WIDTH)} @ ${money(line.amount, currency).padStart(10)}  ${money(line.quantity * line.amount, currency).padStart(12)}`}</Text>
      ))}
      <Text>
        {'Total   '}
        <Text bold>{money(cartTotal(cart.lines), currency)}</Text>
        <Text dimColor={theme.dim}>{`  ${currency.toUpperCase()}`}</Text>
      </Text>
      {draft ? (
        <Text>
          {`New line  ${draft.step === 'description' ? '' : `${clip(draft.description, DESCRIPTION_WIDTH).trimEnd()}${draft.amount !== null ? ` @ ${money(draft.amount, currency)}` : ''} · `}${PROMPTS[draft.step]}: `}
          <Text bold>{`${draft.step === 'description' ? draft.text.slice(-DESCRIPTION_WIDTH) : draft.text}_`}</Text>
          {draft.step === 'quantity' && draft.text === '' ? <Text dimColor={theme.dim}>  (Enter alone: 1)</Text> : null}
        </Text>
      ) : null}
      {cart.error ? <Text color={theme.bad}>{cart.error}</Text> : null}
    </Box>
  );
}
