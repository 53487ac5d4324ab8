import type { Transaction } from '../../shared/api/types.js';
import { cancelWords, declineWords } from '../../shared/declines.js';
import { formatPlain } from '../amount.js';
import type { DayReport } from '../report.js';
import type { DeviceState, ReaderActivity, ReaderPayment } from '../../shared/agent-protocol.js';
import { type CartAction, type CartState, emptyCart, isCartAction, reduceCart } from './cart.js';
import { type CashAction, type CashState, isCashAction, reduceCash, reduceDevices } from './cash.js';
import { isCounterMethod } from '../../shared/channels.js';
import type { ReceiptPolicy } from '../../shared/receipt-policy.js';
import { type DrawerAction, type DrawerState, emptyDrawer, isDrawerAction, reduceDrawer } from './drawer.js';

/**
 * The counter's state and its one reducer: pure, no Ink, no I/O. Sources (the agent's websocket,
 * or polling the API) and key presses become actions; components only render this state.
 */

export type View = 'charge' | 'readers' | 'transactions' | 'day';
export const VIEWS: readonly View[] = ['charge', 'readers', 'transactions', 'day'];

export interface CounterReader {
  id: string;
  processor_terminal_id: string;
  name: string;
  status: 'online' | 'offline';
  last_seen_at: string | null;
  /** Only the agent knows this; polling leaves it null. */
  activity: ReaderActivity | null;
  /**
   * The payment on the reader as the server joined it to the reader (its amount, status and how it
   * ended), through the agent; polling leaves it null.
   */
  payment: ReaderPayment | null;
  /** What an approval on it prints by itself, when the agent says (`ask`: the counter asks staff). */
  receipt_policy?: ReceiptPolicy | undefined;
}

/** Why an error on the charge screen is there, so it goes away when its cause does. */
export type ErrorCause = 'input' | 'connection' | 'reader_busy' | 'other';

export type ChargePhase =
  | 'entry'
  | 'starting'
  | 'waiting'
  | 'processing'
  | 'approved'
  | 'declined'
  | 'canceled'
  | 'canceled_on_reader'
  | 'offline'
  | 'link';

export interface ChargeState {
  phase: ChargePhase;
  amountText: string;
  error: string | null;
  errorCause: ErrorCause | null;
  /** Minor units and currency of the payment under way. */
  amount: number | null;
  readerName: string | null;
  transactionId: string | null;
  result: Transaction | null;
  reason: string | null;
  link: { url: string; reference: string } | null;
  /** A cancel was sent and no answer came yet. */
  canceling: boolean;
  /** A simulated tap was sent; the screen still waits for the processor to say a card was read. */
  tapSent: boolean;
  /** The payment was already on the reader when the counter found it (after a restart, say). */
  adopted: boolean;
  /** Lines being sold (cart.ts): when there are any, their total is the amount charged. */
  cart: CartState;
  /** Approved on a reader whose location's receipt policy is `ask`: "Print receipt? y/n" until answered. */
  receiptPrompt: boolean;
  /** Enter on an empty field asks "Charge $7.50 again? y/n" instead of charging: y charges, any other key does not. */
  confirmRepeat: boolean;
  /**
   * The payment was sent to the reader again after a decline: its status stays `failed` until a card
   * is read, so a `failed` is taken as the answer only once the reader has shown it waiting again.
   */
  resent: 'sent' | 'on_reader' | null;
}

/**
 * One sale paid in parts: cash then a card, or two cards. Every part is its own payment carrying
 * the sale's `order` reference (in metadata, so on webhooks and receipts too); the sale stays open,
 * its paid parts kept, until the parts cover the total.
 */
export interface SplitState {
  order: string;
  /** Minor units the whole sale comes to. */
  total: number;
  parts: { transactionId: string; method: 'cash' | 'card'; amount: number }[];
}

export function splitPaid(split: SplitState): number {
  return split.parts.reduce((sum, p) => sum + p.amount, 0);
}

/** What is still due on a split sale. */
export function splitBalance(split: SplitState): number {
  return Math.max(0, split.total - splitPaid(split));
}

export type HistoryFilter = 'all' | 'counter' | 'online';

/**
 * The page of History on screen, fetched from /v1/transactions: the server filters by channel, so
 * every page of a filter is full. Page 1 of all payments is the live list.
 */
