import type { DeviceState, ReaderState } from '../../shared/agent-protocol.js';
import { formatAmount } from '../../shared/money.js';
import type { Clock } from '../../shared/time.js';
import type { SerialConnection } from '../ports.js';
import { DeviceLink, describeTarget, type DeviceTarget, type LinkPorts } from './link.js';

/** A pole display's lines: 2 × 20 characters is the common VFD (Epson DM-D, Bematech, Partner). */
export const DISPLAY_COLUMNS = 20;

const ESC = 0x1b;
const US = 0x1f;
/** Clears the screen and homes the cursor. */
const CLR = 0x0c;

/**
 * The bytes that put two lines on an ESC/POS customer display: initialise (`ESC @`), clear, then
 * each line at its start (`US $ 1 row`), cut or padded to the width. Characters outside ASCII are
 * shown as plain ones: the display's code page is not ours to guess.
 */
export function displayBytes(top: string, bottom: string): Uint8Array {
  const line = (text: string) => Buffer.from(ascii(text).slice(0, DISPLAY_COLUMNS).padEnd(DISPLAY_COLUMNS), 'latin1');
  return Buffer.concat([Buffer.of(ESC, 0x40, CLR, US, 0x24, 1, 1), line(top), Buffer.of(US, 0x24, 1, 2), line(bottom)]);
}

function ascii(text: string): string {
  return text
    .replace(/[—–]/g, '-')
    .normalize('NFKD')
    .replace(/[^\x20-\x7e]/g, '');
}

/** A decline in the customer's words (never the issuer's code). */
function declineWords(code: string | null): [string, string] {
  switch (code) {
    case 'expired_card':
      return ['Card expired', 'Try another card'];
    case 'incorrect_pin':
    case 'invalid_pin':
      return ['Incorrect PIN', 'Please try again'];
    case 'offline_pin_required':
    case 'online_or_offline_pin_required':
      return ['Insert card', 'and enter PIN'];
    default:
      return ['Card declined', 'Try another card'];
  }
}

const right = (text: string) => text.padStart(DISPLAY_COLUMNS);

/** What the display shows for a reader's activity. */
export function displayLinesFor(reader: Pick<ReaderState, 'activity' | 'amount' | 'currency' | 'failure_code'>, idle: string): [string, string] {
  const amount = reader.amount !== null && reader.currency ? right(formatAmount(reader.amount, reader.currency)) : '';
  switch (reader.activity) {
    case 'waiting_for_card':
      return ['Amount due', amount];
    case 'processing':
      return ['Processing...', amount];
    case 'approved':
      return ['Approved - thank you', amount];
    case 'declined':
      return declineWords(reader.failure_code);
    case 'canceled_on_reader':
      return ['Payment canceled', ''];
    case 'idle':
      return [idle, ''];
  }
}

/** A cash sale: what was paid and the change to hand back. */
export function cashLines(tendered: number, change: number, currency: string): [string, string] {
  const m = (n: number) => formatAmount(n, currency);
  return [`Cash${m(tendered).padStart(DISPLAY_COLUMNS - 4)}`, `Change${m(change).padStart(DISPLAY_COLUMNS - 6)}`];
}

/**
 * The customer-facing display. Displays say nothing back, so present means connected: its path
 * exists and the port is open. What it shows is kept, and shown again when it is plugged back in.
 */
export class CustomerDisplay {
  readonly #link: DeviceLink;
  #conn: SerialConnection | undefined;
  #lines: [string, string];
  #lastSeen: number | null = null;
  #stopped = false;

  constructor(
    ports: LinkPorts,
    target: DeviceTarget,
    baudRate: number,
    private readonly idle: () => string,
    private readonly clock: Clock,
    private readonly changed: (device: DeviceState) => void,
  ) {
    this.#lines = [idle(), ''];
    this.#link = new DeviceLink(ports, target, baudRate, {
      opened: (conn) => {
        this.#conn = conn;
        this.#write();
        this.#emit();
      },
      closed: () => {
        this.#conn = undefined;
        this.#emit();
      },
      tick: () => {
        this.#lastSeen = this.clock.now();
      },
    });
  }

  start(): void {
    this.#link.start();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#link.stop();
  }

  get lines(): [string, string] {
    return this.#lines;
  }

  show(top: string, bottom: string): void {
    this.#lines = [top, bottom];
    this.#write();
  }

  showIdle(): void {
    this.show(this.idle(), '');
  }

  device(): DeviceState {
    const online = this.#conn !== undefined;
    return {
      id: 'display',
      kind: 'customer_display',
      target: describeTarget(this.#link.target),
      status: online ? 'online' : 'offline',
      last_seen_at: this.#lastSeen === null ? null : new Date(this.#lastSeen).toISOString(),
      // The link's errno text stays in the log: staff read what to do.
      last_error: online ? null : 'Display offline: check the cable',
      paper: null,
      cover_open: null,
      drawer_open: null,
      queued: null,
    };
  }

  #write(): void {
    if (!this.#conn) return;
    this.#conn.write(displayBytes(...this.#lines));
    this.#lastSeen = this.clock.now();
  }

  #emit(): void {
    if (!this.#stopped) this.changed(this.device());
  }
}
