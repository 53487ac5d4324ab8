import type { LineItem } from '../../shared/cart.js';
import type { Transaction } from '../../shared/api/types.js';
import type { ReaderPayment } from '../../shared/agent-protocol.js';
import type { CounterSource } from './source.js';
import type { CashSaleResult } from './cash.js';
import type { Action, CounterReader } from './state.js';

/** Test data and a scripted source for the TUI's unit and component tests. */

export function reader(over: Partial<CounterReader> = {}): CounterReader {
  return { id: 'r-1', processor_terminal_id: 'tmr_Till1', name: 'Till 1', status: 'online', last_seen_at: '2026-11-21T12:00:00.000Z', activity: null, payment: null, ...over };
}

/** The payment on a reader, as the reader's view carries it: pending unless told. */
export function paying(id: string, amount = 1000, over: Partial<ReaderPayment> = {}): ReaderPayment {
  return { id, amount, currency: 'usd', status: 'pending', failure_code: null, decline_code: null, failure_message: null, cancellation_reason: null, outcome: null, ...over };
}

export function txn(over: Partial<Transaction> = {}): Transaction {
  const t: Transaction = {
    id: 't-1',
    object: 'transaction',
    reference: 'txn_0001',
    type: 'payment',
    status: 'pending',
    status_badge: 'Pending',
    amount: 1000,
    amount_captured: 0,
    amount_refunded: 0,
    currency: 'usd',
    payment_method_type: 'terminal',
    capture_method: 'automatic',
    description: null,
    receipt_email: null,
    source: 'terminal',
    customer_id: null,
    is_test: true,
    metadata: {},
    payment_intent_id: null,
    card_brand: null,
    card_last_four: null,
    platform_fee_cents: 30,
    tip_amount: 0,
    failure_code: null,
    decline_code: null,
    failure_message: null,
    cancellation_reason: null,
    receipt_url: null,
    terminal_id: 'r-1',
    reader_id: 'tmr_Till1',
    location_id: null,
    created_by_key_id: null,
    offline_reference: null,
    checkout_session_id: null,
    payment_link_id: null,
    created_at: '2026-11-21T12:00:00.000Z',
    updated_at: '2026-11-21T12:00:00.000Z',
    captured_at: null,
    failed_at: null,
    canceled_at: null,
    refunded_at: null,
    disputed_at: null,
    dispute_id: null,
    dispute_status: null,
    cart: null,
    amount_tendered: null,
    change_due: null,
    ...over,
  };
  // As on the wire: a paid payment has captured its amount unless the test says otherwise.
  const paid = t.status === 'succeeded' || t.status === 'partially_refunded' || t.status === 'refunded';
  return over.amount_captured === undefined && paid ? { ...t, amount_captured: t.amount } : t;
}

/** A source driven by the test: `emit` pushes actions, commands are recorded and answered by `answers`. */
export class FakeSource implements CounterSource {
  readonly via = 'polling' as const;
  dispatch: (action: Action) => void = () => {};
  calls: string[] = [];
  answers: {
    startPayment?: () => Promise<{ transactionId: string }>;
    resendPayment?: () => Promise<void>;
    cancelPayment?: () => Promise<void>;
    simulateTap?: () => Promise<void>;
  } = {};
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
  startPayment(r: CounterReader, amount: number, currency: string, lineItems?: readonly LineItem[], metadata?: Record<string, string>) {
    const cart = lineItems?.length ? ` [${lineItems.map((l) => `${l.description}:${l.amount}x${l.quantity}`).join(', ')}]` : '';
    this.calls.push(`start ${r.name} ${amount} ${currency}${cart}${metadata?.order ? ` order=${metadata.order}` : ''}`);
    return this.answers.startPayment?.() ?? Promise.resolve({ transactionId: 't-1' });
  }
  resendPayment(id: string, r: CounterReader) {
    this.calls.push(`resend ${id} ${r.name}`);
    return this.answers.resendPayment?.() ?? Promise.resolve();
  }
  cancelPayment(id: string, reason = '') {
    this.calls.push(`cancel ${id}${reason ? ` ${reason}` : ''}`);
    return this.answers.cancelPayment?.() ?? Promise.resolve();
  }
  simulateTap(r: CounterReader) {
    this.calls.push(`tap ${r.name}`);
    return this.answers.simulateTap?.() ?? Promise.resolve();
  }
  cashSale(amount: number, tendered: number, currency: string, _reader?: CounterReader, metadata?: Record<string, string>): Promise<CashSaleResult> {
    this.calls.push(`cash ${amount} ${tendered} ${currency}${metadata?.order ? ` order=${metadata.order}` : ''}`);
    const transaction = txn({ id: 't-cash', status: 'succeeded', amount, payment_method_type: 'cash', amount_tendered: tendered, change_due: tendered - amount, currency, ...(metadata ? { metadata } : {}) });
    return Promise.resolve({ transaction, drawer_opened: true, receipt: 'queued' });
  }
  openDrawer(reason: string) {
    this.calls.push(`drawer ${reason}`);
    return Promise.resolve();
  }
  printReceipt(id: string, copy: string) {
    this.calls.push(`print ${id} ${copy}`);
    return Promise.resolve();
  }
}