export interface HistoryState {
  page: number;
  lastPage: number;
  totalCount: number | null;
  filter: HistoryFilter;
  /** Rows of the page as fetched; null on page 1 of all payments, which shows the live list. */
  rows: Transaction[] | null;
  loading: boolean;
}

export interface CounterState {
  view: View;
  connection: 'connecting' | 'connected' | 'lost';
  connectionError: string | null;
  /**
   * The agent answers but cannot reach the server: it takes cash sales and keeps them until the
   * server is back (docs/agent.md, "Offline"), and nothing else.
   */
  cashOnly: boolean;
  /** Cash sales the agent keeps until they sync, and its refusal once its offline bound is reached. */
  offlineSales: { waiting: number; refused: number; limit: string | null };
  /** How live state arrives: the agent's websocket or polling /v1. */
  via: 'agent' | 'polling';
  mode: 'test' | 'live' | null;
  merchantName: string | null;
  currency: string;
  readers: CounterReader[];
  selectedReader: number;
  transactions: Transaction[];
  selectedTransaction: number;
  /** A refund waiting for "y". */
  confirmRefund: string | null;
  charge: ChargeState;
  report: DayReport | null;
  reportError: string | null;
  notice: string | null;
  /** A notice about the connection goes away when the connection comes back. */
  noticeCause: 'connection' | null;
  /** The amount Enter charges on an empty field: the last sale's, or a first test amount. */
  lastAmount: string | null;
  /** q was pressed where quitting stops something: waiting for y. */
  confirmQuit: boolean;
  /** What quitting stops ("the server and the agent"), when it stops anything: then q asks first. */
  quitWarning: string | null;
  history: HistoryState;
  /** Lines shown on a screen of their own until a key is pressed (the demo keys of a first run). */
  intro: string[] | null;
  /** A cash sale being taken (cash.ts), shown instead of the charge screen. */
  cash: CashState | null;
  /** The till's printer and display, as the agent reports them. */
  devices: DeviceState[];
  /** The close-out's drawer count as staff typed it on the day view (drawer.ts). */
  drawer: DrawerState;
  /** A sale being paid in parts, until its parts cover it. */
  split: SplitState | null;
}

export type Action =
  | { type: 'connection'; status: 'connected' | 'lost'; error?: string }
  | { type: 'cash_only'; on: boolean }
  | { type: 'offline_sales'; waiting: number; refused: number; limit: string | null }
  | { type: 'merchant'; name: string; mode: 'test' | 'live'; currency: string }
  | { type: 'readers'; readers: CounterReader[] }
  | { type: 'reader'; reader: CounterReader }
  | { type: 'transactions'; transactions: Transaction[] }
  | { type: 'transaction'; transaction: Transaction }
  | { type: 'view'; view: View }
  | { type: 'amount_input'; text: string }
  | { type: 'amount_backspace' }
  | { type: 'amount_clear' }
  | { type: 'select_reader'; delta: number }
  | { type: 'select_transaction'; delta: number }
  | { type: 'charge_starting'; amount: number; readerName: string }
  | { type: 'charge_started'; transactionId: string }
  | { type: 'charge_error'; message: string; cause?: ErrorCause }
  | { type: 'charge_offline'; amount: number; readerName: string }
  | { type: 'tap_sent' }
  | { type: 'cancel_sent' }
  | { type: 'cancel_answered' }
  | { type: 'link_created'; url: string; reference: string }
  | { type: 'new_charge' }
  | { type: 'confirm_refund'; transactionId: string | null }
  | { type: 'report'; report: DayReport }
  | { type: 'report_error'; message: string }
  | { type: 'notice'; text: string | null; cause?: 'connection' }
  | { type: 'confirm_quit'; asking: boolean }
  | { type: 'history_page'; page: number; filter?: HistoryFilter }
  | { type: 'history_loaded'; page: number; filter: HistoryFilter; lastPage: number; totalCount: number; rows: Transaction[] }
  | { type: 'history_failed'; message: string }
  | { type: 'intro_done' }
  /** Staff answered "Print receipt?" (y or n), on the charge or the cash screen. */
  | { type: 'receipt_answered' }
  /** A sale is to be paid in parts: the total, and the order reference its parts will carry. */
  | { type: 'split_start'; order: string; total: number }
  /** A part of the split sale was paid (a card part is recorded by its approval). */
  | { type: 'split_part'; transactionId: string; method: 'cash' | 'card'; amount: number }
  /** Esc on a split sale: dropped while nothing is paid; with a paid part it stays open. */
  | { type: 'split_cancel' }
  /** Enter on an empty field: ask before charging the last amount again (or stop asking). */
  | { type: 'confirm_repeat'; asking: boolean }
  /** The same payment went to the reader again (after a customer's cancel, a decline or a timeout). */
  | { type: 'charge_resent' }
  | CashAction
  | CartAction
  | DrawerAction;

