import { randomUUID } from 'node:crypto';
import { useCallback, useEffect, useRef, useState } from 'react';
import type { PosApi } from '../../../shared/api/client.js';
import { ApiConnectionError, ApiRequestError } from '../../../shared/api/errors.js';
import { chargeLimitError, parseChargeAmount } from '../../amount.js';
import { cartTotal } from '../cart.js';
import { CONFLICT_WORDS, money, permissionWords } from '../../format.js';
import { loadDayReport } from '../../report.js';
import type { CounterSource } from '../source.js';
import { inFlight, initialState, isBusy, RECENT_LIMIT, reduce, selectedReader, splitBalance, type Action, type CounterInit, type CounterState, type ErrorCause } from '../state.js';
import { intentFor, splitKeys, type Intent, type KeyInfo } from '../keys.js';

/** Lost connections as Node reports them ("fetch failed", ECONNREFUSED, …): staff see one plain sentence instead. */
const UNREACHABLE = /fetch failed|ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ETIMEDOUT|socket hang up|not connected to the agent|connection to the agent lost|the agent did not answer/i;

export function isConnectionError(err: unknown): boolean {
  if (err instanceof ApiConnectionError) return true;
  if (err instanceof ApiRequestError) return err.status === 0 && UNREACHABLE.test(err.error.message);
  return err instanceof Error && (UNREACHABLE.test(err.message) || (err.cause instanceof Error && UNREACHABLE.test(err.cause.message)));
}

