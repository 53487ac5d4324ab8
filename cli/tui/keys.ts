import { historyRows, inFlight, isBusy, selectedReader, VIEWS, type Action, type CounterState, type HistoryFilter, type View } from './state.js';
import type { CartAction } from './cart.js';

/** Keyboard only: what a key press means in the current state. Pure, so it is tested without a terminal. */

export interface KeyInfo {
  tab?: boolean;
  shift?: boolean;
  return?: boolean;
  escape?: boolean;
  backspace?: boolean;
  delete?: boolean;
  upArrow?: boolean;
  downArrow?: boolean;
  leftArrow?: boolean;
  rightArrow?: boolean;
  pageUp?: boolean;
  pageDown?: boolean;
  ctrl?: boolean;
}

const CTRL_U = '\u0015';

/**
 * One key press per entry, in order. Ink hands over a burst of keys that arrive together (a paste,
 * a USB keypad or barcode scanner, a laggy SSH link) as one string: "12\r" would be neither "1"
 * nor Enter. Escape sequences (arrows, …) already arrive one per call and pass through unchanged.
 */
export function splitKeys(input: string, key: KeyInfo): [string, KeyInfo][] {
  const flagged = Object.values(key).some(Boolean);
  if ([...input].length <= 1 || (flagged && !/[\r\n\t\u007f\b]/.test(input))) {
    if (input === CTRL_U) return [['u', { ctrl: true }]];
    return [[input, key]];
  }
  const out: [string, KeyInfo][] = [];
  for (const ch of input) {
    if (ch === '\r' || ch === '\n') out.push(['', { return: true }]);
    else if (ch === '\t') out.push(['', { tab: true }]);
    else if (ch === '\u007f' || ch === '\b') out.push(['', { backspace: true }]);
    else if (ch === CTRL_U) out.push(['u', { ctrl: true }]);
    else if (ch === '\u001b') out.push(['', { escape: true }]);
    else if (ch >= ' ') out.push([ch, {}]);
  }
  return out;
}

export type Intent =
  | { kind: 'dispatch'; action: Action }
  | { kind: 'start_charge' }
  /** The payment on screen goes to its reader again (after a customer's cancel, a decline or a timeout). */
  | { kind: 'resend_payment' }
  | { kind: 'cancel_payment' }
  | { kind: 'cancel_reader_payment'; transactionId: string }
  | { kind: 'simulate_tap' }
  | { kind: 'create_link' }
  | { kind: 'refund'; transactionId: string }
  | { kind: 'load_report' }
  | { kind: 'start_cash' }
  /** `/`: the amount typed (or the cart) is a sale to be paid in parts. */
  | { kind: 'start_split' }
  /** `part`: less cash than due is taken as part of the sale (split tender), not refused. */
  | { kind: 'cash_submit'; part?: boolean }
  | { kind: 'open_drawer' }
  | { kind: 'reprint'; transactionId: string }
  /** Staff said yes to "Print receipt?" after a sale. */
  | { kind: 'print_sale_receipt'; transactionId: string }
  | { kind: 'quit' };

const go = (view: View): Intent => ({ kind: 'dispatch', action: { type: 'view', view } });
const VIEW_KEYS: Record<string, View> = { c: 'charge', r: 'readers', h: 'transactions', d: 'day' };

const FILTERS: HistoryFilter[] = ['all', 'counter', 'online'];
const page = (p: number, filter?: HistoryFilter): Intent => ({ kind: 'dispatch', action: { type: 'history_page', page: p, ...(filter ? { filter } : {}) } });