export function newCharge(): ChargeState {
  return {
    phase: 'entry',
    amountText: '',
    error: null,
    errorCause: null,
    amount: null,
    readerName: null,
    transactionId: null,
    result: null,
    reason: null,
    link: null,
    canceling: false,
    tapSent: false,
    adopted: false,
    cart: emptyCart(),
    receiptPrompt: false,
    confirmRepeat: false,
    resent: null,
  };
}

/**
 * What Enter charges on an empty field the first time in test mode, so a newcomer's first charge
 * is one key away. 1,000 minor units is $10.00 or €10.00, and ¥1,000 in a zero-decimal currency:
 * above every currency's minimum charge.
 */
const TEST_MODE_MINOR = 1_000;

export function testModeAmount(currency: string): string {
  return formatPlain(TEST_MODE_MINOR, currency);
}

export interface CounterInit {
  via: 'agent' | 'polling';
  notice?: string | undefined;
  intro?: string[] | undefined;
  quitWarning?: string | undefined;
}

export function initialState(init: CounterInit): CounterState {
  return {
    view: 'charge',
    connection: 'connecting',
    connectionError: null,
    cashOnly: false,
    offlineSales: { waiting: 0, refused: 0, limit: null },
    via: init.via,
    mode: null,
    merchantName: null,
    currency: 'usd',
    readers: [],
    selectedReader: 0,
    transactions: [],
    selectedTransaction: 0,
    confirmRefund: null,
    charge: newCharge(),
    report: null,
    reportError: null,
    notice: init.notice ?? null,
    noticeCause: null,
    lastAmount: null,
    confirmQuit: false,
    quitWarning: init.quitWarning ?? null,
    history: { page: 1, lastPage: 1, totalCount: null, filter: 'all', rows: null, loading: false },
    intro: init.intro && init.intro.length > 0 ? init.intro : null,
    cash: null,
    devices: [],
    drawer: emptyDrawer(),
    split: null,
  };
}

/** How many payments a History page shows: a screen's worth at 80×24 under the header and key bar. */
export const RECENT_LIMIT = 12;

const FINAL = new Set(['succeeded', 'failed', 'canceled', 'refunded', 'partially_refunded']);

/** The charge screen once its payment ended: approved, declined (and why) or canceled (and why). */
function ended(charge: ChargeState, status: string, codes: { failure_code: string | null; decline_code: string | null; cancellation_reason: string | null }): ChargeState {
  if (charge.phase === 'approved' || charge.phase === 'declined' || charge.phase === 'canceled') return charge;
  const done = { ...charge, canceling: false, tapSent: false };
  if (status === 'failed') return { ...done, phase: 'declined', reason: declineWords(codes) };
  if (status === 'canceled') return { ...done, phase: 'canceled', reason: cancelWords(codes.cancellation_reason) };
  return { ...done, phase: 'approved' };
}

function applyTransaction(charge: ChargeState, t: Transaction): ChargeState {
  if (t.id !== charge.transactionId) return charge;
  // The decline before the payment was sent again is not this attempt's answer.
  if (charge.resent === 'sent' && t.status === 'failed') return charge;
  // A payment picked up from the reader learns its amount from the payment itself.
  const known = charge.amount === null ? { ...charge, amount: t.amount } : charge;
  if (!FINAL.has(t.status)) return known;
  // Set even when the reader's view ended the charge first: the approval shows the card and receipt.
  return ended({ ...known, result: t }, t.status, t);
}

