import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { AgentMessageSchema, PROTOCOL_VERSION, type AgentMessage, type ClientMessage, type ReaderState } from '../../shared/agent-protocol.js';
import type { PosApi } from '../../shared/api/client.js';
import { ApiRequestError } from '../../shared/api/errors.js';
import type { Transaction } from '../../shared/api/types.js';
import type { LineItem } from '../../shared/cart.js';
import type { CounterSource } from './source.js';
import type { CashSaleResult } from './cash.js';
import type { Action, CounterReader } from './state.js';

/**
 * The counter speaking the agent's local websocket protocol (shared/agent-protocol.ts): hello,
 * subscribe to readers and transactions, then commands answered by `result` messages matched on
 * request_id. Reader activity (waiting for card, processing, canceled on the reader) with the
 * payment on the reader, as the server joined them, only comes here; the /v1 API does not report it. The socket is reopened after any loss, with backoff.
 */

const AGENT_UNREACHABLE = 'the agent is not answering (is pos agent running?)';
const SERVER_UNREACHABLE = 'the agent cannot reach the server';

/** A command the agent does not answer within 30 s is treated as lost (a simulated tap answers after the authorisation, a few seconds). */
const COMMAND_TIMEOUT_MS = 30_000;
/** Reconnect delays double from 250 ms to at most 5 s: back quickly after an agent restart, without spinning while it is down. */
const MIN_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

export function readerFromAgent(r: ReaderState): CounterReader {
  return {
    id: r.id,
    processor_terminal_id: r.processor_terminal_id,
    name: r.name,
    status: r.status,
    last_seen_at: r.last_seen_at,
    activity: r.activity,
    payment: r.payment,
    receipt_policy: r.receipt_policy,
  };
}