export function intentFor(state: CounterState, input: string, key: KeyInfo): Intent | null {
  if (state.intro) return { kind: 'dispatch', action: { type: 'intro_done' } };
  if (state.confirmQuit) {
    if (input === 'y' || input === 'Y') return { kind: 'quit' };
    return { kind: 'dispatch', action: { type: 'confirm_quit', asking: false } };
  }
  if (state.cash) {
    const cash = state.cash;
    if (cash.phase === 'tendered') {
      if (key.return) return { kind: 'cash_submit' };
      if (input === '/') return { kind: 'cash_submit', part: true };
      if (key.escape) return { kind: 'dispatch', action: { type: 'cash_close' } };
      if (key.backspace || key.delete) return { kind: 'dispatch', action: { type: 'cash_backspace' } };
      if (/^[0-9.,]+$/.test(input)) return { kind: 'dispatch', action: { type: 'cash_input', text: input } };
      return null;
    }
    if (cash.phase === 'done' && cash.askReceipt && cash.result) {
      if (input === 'y' || input === 'Y') return { kind: 'print_sale_receipt', transactionId: cash.result.transaction?.id ?? cash.result.offline?.local_reference ?? '' };
      if (input === 'n' || input === 'N') return { kind: 'dispatch', action: { type: 'receipt_answered' } };
    }
    if (cash.phase === 'done' && (key.return || key.escape)) return { kind: 'dispatch', action: { type: 'cash_close' } };
    return null;
  }
  if (state.view === 'day' && state.drawer.entry) {
    // Counting the drawer: every key belongs to the amount being typed (q is not quit here).
    if (key.return) return { kind: 'dispatch', action: { type: 'drawer_enter', currency: state.currency } };
    if (key.escape || (key.ctrl && input === 'u')) return { kind: 'dispatch', action: { type: 'drawer_close' } };
    if (key.backspace || key.delete) return { kind: 'dispatch', action: { type: 'drawer_backspace' } };
    if (input !== '' && !key.ctrl && !key.tab) return { kind: 'dispatch', action: { type: 'drawer_input', text: input } };
    return null;
  }
  if (key.tab) {
    const i = VIEWS.indexOf(state.view);
    return go(VIEWS[(i + (key.shift ? VIEWS.length - 1 : 1)) % VIEWS.length]!);
  }
  const charge = state.charge;
  if (state.view === 'charge') {
    if (charge.phase === 'entry') {
      const cart = charge.cart;
      const dispatchCart = (action: CartAction): Intent => ({ kind: 'dispatch', action });
      if (cart.draft) {
        // Typing a line: every key belongs to it (q is a letter of "Croque monsieur", not quit).
        if (key.return) return dispatchCart({ type: 'cart_next' });
        if (key.escape || (key.ctrl && input === 'u')) return dispatchCart({ type: 'cart_close' });
        if (key.backspace || key.delete) return dispatchCart({ type: 'cart_backspace' });
        if (input !== '' && !key.ctrl) return dispatchCart({ type: 'cart_input', text: input });
        return null;
      }
      if (input === '+') {
        if (charge.amountText !== '') return { kind: 'dispatch', action: { type: 'notice', text: 'An amount is typed: Esc clears it before a cart is started with +.' } };
        return dispatchCart({ type: 'cart_open' });
      }
      if (input === '-' && cart.lines.length > 0) return dispatchCart({ type: 'cart_remove_last' });
      if (cart.lines.length > 0 && /^[0-9.,cC]+$/.test(input)) return { kind: 'dispatch', action: { type: 'notice', text: 'The cart sets the amount: + adds a line, - takes the last off, Esc clears the cart.' } };
      if (charge.confirmRepeat) {
        // "Charge $7.50 again? y/n": only y charges; Enter again is the accident this prompt is for.
        if (input === 'y' || input === 'Y') return { kind: 'start_charge' };
        if (!/^[0-9.,]+$/.test(input)) return { kind: 'dispatch', action: { type: 'confirm_repeat', asking: false } };
      }
      if (key.return) {
        // On a split sale an empty field is what is still due, shown on the screen: nothing to repeat.
        if (charge.amountText !== '' || cart.lines.length > 0 || state.split) return { kind: 'start_charge' };
        return state.lastAmount ? { kind: 'dispatch', action: { type: 'confirm_repeat', asking: true } } : { kind: 'dispatch', action: { type: 'notice', text: 'Type an amount, then Enter.' } };
      }
      if (key.escape && state.split && charge.amountText === '') return { kind: 'dispatch', action: { type: 'split_cancel' } };
      if (key.backspace || key.delete) return { kind: 'dispatch', action: { type: 'amount_backspace' } };
      if (key.escape || (key.ctrl && input === 'u')) return { kind: 'dispatch', action: { type: 'amount_clear' } };
      if (key.upArrow || key.leftArrow) return { kind: 'dispatch', action: { type: 'select_reader', delta: -1 } };
      if (key.downArrow || key.rightArrow) return { kind: 'dispatch', action: { type: 'select_reader', delta: 1 } };
      if (/^[0-9.,cC]+$/.test(input)) return { kind: 'dispatch', action: { type: 'amount_input', text: input } };
      if (input === '$') return { kind: 'start_cash' };
      if (input === '/') return { kind: 'start_split' };
      if (input === 'o' && charge.amountText === '') return { kind: 'open_drawer' };
      const reader = selectedReader(state);
      if (input === 'x' && inFlight(reader)) return { kind: 'cancel_reader_payment', transactionId: reader.payment.id };
      // A letter typed into a half-written amount is a slip, never a command (q must not quit).
      if (charge.amountText !== '' && input !== '') return { kind: 'dispatch', action: { type: 'notice', text: `"${input}" is not part of an amount: Esc clears the field.` } };
    } else if (isBusy(charge)) {
      if (input === 'a' && charge.phase === 'canceled_on_reader' && !charge.canceling) return { kind: 'resend_payment' };
      if (input === 'x') return { kind: 'cancel_payment' };
      if (input === 's' && state.mode === 'test' && charge.phase === 'waiting' && !charge.tapSent) return { kind: 'simulate_tap' };
      if (input === 'q') return { kind: 'dispatch', action: { type: 'notice', text: 'A payment is under way: wait for it, or press x to cancel it, before quitting.' } };
      return null;
    } else if (charge.phase === 'declined' && charge.transactionId && input === 'a') {
      return { kind: 'resend_payment' };
    } else if (charge.phase === 'approved' && !charge.receiptPrompt && charge.transactionId && input === 'R') {
      return { kind: 'reprint', transactionId: charge.transactionId };
    } else if (charge.phase === 'offline') {
      if (input === 'l') return { kind: 'create_link' };
      if (key.escape || key.return) return { kind: 'dispatch', action: { type: 'new_charge' } };
    } else if (charge.phase === 'approved' && charge.receiptPrompt && charge.transactionId && (input === 'y' || input === 'Y')) {
      return { kind: 'print_sale_receipt', transactionId: charge.transactionId };
    } else if (charge.phase === 'approved' && charge.receiptPrompt && (input === 'n' || input === 'N')) {
      return { kind: 'dispatch', action: { type: 'receipt_answered' } };
    } else if (key.return || key.escape) {
      return { kind: 'dispatch', action: { type: 'new_charge' } };
    }
  }
  if (state.view === 'readers') {
    if (key.upArrow) return { kind: 'dispatch', action: { type: 'select_reader', delta: -1 } };
    if (key.downArrow) return { kind: 'dispatch', action: { type: 'select_reader', delta: 1 } };
    if (key.return) return go('charge');
  }
  if (state.view === 'transactions') {
    if (state.confirmRefund) {
      if (input === 'y') return { kind: 'refund', transactionId: state.confirmRefund };
      return { kind: 'dispatch', action: { type: 'confirm_refund', transactionId: null } };
    }
    if (key.upArrow) return { kind: 'dispatch', action: { type: 'select_transaction', delta: -1 } };
    if (key.downArrow) return { kind: 'dispatch', action: { type: 'select_transaction', delta: 1 } };
    if (key.pageDown || input === 'n') return state.history.page < state.history.lastPage ? page(state.history.page + 1) : null;
    if (key.pageUp || input === 'p') return state.history.page > 1 ? page(state.history.page - 1) : null;
    if (input === 'm') return page(1, FILTERS[(FILTERS.indexOf(state.history.filter) + 1) % FILTERS.length]);
    const t = historyRows(state)[state.selectedTransaction];
    if (input === 'R' && t) {
      if (!['succeeded', 'partially_refunded', 'refunded'].includes(t.status)) return { kind: 'dispatch', action: { type: 'notice', text: `Only paid payments have a receipt (${t.reference} is ${t.status}).` } };
      return { kind: 'reprint', transactionId: t.id };
    }
    if (input === 'f' && t) {
      if (t.status !== 'succeeded' && t.status !== 'partially_refunded') return { kind: 'dispatch', action: { type: 'notice', text: `Only paid payments can be refunded (${t.reference} is ${t.status}).` } };
      return { kind: 'dispatch', action: { type: 'confirm_refund', transactionId: t.id } };
    }
  }
  if (state.view === 'day' && input === 'g') return { kind: 'load_report' };
  if (state.view === 'day' && input === 'k') return { kind: 'dispatch', action: { type: 'drawer_open', currency: state.currency } };
  if (key.escape && state.view !== 'charge') return go('charge');
  if (input === 'q') return state.quitWarning ? { kind: 'dispatch', action: { type: 'confirm_quit', asking: true } } : { kind: 'quit' };
  const view = VIEW_KEYS[input];
  if (view && !(state.view === 'charge' && charge.phase === 'entry' && input === 'c')) return go(view);
  return null;
}