/** A payment is on the reader and not finished, as the reader's view says. */
export function inFlight(r: CounterReader | undefined): r is CounterReader & { payment: ReaderPayment } {
  return Boolean(r?.payment) && r?.payment?.outcome === null && (r.activity === 'waiting_for_card' || r.activity === 'processing' || r.activity === 'canceled_on_reader');
}

const PHASE_OF: Record<string, ChargePhase> = { waiting_for_card: 'waiting', processing: 'processing', canceled_on_reader: 'canceled_on_reader' };

function applyReader(state: CounterState, charge: ChargeState, r: CounterReader): ChargeState {
  if (charge.transactionId && r.payment?.id === charge.transactionId) {
    if (charge.resent === 'sent') {
      // Sent again after a decline: the old `failed` stands until the reader shows the new attempt.
      if (r.activity !== 'waiting_for_card' && r.activity !== 'processing') return charge;
      charge = { ...charge, resent: 'on_reader' };
    }
    // A payment sent again keeps its old `failed` while the reader waits: only the reader's own decline ends it.
    const oldDecline = charge.resent !== null && r.payment.status === 'failed' && r.activity !== 'declined';
    // The reader's view says how its payment ended; the payment's own push adds its details.
    if (r.payment.outcome !== null && !oldDecline) return ended(charge, r.payment.status, r.payment);
    // The reader gave up on a payment that is still open (it timed out, or the processor failed its action).
    if (r.activity === 'declined' && r.payment.outcome === null && (charge.phase === 'waiting' || charge.phase === 'processing')) {
      return { ...charge, phase: 'declined', canceling: false, tapSent: false, reason: 'The reader stopped waiting for a card: the payment is still open' };
    }
    if (charge.phase !== 'waiting' && charge.phase !== 'processing' && charge.phase !== 'canceled_on_reader') return charge;
    const phase = r.activity ? PHASE_OF[r.activity] : undefined;
    // "Processing" comes only from the processor (the intent is processing): a key press never sets it.
    return phase ? { ...charge, phase, tapSent: phase === 'processing' ? false : charge.tapSent } : charge;
  }
  const selected = state.readers[state.selectedReader];
  if (selected?.id !== r.id) return charge;
  // The refusal "reader busy" is about this reader: it goes once the reader is free.
  if (charge.errorCause === 'reader_busy' && !inFlight(r)) return { ...charge, error: null, errorCause: null };
  // A payment already on the selected reader (the counter restarted while it waited for a card):
  // shown as the sale under way, so staff can follow it or cancel it. Not while staff are typing.
  if (charge.phase === 'entry' && charge.amountText === '' && charge.cart.lines.length === 0 && !charge.cart.draft && inFlight(r)) {
    return {
      ...newCharge(),
      phase: PHASE_OF[r.activity ?? ''] ?? 'waiting',
      transactionId: r.payment.id,
      amount: r.payment.amount,
      readerName: r.name,
      adopted: true,
    };
  }
  return charge;
}

/** A payment just approved on a reader whose receipts are `ask`: the approval screen asks "Print receipt?". */
function askReceipt(state: CounterState, before: ChargeState, after: ChargeState): ChargeState {
  if (before.phase === 'approved' || after.phase !== 'approved') return after;
  const reader = state.readers.find((r) => r.name === after.readerName);
  return reader?.receipt_policy === 'ask' ? { ...after, receiptPrompt: true } : after;
}

function upsert(list: Transaction[], t: Transaction): Transaction[] {
  const i = list.findIndex((x) => x.id === t.id);
  if (i >= 0) return list.map((x) => (x.id === t.id ? t : x));
  return [t, ...list].slice(0, RECENT_LIMIT);
}

const clamp = (n: number, len: number) => (len === 0 ? 0 : Math.max(0, Math.min(len - 1, n)));

export function reduce(state: CounterState, action: Action): CounterState {
  return followSplit(state, reduceCounter(state, action), action);
}

/**
 * A split sale follows the screens: a card approved while it is open is one of its parts, and once
 * the parts cover the total, leaving the last part's screen closes the sale with a line saying so.
 */