/** Staff-facing words for an error: the 409s in plain language, a lost connection as such, anything else as the API said it. */
export function errorWords(err: unknown): string {
  if (isConnectionError(err)) return 'The server cannot be reached right now: try again when the header shows connected.';
  if (err instanceof ApiRequestError) {
    if (err.status === 403 && err.error.type === 'permission_error' && err.error.code !== undefined && ['missing_scope', 'secret_key_required'].includes(err.error.code)) {
      return permissionWords(err.error.required_scope);
    }
    const words = err.error.code ? CONFLICT_WORDS[err.error.code] : undefined;
    return words ?? err.error.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** The processor (or the agent, from the processor's view) refused the reader as offline. */
function isReaderOffline(err: unknown): boolean {
  return err instanceof ApiRequestError && err.error.code === 'reader_offline';
}

function causeOf(err: unknown): ErrorCause {
  if (isConnectionError(err)) return 'connection';
  if (err instanceof ApiRequestError && err.error.code === 'reader_busy') return 'reader_busy';
  return 'other';
}

export interface Counter {
  state: CounterState;
  run(intent: Intent): void;
  /** Key presses, read against the latest state (not the one of the last render's closure); a burst is handled key by key. */
  press(input: string, key: KeyInfo): void;
}

export interface CounterOptions {
  notice?: string | undefined;
  intro?: string[] | undefined;
  quitWarning?: string | undefined;
  onQuit?: () => void;
}

/** The counter's behaviour: the reducer, the live source, and the commands behind each key. */
export function useCounter(source: CounterSource, api: PosApi, options: CounterOptions = {}): Counter {
  // The state lives in a ref that every action updates at once: a burst of keys ("12" then Enter)
  // is read key by key against the state the previous key left, not the last render's.
  const store = useRef<CounterState | null>(null);
  if (store.current === null) {
    const init: CounterInit = { via: source.via, notice: options.notice, intro: options.intro, quitWarning: options.quitWarning };
    store.current = initialState(init);
  }
  const [, rerender] = useState(0);
  const dispatch = useCallback((action: Action) => {
    const next = reduce(store.current!, action);
    if (next === store.current) return;
    store.current = next;
    rerender((n) => n + 1);
  }, []);
  const state = store.current;
  // Keys pressed while a payment is being sent wait here and are replayed once it is on the reader
  // (or refused): "12.50 Enter s" taps once the payment waits, instead of losing the s.
  const queued = useRef<[string, KeyInfo][]>([]);
  const handleKey = useRef<(input: string, key: KeyInfo, replayed?: boolean) => void>(() => undefined);
  const dispatchQueued = useCallback(
    (action: Action) => {
      dispatch(action);
      while (queued.current.length > 0 && store.current!.charge.phase !== 'starting') {
        const [input, key] = queued.current.shift()!;
        handleKey.current(input, key, true);
      }
    },
    [dispatch],
  );

  useEffect(() => {
    source.start(dispatch);
    return () => source.stop();
  }, [source, dispatch]);

  const loadReport = useCallback(() => {
    loadDayReport(api, undefined).then(
      (report) => dispatch({ type: 'report', report }),
      (err: unknown) => dispatch({ type: 'report_error', message: errorWords(err) }),
    );
  }, [api, dispatch]);

  useEffect(() => {
    if (state.view === 'day') loadReport();
  }, [state.view, loadReport]);

  // History: how many pages there are, and the rows of an older page.
  const { page: historyPage, filter: historyFilter } = state.history;
  useEffect(() => {
    if (state.view !== 'transactions') return;
    api.listTransactions({ page: historyPage, size: RECENT_LIMIT, channel: historyFilter === 'all' ? undefined : historyFilter }).then(
      (res) => dispatch({ type: 'history_loaded', page: res.page, filter: historyFilter, lastPage: res.lastPage, totalCount: res.totalCount, rows: res.data }),
      (err: unknown) => dispatch({ type: 'history_failed', message: `History: ${errorWords(err)}` }),
    );
  }, [state.view, historyPage, historyFilter, api, dispatch]);

  // The payment on screen is read from the server whenever the screen may be behind it: it was
  // picked up from the reader (amount unknown), or the connection has just come back.
  const connected = state.connection === 'connected';
  const followed = isBusy(state.charge) ? state.charge.transactionId : null;
  const needsAmount = state.charge.amount === null;
  useEffect(() => {
    if (!connected || !followed) return;
    source.follow(followed);
    api.getTransaction(followed).then(
      (res) => dispatch({ type: 'transaction', transaction: res.data }),
      () => undefined,
    );
  }, [connected, followed, needsAmount, api, source, dispatch]);

  const run = useCallback(
    (intent: Intent) => {
      const s = store.current!;
      switch (intent.kind) {
        case 'dispatch':
          dispatch(intent.action);
          return;
        case 'quit':
          options.onQuit?.();
          return;
        case 'load_report':
          loadReport();
          return;
        case 'start_charge': {
          let amount: number;
          try {
            amount = amountToCharge(s);
          } catch (err) {
            dispatch({ type: 'charge_error', message: err instanceof Error ? err.message.replace(/^amount/, 'Amount') : String(err), cause: 'input' });
            return;
          }
          // A part of a split sale carries no cart: the cart, if any, was the whole sale's.
          const lines = s.split ? [] : s.charge.cart.lines;
          const metadata = s.split ? { order: s.split.order } : undefined;
          const reader = selectedReader(s);
          if (s.cashOnly) {
            // A card needs the processor, through the server: refused here, before anything is sent.
            dispatch({ type: 'charge_error', message: 'Offline: cash only. Cards need the server, which the till cannot reach: take cash (x), or wait until it is back.', cause: 'connection' });
            return;
          }
          if (!reader) {
            dispatch({ type: 'charge_error', message: 'No reader yet: register one with `pos readers register`.', cause: 'other' });
            return;
          }
          if (inFlight(reader)) {
            // Sending would be refused "reader busy": say so now and offer the cancel instead.
            const busy = ` (${money(reader.payment.amount, reader.payment.currency)})`;
            dispatch({ type: 'charge_error', message: `${reader.name} is busy with another payment${busy}: press x to cancel it, or wait for it.`, cause: 'reader_busy' });
            return;
          }
          if (reader.status === 'offline') {
            dispatch({ type: 'charge_offline', amount, readerName: reader.name });
            return;
          }
          dispatch({ type: 'charge_starting', amount, readerName: reader.name });
          source.startPayment(reader, amount, s.currency, lines.length > 0 ? lines : undefined, metadata).then(
            ({ transactionId }) => {
              dispatchQueued({ type: 'charge_started', transactionId });
              source.follow(transactionId);
            },
            (err: unknown) => {
              // The processor says the reader is offline (whatever the agent saw): the link fallback, no payment left behind.
              if (isReaderOffline(err)) dispatchQueued({ type: 'charge_offline', amount, readerName: reader.name });
              else dispatchQueued({ type: 'charge_error', message: errorWords(err), cause: causeOf(err) });
            },
          );
          return;
        }
        case 'resend_payment': {
          const id = s.charge.transactionId;
          const reader = s.readers.find((r) => r.name === s.charge.readerName) ?? selectedReader(s);
          if (!id || !reader) return;
          source.resendPayment(id, reader).then(
            () => {
              dispatch({ type: 'charge_resent' });
              source.follow(id);
            },
            (err: unknown) => {
              if (isReaderOffline(err) && s.charge.amount !== null) {
                dispatch({ type: 'charge_offline', amount: s.charge.amount, readerName: reader.name });
                return;
              }
              dispatch({ type: 'notice', text: `Not sent again: ${errorWords(err)}`, ...(isConnectionError(err) ? { cause: 'connection' as const } : {}) });
            },
          );
          return;
        }
        case 'cancel_payment': {
          const id = s.charge.transactionId;
          if (!id || s.charge.canceling) return;
          dispatch({ type: 'cancel_sent' });
          const reason = s.charge.phase === 'canceled_on_reader' ? 'customer_canceled_on_reader' : 'canceled_by_staff';
          source.cancelPayment(id, reason).then(
            () => {
              dispatch({ type: 'cancel_answered' });
              source.follow(id);
            },
            (err: unknown) => {
              dispatch({ type: 'cancel_answered' });
              dispatch({ type: 'notice', text: errorWords(err), ...(isConnectionError(err) ? { cause: 'connection' as const } : {}) });
            },
          );
          return;
        }
        case 'cancel_reader_payment': {
          const reader = selectedReader(s);
          source.cancelPayment(intent.transactionId, 'canceled_by_staff').then(
            () => {
              dispatch({ type: 'notice', text: `Canceled the payment that was on ${reader?.name ?? 'the reader'}.` });
              source.refresh();
            },
            (err: unknown) => dispatch({ type: 'notice', text: errorWords(err), ...(isConnectionError(err) ? { cause: 'connection' as const } : {}) }),
          );
          return;
        }
        case 'simulate_tap': {
          const reader = s.readers.find((r) => r.name === s.charge.readerName) ?? selectedReader(s);
          if (!reader) return;
          dispatch({ type: 'tap_sent' });
          source.simulateTap(reader).catch((err: unknown) => dispatch({ type: 'charge_error', message: `Simulated tap: ${errorWords(err)}`, cause: causeOf(err) }));
          return;
        }
        case 'create_link': {
          const amount = s.charge.amount;
          if (amount === null) return;
          // A payment that reached the reader before it went offline is replaced by the link: it must not stay open beside it.
          const replaced = s.charge.transactionId;
          api.createPaymentLink({ amount, currency: s.currency, description: `${s.merchantName ?? 'Counter'} sale` }).then(
            (res) => {
              dispatch({ type: 'link_created', url: res.data.url, reference: res.data.reference });
              if (replaced) source.cancelPayment(replaced, 'abandoned').catch(() => undefined);
            },
            (err: unknown) => dispatch({ type: 'notice', text: `No payment link: ${errorWords(err)}` }),
          );
          return;
        }
        case 'start_split': {
          if (s.split) {
            dispatch({ type: 'notice', text: `Sale ${s.split.order} is being paid in parts: ${money(splitBalance(s.split), s.currency)} still due.` });
            return;
          }
          try {
            dispatch({ type: 'split_start', order: newOrderReference(), total: amountToCharge(s) });
          } catch (err) {
            dispatch({ type: 'charge_error', message: err instanceof Error ? err.message.replace(/^amount/, 'Amount') : String(err), cause: 'input' });
          }
          return;
        }
        case 'start_cash': {
          try {
            dispatch({ type: 'cash_start', amount: amountToCharge(s) });
          } catch (err) {
            dispatch({ type: 'charge_error', message: err instanceof Error ? err.message.replace(/^amount/, 'Amount') : String(err), cause: 'input' });
          }
          return;
        }
        case 'cash_submit': {
          const cash = s.cash;
          if (!cash || cash.phase !== 'tendered') return;
          let tendered = cash.amount;
          if (cash.tenderedText !== '') {
            try {
              tendered = parseChargeAmount(cash.tenderedText, s.currency);
            } catch (err) {
              dispatch({ type: 'cash_error', message: err instanceof Error ? err.message.replace(/^amount/, 'Cash') : String(err) });
              return;
            }
          }
          // With /, less cash than due pays part of the sale; the rest goes on a card (or more
          // cash), as long as both parts are amounts a payment can be.
          const part = Math.min(tendered, cash.amount);
          const rest = cash.amount - part;
          if (rest > 0 && !intent.part) {
            // Asked for, never assumed: a slip of the finger ("10" for "100") must not split a sale.
            dispatch({ type: 'cash_error', message: `${money(tendered, s.currency)} is less than the ${money(cash.amount, s.currency)} due. / takes it as part of the sale, the rest on a card.` });
            return;
          }
          if (rest > 0) {
            const tooSmall = chargeLimitError(part, s.currency) ?? chargeLimitError(rest, s.currency);
            if (tooSmall) {
              dispatch({ type: 'cash_error', message: `${money(tendered, s.currency)} is less than the ${money(cash.amount, s.currency)} due, and the rest cannot be paid apart (${tooSmall}).` });
              return;
            }
          }
          const order = s.split?.order ?? (rest > 0 ? newOrderReference() : undefined);
          const total = s.split ? undefined : cash.amount;
          dispatch({ type: 'cash_sending' });
          source.cashSale(part, tendered, s.currency, selectedReader(s), order ? { order } : undefined).then(
            (result) => {
              if (order && total !== undefined) dispatch({ type: 'split_start', order, total });
              // A part taken offline is known by its local reference until it syncs.
              if (order) dispatch({ type: 'split_part', transactionId: result.transaction?.id ?? result.offline?.local_reference ?? '', method: 'cash', amount: result.transaction?.amount ?? result.offline?.amount ?? part });
              dispatch({ type: 'cash_done', result });
              dispatch({ type: 'amount_clear' });
            },
            (err: unknown) => dispatch({ type: 'cash_error', message: errorWords(err) }),
          );
          return;
        }
        case 'open_drawer':
          source.openDrawer('no_sale').then(
            () => dispatch({ type: 'notice', text: 'Drawer opened (no sale).' }),
            (err: unknown) => dispatch({ type: 'notice', text: `Drawer not opened: ${errorWords(err)}` }),
          );
          return;
        case 'reprint':
          source.printReceipt(intent.transactionId, 'customer').then(
            () => dispatch({ type: 'notice', text: 'Receipt sent to the printer.' }),
            (err: unknown) => dispatch({ type: 'notice', text: `No receipt: ${errorWords(err)}` }),
          );
          return;
        case 'print_sale_receipt':
          dispatch({ type: 'receipt_answered' });
          source.printReceipt(intent.transactionId, 'customer').then(
            () => dispatch({ type: 'notice', text: 'Receipt sent to the printer.' }),
            (err: unknown) => dispatch({ type: 'notice', text: `No receipt: ${errorWords(err)}` }),
          );
          return;
        case 'refund': {
          dispatch({ type: 'confirm_refund', transactionId: null });
          if (/^OFF-/.test(intent.transactionId)) {
            dispatch({ type: 'notice', text: `Sale ${intent.transactionId} has not synced yet: refund it once it has (the server does not know it yet).` });
            return;
          }
          api.refund(intent.transactionId, {}).then(
            (res) => {
              const r = res.data as { amount: number; currency: string };
              const paidInCash = s.transactions.some((t) => t.id === intent.transactionId && t.payment_method_type === 'cash');
              dispatch({ type: 'notice', text: `Refunded ${money(r.amount, r.currency)}${paidInCash ? ' in cash: hand it back from the drawer' : ''}.` });
              if (paidInCash) source.openDrawer('refund').catch(() => undefined);
              source.refresh();
            },
            (err: unknown) => dispatch({ type: 'notice', text: errorWords(err) }),
          );
          return;
        }
      }
    },
    [api, source, loadReport, options, dispatch, dispatchQueued],
  );

  handleKey.current = (input: string, key: KeyInfo, replayed = false) => {
    if (store.current!.charge.phase === 'starting' || (!replayed && queued.current.length > 0)) {
      queued.current.push([input, key]);
      return;
    }
    const intent = intentFor(store.current!, input, key);
    if (intent) run(intent);
  };
  const press = useCallback((input: string, key: KeyInfo) => {
    for (const [one, info] of splitKeys(input, key)) handleKey.current(one, info);
  }, []);

  return { state, run, press };
}

/** A split sale's reference, on each of its payments: short enough for a receipt line. */
function newOrderReference(): string {
  return `ord_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
}

/**
 * What Enter (or $) takes: on a split sale, the part typed or else what is still due; otherwise the
 * cart's total when there is a cart, else the amount typed (or the last one).
 */
function amountToCharge(s: CounterState): number {
  if (s.split) {
    const due = splitBalance(s.split);
    if (s.charge.amountText === '') return due;
    const part = parseChargeAmount(s.charge.amountText, s.currency);
    if (part > due) throw new Error(`${money(part, s.currency)} is more than the ${money(due, s.currency)} still due`);
    return part;
  }
  const lines = s.charge.cart.lines;
  if (lines.length > 0) {
    const total = cartTotal(lines);
    const limit = chargeLimitError(total, s.currency);
    if (limit) throw new Error(`${limit}: the cart comes to ${money(total, s.currency)}`);
    return total;
  }
  return parseChargeAmount(s.charge.amountText === '' ? (s.lastAmount ?? '') : s.charge.amountText, s.currency);
}
