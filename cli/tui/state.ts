import type { Transaction } from '../../shared/api/types.js';
import { declineWords } from '../format.js';
import { formatPlain } from '../amount.js';
import type { DayReport } from '../report.js';
import type { ReaderActivity } from '../../shared/agent-protocol.js';

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
  transaction_id: string | null;
}

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
  /** Minor units and currency of the payment under way. */
  amount: number | null;
  readerName: string | null;
  transactionId: string | null;
  result: Transaction | null;
  reason: string | null;
  link: { url: string; reference: string } | null;
  /** A cancel was sent and no answer came yet. */
  canceling: boolean;
}

export interface CounterState {
  view: View;
  connection: 'connecting' | 'connected' | 'lost';
  connectionError: string | null;
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
}

export type Action =
  | { type: 'connection'; status: 'connected' | 'lost'; error?: string }
  | { type: 'merchant'; name: string; mode: 'test' | 'live'; currency: string }
  | { type: 'readers'; readers: CounterReader[] }
  | { type: 'reader'; reader: CounterReader }
  | { type: 'transactions'; transactions: Transaction[] }
  | { type: 'transaction'; transaction: Transaction }
  | { type: 'view'; view: View }
  | { type: 'amount_input'; text: string }
  | { type: 'amount_backspace' }
  | { type: 'select_reader'; delta: number }
  | { type: 'select_transaction'; delta: number }
  | { type: 'charge_starting'; amount: number; readerName: string }
  | { type: 'charge_started'; transactionId: string }
  | { type: 'charge_error'; message: string }
  | { type: 'charge_offline'; amount: number; readerName: string }
  | { type: 'processing' }
  | { type: 'cancel_sent' }
  | { type: 'cancel_answered' }
  | { type: 'link_created'; url: string; reference: string }
  | { type: 'new_charge' }
  | { type: 'confirm_refund'; transactionId: string | null }
  | { type: 'report'; report: DayReport }
  | { type: 'report_error'; message: string }
  | { type: 'notice'; text: string | null };

export function newCharge(amountText = ''): ChargeState {
  return { phase: 'entry', amountText, error: null, amount: null, readerName: null, transactionId: null, result: null, reason: null, link: null, canceling: false };
}

/**
 * What a newcomer sees on the charge screen in test mode: Enter charges it. 1,000 minor units is
 * $10.00 or €10.00, and ¥1,000 in a zero-decimal currency: above every currency's minimum charge.
 */
const TEST_MODE_MINOR = 1_000;

export function testModeAmount(currency: string): string {
  return formatPlain(TEST_MODE_MINOR, currency);
}

export function initialState(init: { via: 'agent' | 'polling'; notice?: string | undefined }): CounterState {
  return {
    view: 'charge',
    connection: 'connecting',
    connectionError: null,
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
  };
}

/** How many recent payments the counter keeps: a screen's worth at 80×24. */
export const RECENT_LIMIT = 12;

const FINAL = new Set(['succeeded', 'failed', 'canceled', 'refunded', 'partially_refunded']);

function applyTransaction(charge: ChargeState, t: Transaction): ChargeState {
  if (t.id !== charge.transactionId || !FINAL.has(t.status)) return charge;
  if (charge.phase === 'approved' || charge.phase === 'declined' || charge.phase === 'canceled') return charge;
  if (t.status === 'failed') return { ...charge, phase: 'declined', result: t, reason: declineWords(t.failure_code), canceling: false };
  if (t.status === 'canceled') return { ...charge, phase: 'canceled', result: t, reason: t.cancellation_reason ? String(t.cancellation_reason).replace(/_/g, ' ') : null, canceling: false };
  return { ...charge, phase: 'approved', result: t, canceling: false };
}

function applyReader(charge: ChargeState, r: CounterReader): ChargeState {
  if (!charge.transactionId || r.transaction_id !== charge.transactionId) return charge;
  if (charge.phase !== 'waiting' && charge.phase !== 'processing' && charge.phase !== 'canceled_on_reader') return charge;
  switch (r.activity) {
    case 'waiting_for_card':
      return { ...charge, phase: 'waiting' };
    case 'processing':
      return { ...charge, phase: 'processing' };
    case 'canceled_on_reader':
      return { ...charge, phase: 'canceled_on_reader' };
    default:
      return charge;
  }
}

function upsert(list: Transaction[], t: Transaction): Transaction[] {
  const i = list.findIndex((x) => x.id === t.id);
  if (i >= 0) return list.map((x) => (x.id === t.id ? t : x));
  return [t, ...list].slice(0, RECENT_LIMIT);
}

const clamp = (n: number, len: number) => (len === 0 ? 0 : Math.max(0, Math.min(len - 1, n)));

