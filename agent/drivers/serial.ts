import type { SerialConnection } from '../ports.js';
import { LineSplitter, parseLine, payLine } from './line-protocol.js';
import type { DriverContext, PaymentOnReader, ReaderDriver } from './types.js';

/**
 * Ports are looked for (and paths checked) this often. Half a second keeps plug and unplug well
 * inside the 2 s we promise, and a directory check or a USB enumeration twice a second is nothing.
 */
export const PLUG_POLL_MS = 500;

/** A connected reader is pinged this often so a silent one is noticed. */
const PING_MS = 600;

/**
 * A reader silent this long is offline: four missed pings, so one slow answer is not an outage,
 * and still inside the 2 s promise.
 */
const SILENCE_MS = 1_800;

interface OpenPort {
  path: string;
  conn: SerialConnection;
  key?: string;
  lastHeard: number;
  lastPing: number;
  transaction: string | null;
}

export interface SerialSpec {
  path?: string;
  vendorId?: string;
  productId?: string;
}

export function parseSerialSpec(spec: string): SerialSpec {
  const usb = /^usb:([0-9a-fA-F]{4}):([0-9a-fA-F]{4})$/.exec(spec);
  return usb ? { vendorId: usb[1]!.toLowerCase(), productId: usb[2]!.toLowerCase() } : { path: spec };
}

/**
 * Readers attached by serial or USB, speaking the line protocol of line-protocol.ts: found by
 * configured path or USB vendor/product id, identified by their HELLO, kept online by PING/PONG,
 * their activity taken from their STATE and RESULT lines.
 */
export class SerialDriver implements ReaderDriver {
  readonly kind = 'serial' as const;
  readonly #ports = new Map<string, OpenPort>();
  readonly #opening = new Set<string>();
  #timer: NodeJS.Timeout | undefined;
  #scanning = false;

  constructor(
    private readonly ctx: DriverContext,
    private readonly specs: readonly SerialSpec[],
    private readonly baudRate: number,
  ) {}

  handles(key: string): boolean {
    return [...this.#ports.values()].some((p) => p.key === key) || this.ctx.book.info(key)?.driver === 'serial';
  }

  async start(): Promise<void> {
    if (this.specs.length === 0) return;
    await this.scan();
    this.#timer = setInterval(() => void this.scan(), PLUG_POLL_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    for (const port of this.#ports.values()) await port.conn.close();
    this.#ports.clear();
  }

  watch(): void {}

  paymentStarted(key: string, payment: PaymentOnReader): void {
    const port = [...this.#ports.values()].find((p) => p.key === key);
    if (!port) return;
    port.transaction = payment.transaction_id;
    port.conn.write(payLine(payment.transaction_id, payment.amount, payment.currency));
  }

  paymentCanceled(key: string): void {
    [...this.#ports.values()].find((p) => p.key === key)?.conn.write('CANCEL\n');
  }

  async #wanted(): Promise<Set<string>> {
    const wanted = new Set<string>();
    const usb = this.specs.filter((s) => s.vendorId);
    for (const spec of this.specs) if (spec.path && this.ctx.serial.exists(spec.path)) wanted.add(spec.path);
    if (usb.length) {
      try {
        for (const info of await this.ctx.serial.list()) {
          if (usb.some((s) => info.vendorId?.toLowerCase() === s.vendorId && info.productId?.toLowerCase() === s.productId)) wanted.add(info.path);
        }
      } catch (err) {
        this.ctx.logger.warn({ err }, 'could not list serial ports');
      }
    }
    return wanted;
  }

  /** One pass: open new ports, drop vanished ones, ping, and time out silent readers. */
  async scan(): Promise<void> {
    if (this.#scanning) return;
    this.#scanning = true;
    try {
      const wanted = await this.#wanted();
      for (const [path, port] of this.#ports) if (!wanted.has(path)) this.#gone(port, 'unplugged');
      for (const path of wanted) if (!this.#ports.has(path) && !this.#opening.has(path)) void this.#open(path);
      const now = Date.now();
      for (const port of this.#ports.values()) {
        if (now - port.lastPing >= PING_MS) {
          port.lastPing = now;
          port.conn.write(port.key ? 'PING\n' : 'IDENTIFY\n');
        }
        if (port.key) this.ctx.book.setPresence(port.key, now - port.lastHeard < SILENCE_MS);
      }
    } finally {
      this.#scanning = false;
    }
  }

  async #open(path: string): Promise<void> {
    this.#opening.add(path);
    try {
      const conn = await this.ctx.serial.open(path, this.baudRate);
      const port: OpenPort = { path, conn, lastHeard: Date.now(), lastPing: Date.now(), transaction: null };
      this.#ports.set(path, port);
      const lines = new LineSplitter();
      conn.onData((chunk) => {
        for (const line of lines.push(chunk.toString('latin1'))) this.#line(port, line);
      });
      conn.onClose((err) => {
        if (this.#ports.get(path) === port) this.#gone(port, err ? err.message : 'closed');
      });
      conn.write('IDENTIFY\n');
      this.ctx.logger.info({ path }, 'serial port opened');
    } catch (err) {
      this.ctx.logger.debug({ err, path }, 'serial port could not be opened; retrying');
    } finally {
      this.#opening.delete(path);
    }
  }

  #gone(port: OpenPort, why: string): void {
    this.#ports.delete(port.path);
    void port.conn.close().catch(() => undefined);
    if (port.key) this.ctx.book.setPresence(port.key, false);
    this.ctx.logger.info({ path: port.path, reader: port.key, why }, 'serial reader gone');
  }

  #line(port: OpenPort, line: string): void {
    if (line.trim() === '') return;
    const parsed = parseLine(line);
    if (!parsed.ok) {
      this.ctx.logger.warn({ path: port.path, line: line.slice(0, 80), error: parsed.error }, 'unreadable line from a serial reader');
      return;
    }
    port.lastHeard = Date.now();
    const m = parsed.message;
    const book = this.ctx.book;
    switch (m.verb) {
      case 'HELLO': {
        const key = `serial:${m.serial}`;
        port.key = key;
        const known = book.info(key);
        book.upsert(key, known ?? { driver: 'serial', id: null, processor_terminal_id: '', name: `${m.model} (${m.serial})`, serial_number: m.serial });
        book.setPresence(key, true);
        return;
      }
      case 'PONG':
        if (port.key) book.setPresence(port.key, true);
        return;
      case 'ERR':
        this.ctx.logger.warn({ path: port.path, reader: port.key, message: m.message }, 'serial reader reported an error');
        return;
      case 'CARD':
        this.ctx.logger.info({ reader: port.key, brand: m.brand, last4: m.last4 }, 'card presented on a serial reader');
        return;
      case 'STATE':
        if (!port.key) return;
        if (m.state === 'idle') port.transaction = null;
        book.observe(port.key, { activity: m.state, transaction_id: m.state === 'idle' ? null : port.transaction, failure_code: null, outcome_key: null }, book.nextTick());
        return;
      case 'RESULT': {
        if (!port.key) return;
        const activity = m.result === 'approved' ? 'approved' : m.result === 'declined' ? 'declined' : 'canceled_on_reader';
        book.observe(port.key, { activity, transaction_id: port.transaction, failure_code: m.code ?? null, outcome_key: null }, book.nextTick());
        return;
      }
    }
  }
}