interface Pending {
  resolve(data: unknown): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class AgentSource implements CounterSource {
  readonly via = 'agent' as const;
  private dispatch: (action: Action) => void = () => {};
  private socket: WebSocket | undefined;
  private stopped = false;
  private retryMs = MIN_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly pending = new Map<string, Pending>();
  private currency: string | undefined;
  private upstream: 'connected' | 'disconnected' = 'connected';

  constructor(
    private readonly url: string,
    /** For what the protocol does not carry: the merchant's currency and the initial recent payments. */
    private readonly api: PosApi,
    private readonly token?: string,
  ) {}

  start(dispatch: (action: Action) => void): void {
    this.dispatch = dispatch;
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.socket?.close();
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error('counter closed'));
    }
    this.pending.clear();
  }

  follow(): void {
    // Transactions are pushed by the agent; nothing to poll.
  }

  refresh(): void {
    void this.loadRecent();
  }

  private connect(): void {
    if (this.stopped) return;
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.on('open', () => {
      this.retryMs = MIN_RETRY_MS;
      this.send({ type: 'hello', protocol: PROTOCOL_VERSION, ...(this.token ? { token: this.token } : {}) });
      this.send({ type: 'subscribe', topics: ['readers', 'transactions', 'devices'] });
      void this.loadRecent();
    });
    socket.on('message', (raw) => this.receive(String(raw)));
    socket.on('error', () => this.dispatch({ type: 'connection', status: 'lost', error: AGENT_UNREACHABLE }));
    socket.on('close', () => {
      if (this.socket === socket) this.socket = undefined;
      // Without the agent nothing sells, cash included: the lost connection says so, not "cash only".
      this.dispatch({ type: 'cash_only', on: false });
      for (const [id, p] of this.pending) {
        clearTimeout(p.timer);
        p.reject(new Error('connection to the agent lost'));
        this.pending.delete(id);
      }
      if (this.stopped) return;
      this.dispatch({ type: 'connection', status: 'lost', error: AGENT_UNREACHABLE });
      this.retryTimer = setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
    });
  }

  private async loadRecent(): Promise<void> {
    try {
      if (!this.currency) this.currency = (await this.api.merchant()).data.default_currency;
      this.dispatch({ type: 'transactions', transactions: (await this.api.listTransactions({ size: 12 })).data });
    } catch {
      // The live view works without history; the next reconnect tries again.
    }
  }

  private send(message: ClientMessage): void {
    this.socket?.send(JSON.stringify(message));
  }

  private receive(raw: string): void {
    let message: AgentMessage;
    try {
      message = AgentMessageSchema.parse(JSON.parse(raw));
    } catch {
      return;
    }
    switch (message.type) {
      case 'welcome':
        this.dispatch({ type: 'merchant', name: message.merchant.business_name, mode: message.mode, currency: this.currency ?? 'usd' });
        this.dispatch({ type: 'connection', status: message.upstream === 'connected' ? 'connected' : 'lost', ...(message.upstream === 'connected' ? {} : { error: SERVER_UNREACHABLE }) });
        this.dispatch({ type: 'cash_only', on: message.upstream === 'disconnected' });
        this.upstream = message.upstream;
        break;
      case 'readers':
        this.dispatch({ type: 'readers', readers: message.readers.map(readerFromAgent) });
        break;
      case 'reader':
        this.dispatch({ type: 'reader', reader: readerFromAgent(message.reader) });
        break;
      case 'transaction':
        this.dispatch({ type: 'transaction', transaction: message.transaction as unknown as Transaction });
        break;
      case 'upstream':
        this.dispatch(message.status === 'connected' ? { type: 'connection', status: 'connected' } : { type: 'connection', status: 'lost', error: SERVER_UNREACHABLE });
        // Back after a loss: what changed meanwhile was not pushed, so read it again.
        if (message.status === 'connected' && this.upstream === 'disconnected') void this.loadRecent();
        this.dispatch({ type: 'cash_only', on: message.status === 'disconnected' });
        this.upstream = message.status;
        break;
      case 'offline':
        this.dispatch({ type: 'offline_sales', waiting: message.waiting, refused: message.refused, limit: message.limit });
        break;
      case 'result': {
        const p = this.pending.get(message.request_id);
        if (!p) break;
        this.pending.delete(message.request_id);
        clearTimeout(p.timer);
        if (message.ok) p.resolve(message.data);
        else p.reject(new ApiRequestError(0, message.error ?? { type: 'api_error', message: 'the agent refused' }));
        break;
      }
      case 'error': {
        // The agent's refusals carry no request_id. With one command waiting, the refusal is its
        // answer: failing it now beats waiting out the timeout for an answer that never comes.
        const only = this.pending.size === 1 ? [...this.pending][0] : undefined;
        if (only) {
          const [id, p] = only;
          this.pending.delete(id);
          clearTimeout(p.timer);
          p.reject(new ApiRequestError(0, message.error));
        } else {
          this.dispatch({ type: 'notice', text: `The agent refused a message: ${message.error.message}` });
        }
        break;
      }
      case 'devices':
        this.dispatch({ type: 'devices', devices: message.devices });
        break;
      case 'device':
        this.dispatch({ type: 'device', device: message.device });
        break;
      case 'pong':
        break;
    }
  }

  private command(message: ClientMessage & { request_id: string }): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (!this.socket || this.socket.readyState !== WebSocket.OPEN) {
        reject(new Error('not connected to the agent'));
        return;
      }
      const timer = setTimeout(() => {
        this.pending.delete(message.request_id);
        reject(new Error('the agent did not answer'));
      }, COMMAND_TIMEOUT_MS);
      this.pending.set(message.request_id, { resolve, reject, timer });
      this.send(message);
    });
  }

  async startPayment(reader: CounterReader, amount: number, currency: string, lineItems?: readonly LineItem[], metadata?: Record<string, string>): Promise<{ transactionId: string }> {
    const cart = lineItems?.length ? { line_items: lineItems.map((l) => ({ description: l.description, quantity: l.quantity, amount: l.amount })) } : {};
    const data = (await this.command({ type: 'start_payment', request_id: randomUUID(), reader: reader.processor_terminal_id, amount, currency, ...cart, ...(metadata ? { metadata } : {}) })) as
      | { transaction_id?: string; id?: string; transaction?: { id?: string } }
      | undefined;
    const transactionId = data?.transaction_id ?? data?.transaction?.id ?? data?.id;
    if (!transactionId) throw new Error('the agent started the payment but did not say which');
    return { transactionId };
  }

  async resendPayment(transactionId: string, reader: CounterReader): Promise<void> {
    await this.command({ type: 'process_payment', request_id: randomUUID(), transaction_id: transactionId, reader: reader.processor_terminal_id });
  }

  async cancelPayment(transactionId: string, reason: string): Promise<void> {
    await this.command({ type: 'cancel_payment', request_id: randomUUID(), transaction_id: transactionId, reason });
  }

  async cashSale(amount: number, tendered: number, currency: string, reader?: CounterReader, metadata?: Record<string, string>): Promise<CashSaleResult> {
    const result = (await this.command({ type: 'cash_sale', request_id: randomUUID(), amount, amount_tendered: tendered, currency, ...(reader ? { reader: reader.processor_terminal_id } : {}), ...(metadata ? { metadata } : {}) })) as CashSaleResult;
    void this.loadRecent();
    return result;
  }

  async openDrawer(reason: 'no_sale' | 'refund'): Promise<void> {
    await this.command({ type: 'open_drawer', request_id: randomUUID(), reason, staff: 'counter' });
  }

  async printReceipt(transactionId: string, copy: 'customer' | 'merchant'): Promise<void> {
    await this.command({ type: 'print_receipt', request_id: randomUUID(), transaction_id: transactionId, copy });
  }

  async simulateTap(reader: CounterReader): Promise<void> {
    await this.command({ type: 'simulate_tap', request_id: randomUUID(), reader: reader.processor_terminal_id });
  }
}