export function reduce(state: CounterState, action: Action): CounterState {
  switch (action.type) {
    case 'connection':
      if (action.status === state.connection && action.status === 'connected') return state;
      return { ...state, connection: action.status, connectionError: action.status === 'lost' ? (action.error ?? 'no answer') : null };
    case 'merchant': {
      const firstTime = state.mode === null;
      const charge = firstTime && action.mode === 'test' && state.charge.phase === 'entry' && state.charge.amountText === '' ? newCharge(testModeAmount(action.currency)) : state.charge;
      return { ...state, merchantName: action.name, mode: action.mode, currency: action.currency, charge };
    }
    case 'readers': {
      const selected = state.readers[state.selectedReader];
      let index = selected ? action.readers.findIndex((r) => r.id === selected.id) : -1;
      if (index < 0) index = Math.max(0, action.readers.findIndex((r) => r.status === 'online'));
      let charge = state.charge;
      for (const r of action.readers) charge = applyReader(charge, r);
      return { ...state, readers: action.readers, selectedReader: clamp(index, action.readers.length), charge };
    }
    case 'reader': {
      const exists = state.readers.some((r) => r.id === action.reader.id);
      const readers = exists ? state.readers.map((r) => (r.id === action.reader.id ? action.reader : r)) : [...state.readers, action.reader];
      return { ...state, readers, charge: applyReader(state.charge, action.reader) };
    }
    case 'transactions': {
      let charge = state.charge;
      for (const t of action.transactions) charge = applyTransaction(charge, t);
      return { ...state, transactions: action.transactions.slice(0, RECENT_LIMIT), selectedTransaction: clamp(state.selectedTransaction, action.transactions.length), charge };
    }
    case 'transaction':
      return { ...state, transactions: upsert(state.transactions, action.transaction), charge: applyTransaction(state.charge, action.transaction) };
    case 'view':
      return { ...state, view: action.view, notice: null, confirmRefund: null };
    case 'amount_input': {
      if (state.charge.phase !== 'entry') return state;
      const text = (state.charge.amountText + action.text).replace(/[^0-9.c]/gi, '').slice(0, 12);
      return { ...state, charge: { ...state.charge, amountText: text, error: null } };
    }
    case 'amount_backspace':
      if (state.charge.phase !== 'entry') return state;
      return { ...state, charge: { ...state.charge, amountText: state.charge.amountText.slice(0, -1), error: null } };
    case 'select_reader':
      return { ...state, selectedReader: clamp(state.selectedReader + action.delta, state.readers.length) };
    case 'select_transaction':
      return { ...state, selectedTransaction: clamp(state.selectedTransaction + action.delta, state.transactions.length), confirmRefund: null };
    case 'charge_starting':
      return { ...state, charge: { ...state.charge, phase: 'starting', amount: action.amount, readerName: action.readerName, error: null } };
    case 'charge_started':
      return { ...state, charge: { ...state.charge, phase: 'waiting', transactionId: action.transactionId } };
    case 'charge_error':
      // Before a payment exists the staff fix the entry; once it exists the error is only a notice.
      if (state.charge.transactionId) return { ...state, notice: action.message, charge: { ...state.charge, canceling: false } };
      return { ...state, charge: { ...state.charge, phase: 'entry', error: action.message } };
    case 'charge_offline':
      return { ...state, charge: { ...state.charge, phase: 'offline', amount: action.amount, readerName: action.readerName, error: null } };
    case 'processing':
      return state.charge.phase === 'waiting' ? { ...state, charge: { ...state.charge, phase: 'processing' } } : state;
    case 'cancel_sent':
      return { ...state, charge: { ...state.charge, canceling: true } };
    case 'cancel_answered':
      return { ...state, charge: { ...state.charge, canceling: false } };
    case 'link_created':
      return { ...state, charge: { ...state.charge, phase: 'link', link: { url: action.url, reference: action.reference } } };
    case 'new_charge':
      return { ...state, notice: null, charge: newCharge(state.mode === 'test' ? testModeAmount(state.currency) : '') };
    case 'confirm_refund':
      return { ...state, confirmRefund: action.transactionId };
    case 'report':
      return { ...state, report: action.report, reportError: null };
    case 'report_error':
      return { ...state, reportError: action.message };
    case 'notice':
      return { ...state, notice: action.text };
  }
}

export function selectedReader(state: CounterState): CounterReader | undefined {
  return state.readers[state.selectedReader];
}

export function isBusy(charge: ChargeState): boolean {
  return charge.phase === 'starting' || charge.phase === 'waiting' || charge.phase === 'processing' || charge.phase === 'canceled_on_reader';
}