function followSplit(before: CounterState, after: CounterState, action: Action): CounterState {
  const split = after.split;
  if (!split) return after;
  const c = after.charge;
  if (before.charge.phase !== 'approved' && c.phase === 'approved' && c.transactionId && c.amount !== null && !split.parts.some((p) => p.transactionId === c.transactionId)) {
    return { ...after, split: { ...split, parts: [...split.parts, { transactionId: c.transactionId, method: 'card', amount: c.result?.amount ?? c.amount }] } };
  }
  const leaving = action.type === 'new_charge' || action.type === 'cash_close';
  if (leaving && splitBalance(split) === 0 && split.parts.length > 0) {
    const words = split.parts.map((p) => `${formatPlain(p.amount, after.currency)} ${p.method}`).join(' + ');
    return { ...after, split: null, notice: `Sale ${split.order} paid in full: ${words}.` };
  }
  return after;
}

function reduceCounter(state: CounterState, action: Action): CounterState {
  if (isCashAction(action)) {
    const cash = reduceCash(state.cash, action);
    const devices = reduceDevices(state.devices, action);
    return cash === state.cash && devices === state.devices ? state : { ...state, cash, devices };
  }
  if (isDrawerAction(action)) {
    const drawer = reduceDrawer(state.drawer, action);
    return drawer === state.drawer ? state : { ...state, drawer };
  }
  if (isCartAction(action)) {
    if (state.charge.phase !== 'entry') return state;
    const cart = reduceCart(state.charge.cart, action, state.currency);
    return cart === state.charge.cart ? state : { ...state, charge: { ...state.charge, cart, error: null, errorCause: null } };
  }
  switch (action.type) {
    case 'cash_only':
      return state.cashOnly === action.on ? state : { ...state, cashOnly: action.on };
    case 'offline_sales':
      return { ...state, offlineSales: { waiting: action.waiting, refused: action.refused, limit: action.limit } };
    case 'connection': {
      if (action.status === state.connection && action.status === 'connected') return state;
      if (action.status === 'lost') return { ...state, connection: 'lost', connectionError: action.error ?? 'no answer' };
      // Back: whatever the loss caused is no longer true.
      const charge = state.charge.errorCause === 'connection' ? { ...state.charge, error: null, errorCause: null } : state.charge;
      return { ...state, connection: 'connected', connectionError: null, charge, ...(state.noticeCause === 'connection' ? { notice: null, noticeCause: null } : {}) };
    }
    case 'merchant': {
      const lastAmount = state.lastAmount ?? (state.mode === null && action.mode === 'test' ? testModeAmount(action.currency) : null);
      return { ...state, merchantName: action.name, mode: action.mode, currency: action.currency, lastAmount };
    }
    case 'readers': {
      const selected = state.readers[state.selectedReader];
      let index = selected ? action.readers.findIndex((r) => r.id === selected.id) : -1;
      if (index < 0) index = Math.max(0, action.readers.findIndex((r) => r.status === 'online'));
      const next = { ...state, readers: action.readers, selectedReader: clamp(index, action.readers.length) };
      let charge = state.charge;
      for (const r of action.readers) charge = applyReader(next, charge, r);
      return { ...next, charge: askReceipt(next, state.charge, charge) };
    }
    case 'reader': {
      const exists = state.readers.some((r) => r.id === action.reader.id);
      const readers = exists ? state.readers.map((r) => (r.id === action.reader.id ? action.reader : r)) : [...state.readers, action.reader];
      const next = { ...state, readers };
      return { ...next, charge: askReceipt(next, state.charge, applyReader(next, state.charge, action.reader)) };
    }
    case 'transactions': {
      let charge = state.charge;
      for (const t of action.transactions) charge = applyTransaction(charge, t);
      charge = askReceipt(state, state.charge, charge);
      const transactions = action.transactions.slice(0, RECENT_LIMIT);
      return { ...state, transactions, selectedTransaction: clamp(state.selectedTransaction, historyRows({ ...state, transactions }).length), charge };
    }
    case 'transaction': {
      const charge = askReceipt(state, state.charge, applyTransaction(state.charge, action.transaction));
      return { ...state, transactions: upsert(state.transactions, action.transaction), charge };
    }
    case 'view':
      return { ...state, view: action.view, notice: null, noticeCause: null, confirmRefund: null, confirmQuit: false };
    case 'amount_input': {
      if (state.charge.phase !== 'entry') return state;
      const text = (state.charge.amountText + action.text).replace(/[^0-9.,c]/gi, '').slice(0, 12);
      return { ...state, charge: { ...state.charge, amountText: text, error: null, errorCause: null, confirmRepeat: false } };
    }
    case 'amount_backspace':
      if (state.charge.phase !== 'entry') return state;
      return { ...state, charge: { ...state.charge, amountText: state.charge.amountText.slice(0, -1), error: null, errorCause: null } };
    case 'amount_clear':
      if (state.charge.phase !== 'entry') return state;
      return { ...state, charge: { ...state.charge, amountText: '', cart: emptyCart(), error: null, errorCause: null } };
    case 'select_reader':
      return { ...state, selectedReader: clamp(state.selectedReader + action.delta, state.readers.length) };
    case 'select_transaction':
      return { ...state, selectedTransaction: clamp(state.selectedTransaction + action.delta, historyRows(state).length), confirmRefund: null };
    case 'charge_starting':
      return {
        ...state,
        lastAmount: formatPlain(action.amount, state.currency),
        charge: { ...state.charge, phase: 'starting', amount: action.amount, readerName: action.readerName, error: null, errorCause: null, confirmRepeat: false },
      };
    case 'confirm_repeat':
      if (state.charge.phase !== 'entry' || state.charge.confirmRepeat === action.asking) return state;
      return { ...state, charge: { ...state.charge, confirmRepeat: action.asking } };
    case 'charge_resent': {
      const c = state.charge;
      if (c.phase !== 'declined' && c.phase !== 'canceled_on_reader') return state;
      return {
        ...state,
        notice: null,
        noticeCause: null,
        charge: { ...c, phase: 'waiting', reason: null, result: null, tapSent: false, canceling: false, resent: c.phase === 'declined' ? 'sent' : c.resent },
      };
    }
    case 'charge_started':
      return { ...state, charge: { ...state.charge, phase: 'waiting', transactionId: action.transactionId } };
    case 'charge_error':
      // Before a payment exists the staff fix the entry; once it exists the error is only a notice.
      if (state.charge.transactionId) return { ...state, notice: action.message, noticeCause: action.cause === 'connection' ? 'connection' : null, charge: { ...state.charge, canceling: false, tapSent: false } };
      return { ...state, charge: { ...state.charge, phase: 'entry', error: action.message, errorCause: action.cause ?? 'other' } };
    case 'charge_offline':
      return { ...state, charge: { ...state.charge, phase: 'offline', amount: action.amount, readerName: action.readerName, error: null, errorCause: null } };
    case 'tap_sent':
      return state.charge.phase === 'waiting' ? { ...state, charge: { ...state.charge, tapSent: true } } : state;
    case 'cancel_sent':
      return { ...state, charge: { ...state.charge, canceling: true } };
    case 'cancel_answered':
      return { ...state, charge: { ...state.charge, canceling: false } };
    case 'link_created':
      return { ...state, charge: { ...state.charge, phase: 'link', link: { url: action.url, reference: action.reference } } };
    case 'new_charge': {
      const fresh = { ...state, notice: null, noticeCause: null, charge: newCharge() };
      // The reader may still carry a payment (one picked up that staff left): show it again.
      const selected = fresh.readers[fresh.selectedReader];
      return selected ? { ...fresh, charge: applyReader(fresh, fresh.charge, selected) } : fresh;
    }
    case 'confirm_refund':
      return { ...state, confirmRefund: action.transactionId };
    case 'report':
      return { ...state, report: action.report, reportError: null };
    case 'report_error':
      return { ...state, reportError: action.message };
    case 'notice':
      return { ...state, notice: action.text, noticeCause: action.text ? (action.cause ?? null) : null };
    case 'confirm_quit':
      return { ...state, confirmQuit: action.asking };
    case 'history_page': {
      const filter = action.filter ?? state.history.filter;
      // Another filter is another list: its page count and rows are unknown until it is fetched.
      const refiltered = filter !== state.history.filter;
      const page = refiltered ? 1 : Math.max(1, Math.min(action.page, state.history.lastPage));
      const live = page === 1 && filter === 'all';
      const history = refiltered
        ? { ...state.history, page, filter, lastPage: 1, totalCount: null, rows: null, loading: !live }
        : { ...state.history, page, rows: live ? null : state.history.rows, loading: !live };
      return { ...state, selectedTransaction: 0, confirmRefund: null, history };
    }
    case 'history_loaded': {
      // An answer for a filter or page left since is stale; page 1's still tells how many pages there are.
      if (action.filter !== state.history.filter) return state;
      const current = action.page === state.history.page;
      if (!current && action.page !== 1) return state;
      const live = state.history.page === 1 && state.history.filter === 'all';
      return {
        ...state,
        history: { ...state.history, lastPage: Math.max(1, action.lastPage), totalCount: action.totalCount, rows: live ? null : current ? action.rows : state.history.rows, loading: current ? false : state.history.loading },
      };
    }
    case 'history_failed':
      return { ...state, notice: action.message, history: { ...state.history, loading: false } };
    case 'intro_done':
      return { ...state, intro: null };
    case 'split_start':
      if (state.split) return state;
      return { ...state, split: { order: action.order, total: action.total, parts: [] }, charge: { ...state.charge, amountText: '', cart: emptyCart(), error: null, errorCause: null } };
    case 'split_cancel': {
      const split = state.split;
      if (!split) return state;
      if (split.parts.length === 0) return { ...state, split: null, notice: null };
      const paid = formatPlain(splitPaid(split), state.currency);
      return { ...state, notice: `${paid} of sale ${split.order} is paid: take the ${formatPlain(splitBalance(split), state.currency)} still due, or refund the paid part from History.` };
    }
    case 'split_part': {
      const split = state.split;
      if (!split || split.parts.some((p) => p.transactionId === action.transactionId)) return state;
      return { ...state, split: { ...split, parts: [...split.parts, { transactionId: action.transactionId, method: action.method, amount: action.amount }] } };
    }
    case 'receipt_answered':
      return {
        ...state,
        charge: state.charge.receiptPrompt ? { ...state.charge, receiptPrompt: false } : state.charge,
        cash: state.cash?.askReceipt ? { ...state.cash, askReceipt: false } : state.cash,
      };
  }
}

