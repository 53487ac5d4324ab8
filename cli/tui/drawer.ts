import { formatPlain, parseDrawerAmount } from '../amount.js';

/**
 * The close-out's drawer count at the counter, pure like state.ts: staff press k on the day view,
 * type the opening float (Enter alone: none), then the cash counted in the drawer; the day view
 * then shows the cash expected and whether the drawer is over, short or balanced. Amounts are read
 * by the counter's one parser (cli/amount.ts), as sales are: "7,50" is 7.50.
 */

export interface DrawerEntry {
  step: 'float' | 'counted';
  text: string;
  error: string | null;
}

export interface DrawerState {
  /** Minor units the drawer started the day with. */
  float: number;
  /** Minor units counted at the close; null until counted. */
  counted: number | null;
  /** The count being typed, or null. */
  entry: DrawerEntry | null;
}

export type DrawerAction =
  | { type: 'drawer_open'; currency: string }
  | { type: 'drawer_input'; text: string }
  | { type: 'drawer_backspace' }
  | { type: 'drawer_enter'; currency: string }
  | { type: 'drawer_close' };

export const emptyDrawer = (): DrawerState => ({ float: 0, counted: null, entry: null });

/** What a field may hold as typed: digits, one decimal separator, a `c` for minor units (as the charge field). */
const TYPABLE = /^[0-9.,cC]$/;
/** Longer than any amount the API takes (99999999c is 10 characters); stops a stuck key filling the line. */
const MAX_TEXT = 12;

export function reduceDrawer(drawer: DrawerState, action: DrawerAction): DrawerState {
  const entry = drawer.entry;
  switch (action.type) {
    case 'drawer_open':
      // A second count starts from the float already given: Enter keeps it.
      return { ...drawer, entry: { step: 'float', text: drawer.float ? formatPlain(drawer.float, action.currency) : '', error: null } };
    case 'drawer_input': {
      if (!entry) return drawer;
      const bad = [...action.text].find((ch) => !TYPABLE.test(ch));
      if (bad !== undefined) return { ...drawer, entry: { ...entry, error: `"${bad}" is not part of an amount: type it like 112.50 or 112,50.` } };
      return { ...drawer, entry: { ...entry, text: (entry.text + action.text).slice(0, MAX_TEXT), error: null } };
    }
    case 'drawer_backspace':
      return entry ? { ...drawer, entry: { ...entry, text: entry.text.slice(0, -1), error: null } } : drawer;
    case 'drawer_close':
      return { ...drawer, entry: null };
    case 'drawer_enter': {
      if (!entry) return drawer;
      const text = entry.text.trim();
      if (entry.step === 'float') {
        if (text === '') return { ...drawer, float: 0, entry: { step: 'counted', text: '', error: null } };
        const float = parse(text, action.currency, 'Float');
        return typeof float === 'string' ? { ...drawer, entry: { ...entry, error: float } } : { ...drawer, float, entry: { step: 'counted', text: '', error: null } };
      }
      if (text === '') return { ...drawer, entry: { ...entry, error: 'Type the cash counted in the drawer (0 if it is empty).' } };
      const counted = parse(text, action.currency, 'Counted cash');
      return typeof counted === 'string' ? { ...drawer, entry: { ...entry, error: counted } } : { ...drawer, counted, entry: null };
    }
  }
}

/** The amount, or what is wrong with it in words. */
function parse(text: string, currency: string, label: string): number | string {
  try {
    return parseDrawerAmount(text, currency);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return `${label}: ${message.replace(/^amount /, '')}`;
  }
}

export const DRAWER_ACTIONS = new Set<string>(['drawer_open', 'drawer_input', 'drawer_backspace', 'drawer_enter', 'drawer_close']);

export function isDrawerAction(action: { type: string }): action is DrawerAction {
  return DRAWER_ACTIONS.has(action.type);
}
