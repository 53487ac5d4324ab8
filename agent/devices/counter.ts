import type { Logger } from 'pino';
import type { ClientMessage, DeviceState, DrawerReason, ReaderState } from '../../shared/agent-protocol.js';
import type { PosApi } from '../../shared/api/client.js';
import { ApiRequestError } from '../../shared/api/errors.js';
import type { Transaction } from '../../shared/api/types.js';
import type { AgentConfig } from '../../shared/config.js';
import type { ReceiptPolicy } from '../../shared/receipt-policy.js';
import type { Clock } from '../../shared/time.js';
import type { SerialBinding, TcpBinding } from '../ports.js';
import type { AgentState, OfflineSale, PrintJob } from '../state.js';
import { isTransient, OfflineLimitReached, type OfflineSales } from '../offline-sales.js';
import type { CreateTransactionParams } from '../../shared/api/types.js';
import { receiptContent } from '../../shared/receipt.js';
import { CustomerDisplay, cashLines, displayLinesFor } from './display.js';
import { encodeReceipt, printableReceipt, type PrinterColumns, type PrinterProfile, type ReceiptCopy } from './escpos.js';
import { formatAmount } from '../../shared/money.js';
import { parseDeviceSpec } from './link.js';
import { ReceiptPrinter } from './printer.js';

const PAID = new Set(['succeeded', 'partially_refunded', 'refunded']);

type CashSale = Extract<ClientMessage, { type: 'cash_sale' }>;
type PrintReceipt = Extract<ClientMessage, { type: 'print_receipt' }>;
type OpenDrawer = Extract<ClientMessage, { type: 'open_drawer' }>;

export interface CounterDeps {
  api: PosApi;
  state: AgentState;
  clock: Clock;
  logger: Logger;
  serial: SerialBinding;
  tcp: TcpBinding;
  agentId: string;
  agentMode: 'test' | 'live';
  /** Sent to the counter whenever a device changes. */
  changed(device: DeviceState): void;
  /** Cash sales kept while the server is out of reach. */
  offline: OfflineSales;
  /** Whether the upstream link to the server is up now. */
  online(): boolean;
  /** The till a sale at `reader` (or at this agent, with none named) belongs to. */
  till(reader: string | undefined): { terminal_id?: string; location_id?: string };
  /** The drawer opened: for the merchant's audit trail on the server. */
  drawerOpened(opening: { reason: DrawerReason; staff: string | null; transaction_id: string | null }): Promise<void>;
}

/**
 * How long a cash sale waits for the server before it is kept offline instead: the customer is at
 * the counter. The request may still land; the sale keeps its idempotency key, so it is one sale.
 */
const ONLINE_SALE_TIMEOUT_MS = 5_000;

/** The answer to a cash sale the server has not seen yet. */
export interface OfflineSaleAnswer {
  local_reference: string;
  amount: number;
  amount_tendered: number;
  change_due: number;
  currency: string | null;
  taken_at: string;
  /** Sales now waiting to sync, this one included. */
  waiting: number;
}

export type CashSaleAnswer = { transaction: Transaction | null; offline?: OfflineSaleAnswer; drawer_opened: boolean; receipt: 'queued' | 'not_printed' | 'ask'; warning?: string };

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the server did not answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A cash sale at a till with no printer (so no drawer): recorded, and staff told what to do. */
export const NO_DRAWER = 'No drawer connected: count the change by hand';

function refusal(code: string, message: string): ApiRequestError {
  return new ApiRequestError(409, { type: 'invalid_request_error', code, message });
}

/**
 * The rest of the till beside the card readers: the receipt printer with its cash drawer and the
 * customer display (docs/counter-hardware.md). Told of every reader change; runs the counter's
 * cash sale, receipt and drawer commands.
 */
export class CounterDevices {
  readonly printer: ReceiptPrinter | undefined;
  readonly display: CustomerDisplay | undefined;
  readonly profile: PrinterProfile;