/** Taken at the till (shared/channels.ts: the line the server's `channel` filter draws too). */
export function isCounterPayment(t: Transaction): boolean {
  return isCounterMethod(t.payment_method_type);
}

/**
 * The History rows on screen, in the order they are listed and selected: the live list on page 1
 * of all payments, else the page the server filtered; the parts of a sale paid in parts together
 * (where its newest part falls), so the sale shows as one.
 */
export function historyRows(state: CounterState): Transaction[] {
  return historySales(state).flatMap((s) => s.parts);
}

/** One sale in History: a payment on its own, or the parts of a sale paid in parts (newest first). */
export interface HistorySale {
  order: string | null;
  parts: Transaction[];
}

export function historySales(state: CounterState): HistorySale[] {
  const sales: HistorySale[] = [];
  const byOrder = new Map<string, HistorySale>();
  for (const t of pageRows(state)) {
    const order = t.metadata?.order;
    if (!order) {
      sales.push({ order: null, parts: [t] });
      continue;
    }
    const sale = byOrder.get(order);
    if (sale) sale.parts.push(t);
    else {
      const fresh = { order, parts: [t] };
      byOrder.set(order, fresh);
      sales.push(fresh);
    }
  }
  return sales;
}

function pageRows(state: CounterState): Transaction[] {
  const { page, filter, rows } = state.history;
  if (filter === 'all') return page === 1 || !rows ? state.transactions : rows;
  const fetched = rows ?? [];
  if (page !== 1) return fetched;
  // A payment's channel never changes, so the live list's payments of this channel are the newest
  // of it: they go first, fresher than the fetched copies, and a sale since the fetch shows at once.
  const live = state.transactions.filter((t) => isCounterPayment(t) === (filter === 'counter'));
  const seen = new Set(live.map((t) => t.id));
  return [...live, ...fetched.filter((t) => !seen.has(t.id))].slice(0, RECENT_LIMIT);
}

export function selectedReader(state: CounterState): CounterReader | undefined {
  return state.readers[state.selectedReader];
}

export function isBusy(charge: ChargeState): boolean {
  return charge.phase === 'starting' || charge.phase === 'waiting' || charge.phase === 'processing' || charge.phase === 'canceled_on_reader';
}
