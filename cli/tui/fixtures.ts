import type { Transaction } from '../api.js';
import type { CounterSource } from './source.js';
import type { Action, CounterReader } from './state.js';

/** Test data and a scripted source for the TUI's unit and component tests. */

export function reader(over: Partial<CounterReader> = {}): CounterReader {
  return { id: 'r-1', processor_terminal_id: 'tmr_Till1', name: 'Till 1', status: 'online', last_seen_at: '2026-11-21T12:00:00.000Z', activity: null, transaction_id: null, ...over };
}

export function txn(over: Partial<Transaction> = {}): Transaction {
  return {
    id: 't-1',
    reference: 'txn_0001',
    status: 'pending',
    amount: 1000,
    amount_refunded: 0,
    currency: 'usd',
    payment_method_type: 'terminal',
    description: null,
    is_test: true,
    card_brand: null,
    card_last_four: null,
    platform_fee_cents: 30,
    tip_amount: 0,
    failure_code: null,
    receipt_url: null,
    terminal_id: 'r-1',
    reader_id: 'tmr_Till1',
    created_at: '2026-11-21T12:00:00.000Z',
    ...over,
  };
}

/** A source driven by the test: `emit` pushes actions, commands are recorded and answered by `answers`. */
export class FakeSource implements CounterSource {
  readonly via = 'polling' as const;
  dispatch: (action: Action) => void = () => {};
  calls: string[] = [];
  answers: { startPayment?: () => Promise<{ transactionId: string }>; cancelPayment?: () => Promise<void>; simulateTap?: () => Promise<void> } = {};
  start(dispatch: (action: Action) => void) {
    this.dispatch = dispatch;
  }
  stop() {}
  emit(action: Action) {
    this.dispatch(action);
  }
  follow(id: string | null) {
    this.calls.push(`follow ${id}`);
  }
  refresh() {
    this.calls.push('refresh');
  }
  startPayment(r: CounterReader, amount: number, currency: string) {
    this.calls.push(`start ${r.name} ${amount} ${currency}`);
    return this.answers.startPayment?.() ?? Promise.resolve({ transactionId: 't-1' });
  }
  cancelPayment(id: string) {
    this.calls.push(`cancel ${id}`);
    return this.answers.cancelPayment?.() ?? Promise.resolve();
  }
  simulateTap(r: CounterReader) {
    this.calls.push(`tap ${r.name}`);
    return this.answers.simulateTap?.() ?? Promise.resolve();
  }
}
