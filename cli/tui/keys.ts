import { isBusy, VIEWS, type Action, type CounterState, type View } from './state.js';

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
  ctrl?: boolean;
}

export type Intent =
  | { kind: 'dispatch'; action: Action }
  | { kind: 'start_charge' }
  | { kind: 'cancel_payment' }
  | { kind: 'simulate_tap' }
  | { kind: 'create_link' }
  | { kind: 'refund'; transactionId: string }
  | { kind: 'load_report' }
  | { kind: 'quit' };

const go = (view: View): Intent => ({ kind: 'dispatch', action: { type: 'view', view } });
const VIEW_KEYS: Record<string, View> = { c: 'charge', r: 'readers', h: 'transactions', d: 'day' };

export function intentFor(state: CounterState, input: string, key: KeyInfo): Intent | null {
  if (key.tab) {
    const i = VIEWS.indexOf(state.view);
    return go(VIEWS[(i + (key.shift ? VIEWS.length - 1 : 1)) % VIEWS.length]!);
  }
  const charge = state.charge;
  if (state.view === 'charge') {
    if (charge.phase === 'entry') {
      if (key.return) return { kind: 'start_charge' };
      if (key.backspace || key.delete) return { kind: 'dispatch', action: { type: 'amount_backspace' } };
      if (key.upArrow || key.leftArrow) return { kind: 'dispatch', action: { type: 'select_reader', delta: -1 } };
      if (key.downArrow || key.rightArrow) return { kind: 'dispatch', action: { type: 'select_reader', delta: 1 } };
      if (/^[0-9.cC]+$/.test(input)) return { kind: 'dispatch', action: { type: 'amount_input', text: input } };
    } else if (isBusy(charge)) {
      if (input === 'x') return { kind: 'cancel_payment' };
      if (input === 's' && state.mode === 'test' && charge.phase === 'waiting') return { kind: 'simulate_tap' };
      if (input === 'q') return { kind: 'dispatch', action: { type: 'notice', text: 'A payment is under way: wait for it, or press x to cancel it, before quitting.' } };
      return null;
    } else if (charge.phase === 'offline') {
      if (input === 'l') return { kind: 'create_link' };
      if (key.escape || key.return) return { kind: 'dispatch', action: { type: 'new_charge' } };
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
    const t = state.transactions[state.selectedTransaction];
    if (input === 'f' && t) {
      if (t.status !== 'succeeded' && t.status !== 'partially_refunded') return { kind: 'dispatch', action: { type: 'notice', text: `Only paid payments can be refunded (${t.reference} is ${t.status}).` } };
      return { kind: 'dispatch', action: { type: 'confirm_refund', transactionId: t.id } };
    }
  }
  if (state.view === 'day' && input === 'g') return { kind: 'load_report' };
  if (key.escape && state.view !== 'charge') return go('charge');
  if (input === 'q') return { kind: 'quit' };
  const view = VIEW_KEYS[input];
  if (view && !(state.view === 'charge' && charge.phase === 'entry' && input === 'c')) return go(view);
  return null;
}

/** The key bar's hints for the current state. */
export function hintsFor(state: CounterState): string {
  const c = state.charge;
  if (state.view === 'charge') {
    if (c.phase === 'entry') return 'Enter charge · ←→ reader · Tab/r/h/d views · q quit';
    if (c.phase === 'waiting') return `${state.mode === 'test' ? 's simulate tap · ' : ''}x cancel payment`;
    if (c.phase === 'processing' || c.phase === 'starting') return 'x cancel payment (not once the card is read)';
    if (c.phase === 'canceled_on_reader') return 'x cancel payment';
    if (c.phase === 'offline') return 'l payment link · Esc back';
    return 'Enter next sale · Tab/r/h/d views · q quit';
  }
  if (state.view === 'transactions') return state.confirmRefund ? 'y refund · any other key: keep' : '↑↓ select · f refund · c charge · q quit';
  if (state.view === 'readers') return '↑↓ select · Enter charge on it · c charge · q quit';
  return 'g refresh · c charge · q quit';
}