/**
 * The key bar on one line of `width` columns: hints are listed most needed first, so the ones just
 * before the last (`q quit`, always kept) give way first on a narrow terminal, never by wrapping.
 */
export function fitHints(hints: string, width: number): string {
  const items = hints.split(' · ');
  while (items.length > 2 && items.join(' · ').length > width - 1) items.splice(items.length - 2, 1);
  return items.join(' · ');
}

/** The key bar's hints for the current state, most needed first (see fitHints). */
export function hintsFor(state: CounterState): string {
  const c = state.charge;
  if (state.intro) return 'Press any key to open the counter';
  if (state.confirmQuit) return 'y quit · any other key: stay';
  if (state.cash) {
    if (state.cash.phase === 'tendered') return 'type the cash handed over (none: exact) · Enter take it · Esc back';
    if (state.cash.phase === 'done') return state.cash.askReceipt ? 'y print the receipt · n no receipt · Enter next sale' : 'Enter next sale';
    return 'Recording the cash sale…';
  }
  if (state.view === 'charge') {
    if (c.phase === 'entry' && c.confirmRepeat) return 'y charge it · any other key: no';
    if (c.phase === 'entry' && c.cart.draft) return `${c.cart.draft.step === 'quantity' ? 'Enter add the line (quantity 1 if empty)' : 'Enter next'} · Esc drop the line`;
    if (c.phase === 'entry' && c.cart.lines.length > 0) return `Enter charge the cart · + add item · - remove last · $ cash · Esc clear · ←→ reader · Tab views · q quit`;
    if (c.phase === 'entry' && state.split) return 'Enter card · $ cash · Esc clear · ←→ reader · Tab views';
    if (c.phase === 'entry') return `Enter card${inFlight(selectedReader(state)) ? ' · x cancel' : ''} · + cart · $ cash · o no sale · Esc clear · ←→ reader · Tab views · q quit`;
    if (c.phase === 'waiting') return `${state.mode === 'test' && !c.tapSent ? 's simulate tap · ' : ''}x cancel payment`;
    if (c.phase === 'canceled_on_reader') return 'a send to the reader again · x cancel payment';
    if (c.phase === 'processing' || c.phase === 'starting') return 'x cancel payment';
    if (c.phase === 'offline') return 'l payment link · Esc back';
    if (c.phase === 'approved' && c.receiptPrompt) return 'y print the receipt · n no receipt · Enter next sale · q quit';
    if (c.phase === 'approved') return 'Enter next sale · R print the receipt again · Tab/r/h/d views · q quit';
    if (c.phase === 'declined' && c.transactionId) return 'a send to the reader again · Enter next sale · Tab/r/h/d views · q quit';
    return 'Enter next sale · Tab/r/h/d views · q quit';
  }
  if (state.view === 'transactions') return state.confirmRefund ? 'y refund · any other key: keep' : '↑↓ select · f refund · R reprint · n/p pages · m counter/online · c charge · q quit';
  if (state.view === 'readers') return '↑↓ select · Enter charge on it · c charge · q quit';
  if (state.view === 'day' && state.drawer.entry) {
    return state.drawer.entry.step === 'float' ? 'type the opening float (Enter alone: none) · Enter next · Esc back' : 'type the cash counted in the drawer · Enter show over/short · Esc back';
  }
  return 'g refresh · k count the drawer · c charge · q quit';
}