  constructor(
    config: Pick<AgentConfig, 'printer' | 'printerColumns' | 'printerCodepage' | 'display' | 'displayIdle' | 'deviceBaud'>,
    private readonly deps: CounterDeps,
  ) {
    const ports = { serial: deps.serial, tcp: deps.tcp, logger: deps.logger };
    this.profile = { columns: config.printerColumns as PrinterColumns, codepage: config.printerCodepage };
    if (config.printer) {
      const profile = { columns: config.printerColumns as PrinterColumns, codepage: config.printerCodepage };
      const render = async (job: PrintJob) => encodeReceipt(await this.#receipt(job.transaction_id, job.copy), profile);
      this.printer = new ReceiptPrinter(ports, parseDeviceSpec(config.printer), config.deviceBaud, profile, deps.state, deps.clock, render, deps.changed, deps.logger);
    }
    if (config.display) {
      const idle = () => config.displayIdle ?? deps.state.data.merchant?.business_name ?? 'Welcome';
      this.display = new CustomerDisplay(ports, parseDeviceSpec(config.display), config.deviceBaud, idle, deps.clock, deps.changed);
    }
  }

  start(): void {
    this.printer?.start();
    this.display?.start();
  }

  async stop(): Promise<void> {
    await this.printer?.stop();
    await this.display?.stop();
  }

  devices(): DeviceState[] {
    return [this.printer?.device(), this.display?.device()].filter((d): d is DeviceState => d !== undefined);
  }

  /**
   * A reader moved: the display follows it, and an approval prints the customer's receipt when the
   * reader's receipt policy is `always` (with `ask` the counter asks staff and sends print_receipt).
   */
  onReader(reader: ReaderState, policy: ReceiptPolicy): void {
    if (reader.activity === 'idle') this.display?.showIdle();
    else this.display?.show(...displayLinesFor(reader, ''));
    if (reader.activity === 'approved' && reader.transaction_id && policy === 'always') void this.#autoPrint(reader.transaction_id);
  }

  async #autoPrint(transactionId: string): Promise<void> {
    const key = `receipt:${transactionId}:customer`;
    if (!this.printer || this.printer.known(key)) return;
    await this.printer.enqueue({ key, transaction_id: transactionId, copy: 'customer', bytes: null });
  }

