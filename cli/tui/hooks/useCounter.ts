import { useCallback, useEffect, useReducer, useRef } from 'react';
import type { PosApi } from '../../../shared/api/client.js';
import { ApiRequestError } from '../../../shared/api/errors.js';
import { parseAmount } from '../../amount.js';
import { CONFLICT_WORDS, money, permissionWords } from '../../format.js';
import { loadDayReport, localDate } from '../../report.js';
import type { CounterSource } from '../source.js';
import { initialState, reduce, selectedReader, type CounterState } from '../state.js';
import { intentFor, type Intent, type KeyInfo } from '../keys.js';

/** Staff-facing words for an error: the 409s in plain language, anything else as the API said it. */
export function errorWords(err: unknown): string {
  if (err instanceof ApiRequestError) {
    if (err.status === 403 && err.error.type === 'permission_error' && err.error.code !== undefined && ['missing_scope', 'secret_key_required'].includes(err.error.code)) {
      return permissionWords(err.error.required_scope);
    }
    const words = err.error.code ? CONFLICT_WORDS[err.error.code] : undefined;
    return words ?? err.error.message;
  }
  return err instanceof Error ? err.message : String(err);
}

export interface Counter {
  state: CounterState;
  run(intent: Intent): void;
  /** A key press, read against the latest state (not the one of the last render's closure). */
  press(input: string, key: KeyInfo): void;
}

/** The counter's behaviour: the reducer, the live source, and the commands behind each key. */
export function useCounter(source: CounterSource, api: PosApi, options: { notice?: string | undefined; onQuit?: () => void } = {}): Counter {
  const [state, dispatch] = useReducer(reduce, { via: source.via, notice: options.notice }, initialState);
  const latest = useRef(state);
  latest.current = state;

  useEffect(() => {
    source.start(dispatch);
    return () => source.stop();
  }, [source]);

  const loadReport = useCallback(() => {
    loadDayReport(api, localDate()).then(
      (report) => dispatch({ type: 'report', report }),
      (err: unknown) => dispatch({ type: 'report_error', message: errorWords(err) }),
    );
  }, [api]);

  useEffect(() => {
    if (state.view === 'day') loadReport();
  }, [state.view, loadReport]);

  const run = useCallback(
    (intent: Intent) => {
      const s = latest.current;
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
            amount = parseAmount(s.charge.amountText, s.currency);
          } catch (err) {
            dispatch({ type: 'charge_error', message: err instanceof Error ? err.message : String(err) });
            return;
          }
          const reader = selectedReader(s);
          if (!reader) {
            dispatch({ type: 'charge_error', message: 'No reader yet: register one with `pos readers register`.' });
            return;
          }
          if (reader.status === 'offline') {
            dispatch({ type: 'charge_offline', amount, readerName: reader.name });
            return;
          }
          dispatch({ type: 'charge_starting', amount, readerName: reader.name });
          source.startPayment(reader, amount, s.currency).then(
            ({ transactionId }) => {
              dispatch({ type: 'charge_started', transactionId });
              source.follow(transactionId);
            },
            (err: unknown) => dispatch({ type: 'charge_error', message: errorWords(err) }),
          );
          return;
        }
        case 'cancel_payment': {
          const id = s.charge.transactionId;
          if (!id || s.charge.canceling) return;
          dispatch({ type: 'cancel_sent' });
          source.cancelPayment(id).then(
            () => {
              dispatch({ type: 'cancel_answered' });
              source.follow(id);
            },
            (err: unknown) => {
              dispatch({ type: 'cancel_answered' });
              dispatch({ type: 'notice', text: errorWords(err) });
            },
          );
          return;
        }
        case 'simulate_tap': {
          const reader = s.readers.find((r) => r.name === s.charge.readerName) ?? selectedReader(s);
          if (!reader) return;
          dispatch({ type: 'processing' });
          source.simulateTap(reader).catch((err: unknown) => dispatch({ type: 'notice', text: errorWords(err) }));
          return;
        }
        case 'create_link': {
          const amount = s.charge.amount;
          if (amount === null) return;
          api.createPaymentLink({ amount, currency: s.currency, description: `${s.merchantName ?? 'Counter'} sale` }).then(
            (res) => dispatch({ type: 'link_created', url: res.data.url, reference: res.data.reference }),
            (err: unknown) => dispatch({ type: 'notice', text: `No payment link: ${errorWords(err)}` }),
          );
          return;
        }
        case 'refund': {
          dispatch({ type: 'confirm_refund', transactionId: null });
          api.refund(intent.transactionId, {}).then(
            (res) => {
              const r = res.data as { amount: number; currency: string };
              dispatch({ type: 'notice', text: `Refunded ${money(r.amount, r.currency)}.` });
              source.refresh();
            },
            (err: unknown) => dispatch({ type: 'notice', text: errorWords(err) }),
          );
          return;
        }
      }
    },
    [api, source, loadReport, options],
  );

  const press = useCallback(
    (input: string, key: KeyInfo) => {
      const intent = intentFor(latest.current, input, key);
      if (intent) run(intent);
    },
    [run],
  );

  return { state, run, press };
}
