import type { Logger } from 'pino';
import type { DeviceState } from '../../shared/agent-protocol.js';
import type { Clock } from '../../shared/time.js';
import type { SerialConnection } from '../ports.js';
import type { AgentState, PrintJob } from '../state.js';
import { canPrint, decodeStatus, drawerKick, isStatusByte, type PrinterProfile, type PrinterStatus, STATUS_REQUESTS, statusProblem } from './escpos.js';
import { DeviceLink, describeTarget, type DeviceTarget, type LinkPorts } from './link.js';

/**
 * A printer answers `DLE EOT` in milliseconds even while printing (real-time commands jump its
 * buffer); a second covers a slow serial adapter. No answer in that time and the printer is
 * offline for the counter, which is inside the 2 s we promise for plug and unplug.
 */
const STATUS_TIMEOUT_MS = 1_000;

/**
 * What staff read when the printer cannot be reached: the link's own error ("bad file descriptor",
 * ENOENT, ECONNREFUSED) is for the log, never for a screen at the counter.
 */
export const PRINTER_UNPLUGGED = 'Printer offline: check the cable';
export const PRINTER_SILENT = 'Printer not answering: check it is switched on';

/** Receipts remembered as printed, so a repeated approval never prints one twice: days of a busy till. */
const MAX_PRINTED_KEYS = 2_000;

/**
 * A receipt whose payment the server cannot show as paid for this long is dropped (and logged):
 * ten minutes is far past any approval's settling, and a job stuck at the head of the queue must not
 * hold every later receipt back for good.
 */
const RENDER_GIVE_UP_MS = 10 * 60_000;

/** Renders a queued job's bytes when they are not known yet (the server was unreachable). */
export type JobRenderer = (job: PrintJob) => Promise<Uint8Array>;

/**
 * An ESC/POS receipt printer and the cash drawer wired to it. Receipts go through a queue kept in
 * the agent's state file: a job is written there before anything is sent, sent only when the
 * printer's status says it can print, and removed once the status after printing is still good,
 * so a receipt is never lost to paper out, an open cover, an unplugged cable or an agent restart,
 * and its key (`receipt:<transaction>:<copy>`) is remembered so a repeated approval never prints it twice.
 */
export class ReceiptPrinter {
  readonly #link: DeviceLink;
  #conn: SerialConnection | undefined;
  #status: PrinterStatus | null = null;
  #lastSeen: number | null = null;
  #problem: string | null = null;
  #pending: { bytes: number[]; resolve(status: PrinterStatus | null): void; timer: NodeJS.Timeout } | undefined;
  #querying: Promise<PrinterStatus | null> | undefined;
  #pumping = false;
  #stopped = false;