  async #receipt(transactionId: string, copy: ReceiptCopy) {
    const { data } = await this.deps.api.getTransaction(transactionId);
    // The reader says approved a moment before the server has the processor's word: a receipt
    // printed now would lack the card and the time, so it waits for the payment to be paid.
    if (!PAID.has(data.status)) throw new Error(`transaction ${data.reference} is ${data.status}, not paid yet`);
    // Online card payments have no receipt on the server: theirs is drawn here from the payment.
    const served = await this.deps.api.getReceipt(data.id).then(
      (res) => res.data,
      (err: unknown) => {
        if (err instanceof ApiRequestError && err.status === 404) return undefined;
        throw err;
      },
    );
    return printableReceipt(data, this.deps.state.data.merchant?.business_name ?? '', copy, served);
  }

  /**
   * A cash sale: recorded through the API (idempotent on the request id), the drawer opened, the
   * change shown, and the receipt printed when the policy is `always` (`ask`: the answer says so,
   * and the counter asks staff). With the server out of reach it is kept offline (committed to
   * disk first), its receipt marked not yet synced with a local reference, and sent when the
   * server is back, after the sales taken before it.
   */
  async cashSale(cmd: CashSale, policy: ReceiptPolicy): Promise<CashSaleAnswer> {
    const body: CreateTransactionParams = {
      amount: cmd.amount,
      payment_method_type: 'cash',
      ...(cmd.amount_tendered !== undefined ? { amount_tendered: cmd.amount_tendered } : {}),
      ...(cmd.currency ? { currency: cmd.currency } : {}),
      ...(cmd.description ? { description: cmd.description } : {}),
      ...(cmd.staff || cmd.metadata ? { metadata: { ...cmd.metadata, ...(cmd.staff ? { staff: cmd.staff } : {}) } } : {}),
      ...this.deps.till(cmd.reader),
    };
    if (body.amount_tendered !== undefined && body.amount_tendered < body.amount) {
      throw new ApiRequestError(400, { type: 'invalid_request_error', code: 'parameter_invalid', param: 'amount_tendered', message: 'The cash handed over is less than the amount due' });
    }
    // The same request id from a retrying counter is the same sale, never a second one.
    const idempotencyKey = `agent_${this.deps.agentId}_${cmd.request_id}`;
    const earlier = this.deps.offline.findByKey(idempotencyKey);
    if (earlier) return this.#offlineAnswer(earlier, false, 'not_printed', undefined);
    let txn: Transaction | undefined;
    // Sales taken offline go first: this one is sent online only behind them.
    if (this.deps.online() && this.deps.offline.summary().waiting > 0) await withTimeout(this.deps.offline.sync(), ONLINE_SALE_TIMEOUT_MS).catch(() => 0);
    if (this.deps.online() && this.deps.offline.summary().waiting === 0) {
      try {
        txn = (await withTimeout(this.deps.api.createTransaction(body, { idempotencyKey }), ONLINE_SALE_TIMEOUT_MS)).data;
      } catch (err) {
        if (err instanceof ApiRequestError && !isTransient(err)) throw err;
        this.deps.logger.warn({ err: err instanceof Error ? err.message : String(err) }, 'the server did not take a cash sale; keeping it offline');
      }
    }
    if (!txn) return this.#offlineSale(body, idempotencyKey, cmd.staff, policy);
    const { opened, warning } = await this.#drawerForSale(cmd.staff, txn.id);
    if (txn.amount_tendered !== null && txn.change_due !== null) this.display?.show(...cashLines(txn.amount_tendered, txn.change_due, txn.currency));
    let receipt: 'queued' | 'not_printed' | 'ask' = 'not_printed';
    const key = `receipt:${txn.id}:customer`;
    if (this.printer && policy === 'always') {
      if (!this.printer.known(key)) await this.printer.enqueue({ key, transaction_id: txn.id, copy: 'customer', bytes: null });
      receipt = 'queued';
    } else if (this.printer && policy === 'ask') {
      receipt = 'ask';
    }
    return { transaction: txn, drawer_opened: opened, receipt, ...(warning ? { warning } : {}) };
  }

  async #offlineSale(body: CreateTransactionParams, idempotencyKey: string, staff: string | undefined, policy: ReceiptPolicy): Promise<CashSaleAnswer> {
    let sale: OfflineSale;
    try {
      sale = this.deps.offline.take(body, idempotencyKey);
    } catch (err) {
      if (err instanceof OfflineLimitReached) throw refusal('offline_limit_reached', err.message);
      throw err;
    }
    const { opened, warning } = await this.#drawerForSale(staff, null);
    const tendered = body.amount_tendered ?? body.amount;
    this.display?.show(...cashLines(tendered, tendered - body.amount, body.currency ?? 'usd'));
    let receipt: 'queued' | 'not_printed' | 'ask' = 'not_printed';
    if (this.printer && policy === 'always') {
      await this.#printOffline(sale, 'customer', `receipt:${sale.local_reference}:customer`);
      receipt = 'queued';
    } else if (this.printer && policy === 'ask') {
      receipt = 'ask';
    }
    return this.#offlineAnswer(sale, opened, receipt, warning);
  }

  #offlineAnswer(sale: OfflineSale, opened: boolean, receipt: CashSaleAnswer['receipt'], warning: string | undefined): CashSaleAnswer {
    const body = JSON.parse(sale.request) as CreateTransactionParams;
    const tendered = body.amount_tendered ?? body.amount;
    return {
      transaction: null,
      offline: {
        local_reference: sale.local_reference,
        amount: body.amount,
        amount_tendered: tendered,
        change_due: tendered - body.amount,
        currency: body.currency ?? null,
        taken_at: new Date(sale.taken_at).toISOString(),
        waiting: this.deps.offline.summary().waiting,
      },
      drawer_opened: opened,
      receipt,
      ...(warning ? { warning } : {}),
    };
  }

  /** The receipt of a sale the server has not seen: drawn here, marked not yet synced, with its local reference. */
  async #printOffline(sale: OfflineSale, copy: ReceiptCopy, key: string): Promise<void> {
    if (!this.printer || this.printer.known(key)) return;
    const body = JSON.parse(sale.request) as CreateTransactionParams;
    const currency = body.currency ?? 'usd';
    const content = receiptContent({
      merchantName: this.deps.state.data.merchant?.business_name ?? '',
      address: null,
      reference: sale.local_reference,
      mode: this.deps.agentMode,
      simulated: false,
      currency,
      amount: body.amount,
      tip: 0,
      refunded: 0,
      paidAt: sale.taken_at,
      description: body.description ?? null,
      card: null,
    });
    content.notice = content.notice ? `NOT YET SYNCED - ${content.notice}` : 'NOT YET SYNCED';
    content.footer = [`Not yet synced: local reference ${sale.local_reference}`, ...content.footer];
    const tendered = body.amount_tendered ?? body.amount;
    const bytes = encodeReceipt(
      {
        content,
        tender: [
          { label: 'Cash', value: formatAmount(tendered, currency) },
          { label: 'Change', value: formatAmount(tendered - body.amount, currency) },
        ],
        url: null,
        copy,
      },
      this.profile,
    );
    await this.printer.enqueue({ key, transaction_id: sale.local_reference, copy, bytes: Buffer.from(bytes).toString('base64') });
  }

  /** A receipt on request: the customer's (policy `ask`), the merchant's copy, or a reprint from the history. */
  async printReceipt(cmd: PrintReceipt): Promise<{ queued: boolean; transaction_id: string }> {
    if (!this.printer) throw refusal('no_printer', 'No receipt printer connected (pos up --printer, or pos agent --printer)');
    const offline = this.deps.offline.find(cmd.transaction_id);
    if (offline && offline.status !== 'synced') {
      const copy = cmd.copy ?? 'customer';
      await this.#printOffline(offline, copy, `receipt:${offline.local_reference}:${copy}:request:${cmd.request_id}`);
      return { queued: true, transaction_id: offline.local_reference };
    }
    const { data } = await this.deps.api.getTransaction(cmd.transaction_id);
    if (!PAID.has(data.status)) throw refusal('transaction_not_paid', `Only a paid payment has a receipt; this one is ${data.status}`);
    const copy = cmd.copy ?? 'customer';
    // Every request prints: a reprint is its own job, and the request id keeps a retried request to one.
    const key = `receipt:${data.id}:${copy}:request:${cmd.request_id}`;
    if (!this.printer.known(key)) await this.printer.enqueue({ key, transaction_id: data.id, copy, bytes: null });
    return { queued: true, transaction_id: data.id };
  }

  async openDrawer(cmd: OpenDrawer): Promise<{ opened: true }> {
    await this.#kick(cmd.reason, cmd.staff, null);
    return { opened: true };
  }

  /**
   * The drawer of a cash sale, online or kept offline: opened, or why not in staff's words. The
   * sale is recorded either way; without a printer there is no drawer, and staff are told so.
   */
  async #drawerForSale(staff: string | undefined, transactionId: string | null): Promise<{ opened: boolean; warning?: string }> {
    if (!this.printer) return { opened: false, warning: NO_DRAWER };
    try {
      await this.#kick('cash_sale', staff, transactionId);
      return { opened: true };
    } catch (err) {
      return { opened: false, warning: err instanceof ApiRequestError ? err.error.message : err instanceof Error ? err.message : String(err) };
    }
  }

  async #kick(reason: DrawerReason, staff: string | undefined, transactionId: string | null): Promise<void> {
    if (!this.printer) throw refusal('no_printer', 'No drawer connected (pos up --printer, or pos agent --printer)');
    try {
      await this.printer.kickDrawer();
    } catch (err) {
      throw refusal('drawer_unavailable', err instanceof Error ? err.message : String(err));
    }
    // The staff action log: who opened the drawer, and why; and the merchant's audit trail.
    this.deps.logger.info({ event: 'drawer_opened', reason, staff: staff ?? null, transaction_id: transactionId }, 'cash drawer opened');
    await this.deps.drawerOpened({ reason, staff: staff ?? null, transaction_id: transactionId });
  }
}
