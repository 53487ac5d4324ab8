import { useCallback, useEffect, useRef, useState } from 'react';
import type { PosApi } from '../../../shared/api/client.js';
import { ApiConnectionError, ApiRequestError } from '../../../shared/api/errors.js';
import { chargeLimitError, parseChargeAmount } from '../../amount.js';
import { cartTotal } from '../cart.js';
import { CONFLICT_WORDS, money, permissionWords } from '../../format.js';
import { loadDayReport, localDate } from '../../report.js';
import type { CounterSource } from '../source.js';
import { inFlight, initialState, isBusy, RECENT_LIMIT, reduce, selectedReader, type Action, type CounterInit, type CounterState, type ErrorCause } from '../state.js';
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
    loadDayReport(api, localDate()).then(
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
          const lines = s.charge.cart.lines;
          const reader = selectedReader(s);
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
          source.startPayment(reader, amount, s.currency, lines.length > 0 ? lines : undefined).then(
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
          if (tendered < cash.amount) {
            dispatch({ type: 'cash_error', message: `${money(tendered, s.currency)} is less than the ${money(cash.amount, s.currency)} due.` });
            return;
          }
          dispatch({ type: 'cash_sending' });
          source.cashSale(cash.amount, tendered, s.currency, selectedReader(s)).then(
            (result) => {
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

/** What Enter (or $) takes: the cart's total when there is a cart, else the amount typed (or the last one). */
function amountToCharge(s: CounterState): number {
  const lines = s.charge.cart.lines;
  if (lines.length > 0) {
    const total = cartTotal(lines);
    const limit = chargeLimitError(total, s.currency);
    if (limit) throw new Error(`${limit}: the cart comes to ${money(total, s.currency)}`);
    return total;
  }
  return parseChargeAmount(s.charge.amountText === '' ? (s.lastAmount ?? '') : s.charge.amountText, s.currency);
}