  constructor(
    ports: LinkPorts,
    target: DeviceTarget,
    baudRate: number,
    private readonly profile: PrinterProfile,
    private readonly state: AgentState,
    private readonly clock: Clock,
    private readonly render: JobRenderer,
    private readonly changed: (device: DeviceState) => void,
    private readonly logger: Logger,
  ) {
    this.#link = new DeviceLink(ports, target, baudRate, {
      opened: (conn) => {
        this.#conn = conn;
        conn.onData((chunk) => this.#data(chunk));
        void this.#poll();
      },
      closed: () => {
        this.#conn = undefined;
        this.#finishQuery(null);
        this.#emit();
      },
      tick: () => void this.#poll(),
    });
  }

  start(): void {
    this.#link.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#finishQuery(null);
    await this.#link.stop();
  }

  get online(): boolean {
    return this.#conn !== undefined && this.#lastSeen !== null && this.#status !== null;
  }

  device(): DeviceState {
    const s = this.#status;
    const online = this.online;
    return {
      id: 'printer',
      kind: 'receipt_printer',
      target: describeTarget(this.#link.target),
      status: online ? 'online' : 'offline',
      last_seen_at: this.#lastSeen === null ? null : new Date(this.#lastSeen).toISOString(),
      last_error: online ? this.#problem : this.#conn ? PRINTER_SILENT : PRINTER_UNPLUGGED,
      paper: online && s ? s.paper : null,
      cover_open: online && s ? s.coverOpen : null,
      drawer_open: online && s ? s.drawerOpen : null,
      queued: this.state.data.print_queue.length,
    };
  }

  /** Whether this receipt was printed, or is waiting to be. */
  known(key: string): boolean {
    return this.state.data.printed_keys.includes(key) || this.state.data.print_queue.some((j) => j.key === key);
  }

  /** Queues a receipt (on disk first) and prints it as soon as the printer can. */
  async enqueue(job: Omit<PrintJob, 'id' | 'created_at'>): Promise<PrintJob> {
    const full: PrintJob = { ...job, id: `${job.key}:${this.clock.now()}`, created_at: new Date(this.clock.now()).toISOString() };
    this.state.data.print_queue.push(full);
    await this.state.persist();
    this.#emit();
    void this.pump();
    return full;
  }

  /** Opens the cash drawer now, or says why it cannot: a drawer kick is never queued for later. */
  async kickDrawer(): Promise<void> {
    // One missed status reply (a noisy serial line, a busy shop PC) must not keep the drawer shut
    // on a cash sale: ask the printer once more, now, before saying it is offline.
    if (this.#conn && !this.online) await this.#query();
    const conn = this.#conn;
    if (!conn || !this.online) throw new Error(`The drawer did not open (${this.device().last_error ?? PRINTER_UNPLUGGED}): count the change by hand`);
    conn.write(drawerKick(this.profile));
  }

  /** Prints what is queued, oldest first, while the printer says it can. */
  async pump(): Promise<void> {
    if (this.#pumping || this.#stopped) return;
    this.#pumping = true;
    try {
      for (;;) {
        const job = this.state.data.print_queue[0];
        const conn = this.#conn;
        if (!job || !conn) return;
        if (job.bytes === null) {
          try {
            job.bytes = Buffer.from(await this.render(job)).toString('base64');
            await this.state.persist();
          } catch (err) {
            // The server is out of reach or the payment not settled yet: the job waits, and the
            // next status poll tries again, until it is too old to be worth waiting for.
            if (this.clock.now() - Date.parse(job.created_at) < RENDER_GIVE_UP_MS) return;
            this.logger.warn({ err, job: job.key }, 'a queued receipt could not be rendered for ten minutes; dropped');
            this.state.data.print_queue.shift();
            await this.state.persist();
            this.#emit();
            continue;
          }
        }
        const before = await this.#query();
        if (!before || !canPrint(before)) return;
        conn.write(Buffer.from(job.bytes, 'base64'));
        const after = await this.#query();
        // Paper ran out or the cover opened while it printed: the receipt is incomplete, and it
        // stays queued to be printed whole when the printer is back.
        if (!after || !canPrint(after)) return;
        this.state.data.print_queue.shift();
        const printed = this.state.data.printed_keys;
        printed.push(job.key);
        if (printed.length > MAX_PRINTED_KEYS) printed.splice(0, printed.length - MAX_PRINTED_KEYS);
        await this.state.persist();
        this.#emit();
      }
    } finally {
      this.#pumping = false;
    }
  }

  async #poll(): Promise<void> {
    if (this.#querying || this.#pumping) return;
    await this.#query();
    if (this.state.data.print_queue.length && this.#status && canPrint(this.#status)) void this.pump();
  }

  /** Asks the three status bytes; null when the printer does not answer. */
  #query(): Promise<PrinterStatus | null> {
    this.#querying ??= new Promise<PrinterStatus | null>((resolve) => {
      const conn = this.#conn;
      if (!conn) return resolve(null);
      const timer = setTimeout(() => this.#finishQuery(null), STATUS_TIMEOUT_MS);
      this.#pending = { bytes: [], resolve, timer };
      for (const request of STATUS_REQUESTS) conn.write(request);
    }).then((status) => {
      this.#querying = undefined;
      const wasOnline = this.online;
      const before = JSON.stringify(this.device());
      if (status) {
        this.#status = status;
        this.#lastSeen = this.clock.now();
        this.#problem = statusProblem(status);
      } else {
        this.#status = null;
      }
      if (wasOnline !== this.online || before !== JSON.stringify(this.device())) this.#emit();
      return status;
    });
    return this.#querying;
  }

  #data(chunk: Buffer): void {
    const pending = this.#pending;
    if (!pending) return;
    // Anything else a printer volunteers (automatic status back, an echo) is not a reply.
    for (const b of chunk) if (isStatusByte(b)) pending.bytes.push(b);
    if (pending.bytes.length >= STATUS_REQUESTS.length) {
      const [printer, offline, paper] = pending.bytes as [number, number, number];
      this.#finishQuery(decodeStatus(printer, offline, paper));
    }
  }

  #finishQuery(status: PrinterStatus | null): void {
    const pending = this.#pending;
    if (!pending) return;
    this.#pending = undefined;
    clearTimeout(pending.timer);
    pending.resolve(status);
  }

  #emit(): void {
    if (!this.#stopped) this.changed(this.device());
  }
}
