import { randomUUID } from 'node:crypto';
import type { PosApi } from '../../shared/api/client.js';
import type { Reader } from '../../shared/api/types.js';
import type { LineItem } from '../../shared/cart.js';
import type { Action, CounterReader } from './state.js';
import type { CashSaleResult } from './cash.js';

/**
 * Where the counter's live state comes from and where its commands go. Two implementations: the
 * agent's local websocket (agent-source.ts, shared/agent-protocol.ts), and polling the /v1 API
 * (this file) when no agent runs. Neither ever throws into the UI from the background: a lost
 * connection is an action, and both keep retrying.
 */
export interface CounterSource {
  readonly via: 'agent' | 'polling';
  start(dispatch: (action: Action) => void): void;
  stop(): void;
  /**
   * `lineItems`: a cart the reader shows before the tap; they add up to `amount`. `metadata`: kept on
   * the payment (a split sale's `order` reference links its parts).
   */
  startPayment(reader: CounterReader, amount: number, currency: string, lineItems?: readonly LineItem[], metadata?: Record<string, string>): Promise<{ transactionId: string }>;
  /**
   * The same payment to the reader again, after the customer canceled on it, a decline or a timeout:
   * no second payment is made.
   */
  resendPayment(transactionId: string, reader: CounterReader): Promise<void>;
  /** `reason` is kept as the payment's cancellation_reason (shared/declines.ts CANCEL_WORDS). */
  cancelPayment(transactionId: string, reason: string): Promise<void>;
  simulateTap(reader: CounterReader): Promise<void>;
  /** The payment the charge screen waits for: followed closely until it ends. */
  follow(transactionId: string | null): void;
  /** Re-read everything now (after a refund, say). */
  refresh(): void;
  /**
   * A cash sale: recorded, the drawer opened and the receipt printed where the agent drives them;
   * `reader` is the till's, whose location's receipt policy applies.
   */
  cashSale(amount: number, tendered: number, currency: string, reader?: CounterReader, metadata?: Record<string, string>): Promise<CashSaleResult>;
  /** The "no sale" key: the drawer opens, logged with the staff action (agent only). */
  openDrawer(reason: 'no_sale' | 'refund'): Promise<void>;
  /** A receipt again, from the History (agent only). */
  printReceipt(transactionId: string, copy: 'customer' | 'merchant'): Promise<void>;
}

/** What only the agent can do: the printer and the drawer hang off the shop PC. */
export const NEEDS_AGENT = 'The printer and the cash drawer are driven by pos agent: start the counter with --agent';

export function readerFromApi(r: Reader): CounterReader {
  return { id: r.id, processor_terminal_id: r.processor_terminal_id, name: r.name, status: r.status, last_seen_at: r.last_seen_at, activity: null, payment: null };
}

/** Everything else: readers and recent payments every 2 s, gentle on the server for a screen people glance at. */
const POLL_MS = 2_000;
/** The payment being charged: every 500 ms, so "approved" shows within half a second of the tap. */
const FOLLOW_MS = 500;
/** After a failure, wait up to 5 s between attempts: quick to come back, no hammering a server that is down. */
const MAX_BACKOFF_MS = 5_000;

export class PollingSource implements CounterSource {
  readonly via = 'polling' as const;
  private dispatch: (action: Action) => void = () => {};
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private following: string | null = null;
  private lastFull = 0;
  private failures = 0;
  private haveMerchant = false;
  private running = false;

  constructor(private readonly api: PosApi) {}

  start(dispatch: (action: Action) => void): void {
    this.dispatch = dispatch;
    this.stopped = false;
    void this.tick();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  follow(transactionId: string | null): void {
    this.following = transactionId;
  }

  refresh(): void {
    this.lastFull = 0;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      if (!this.haveMerchant) {
        const m = (await this.api.merchant()).data;
        this.dispatch({ type: 'merchant', name: m.business_name, mode: m.is_test ? 'test' : 'live', currency: m.default_currency });
        this.haveMerchant = true;
      }
      if (Date.now() - this.lastFull >= POLL_MS) {
        const [readers, txns] = await Promise.all([this.api.listReaders(), this.api.listTransactions({ size: 12 })]);
        this.dispatch({ type: 'readers', readers: readers.data.map(readerFromApi) });
        this.dispatch({ type: 'transactions', transactions: txns.data });
        this.lastFull = Date.now();
      }
      if (this.following) {
        const t = (await this.api.getTransaction(this.following)).data;
        this.dispatch({ type: 'transaction', transaction: t });
        if (t.status !== 'pending') this.following = null;
      }
      this.dispatch({ type: 'connection', status: 'connected' });
      this.failures = 0;
      this.schedule(FOLLOW_MS);
    } catch (err) {
      this.failures += 1;
      this.dispatch({ type: 'connection', status: 'lost', error: err instanceof Error ? err.message : String(err) });
      this.schedule(Math.min(MAX_BACKOFF_MS, 250 * 2 ** this.failures));
    } finally {
      this.running = false;
    }
  }

  async startPayment(reader: CounterReader, amount: number, currency: string, lineItems?: readonly LineItem[], metadata?: Record<string, string>): Promise<{ transactionId: string }> {
    const created = await this.api.createTerminalPayment({ amount, currency, terminal_id: reader.id, ...(lineItems?.length ? { line_items: [...lineItems] } : {}), ...(metadata ? { metadata } : {}) });
    try {
      const intent = created.data.payment_intent_id;
      if (!intent) throw new Error(`payment ${created.data.reference} has no processor payment to send to the reader`);
      await this.api.processPayment(intent, reader.processor_terminal_id);
    } catch (err) {
      // The payment exists but never reached the reader: cancel it so it does not linger as pending.
      await this.api.cancelTransaction(created.data.id, { reason: 'abandoned' }).catch(() => undefined);
      throw err;
    }
    this.follow(created.data.id);
    this.schedule(0);
    return { transactionId: created.data.id };
  }

  async resendPayment(transactionId: string, reader: CounterReader): Promise<void> {
    const { data } = await this.api.getTransaction(transactionId);
    if (!data.payment_intent_id) throw new Error(`payment ${data.reference} has no processor payment to send to the reader`);
    await this.api.processPayment(data.payment_intent_id, reader.processor_terminal_id);
    this.follow(transactionId);
    this.schedule(0);
  }

  async cancelPayment(transactionId: string, reason: string): Promise<void> {
    const res = await this.api.cancelTransaction(transactionId, { reason });
    this.dispatch({ type: 'transaction', transaction: res.data });
  }

  async cashSale(amount: number, tendered: number, currency: string, _reader?: CounterReader, metadata?: Record<string, string>): Promise<CashSaleResult> {
    const res = await this.api.createTransaction({ amount, currency, payment_method_type: 'cash', amount_tendered: tendered, ...(metadata ? { metadata } : {}) }, { idempotencyKey: `tui_cash_${randomUUID()}` });
    this.refresh();
    // No agent, so no drawer: the sale is recorded and staff told what to do, in words.
    return { transaction: res.data, drawer_opened: false, receipt: 'not_printed', warning: 'No drawer connected: count the change by hand' };
  }

  async openDrawer(): Promise<void> {
    throw new Error(NEEDS_AGENT);
  }

  async printReceipt(): Promise<void> {
    throw new Error(NEEDS_AGENT);
  }

  async simulateTap(reader: CounterReader): Promise<void> {
    const res = await this.api.simulatePayment({ reader_id: reader.processor_terminal_id });
    if (res.data.transaction_id) this.follow(res.data.transaction_id);
    this.schedule(0);
  }
}

