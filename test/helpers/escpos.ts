/**
 * The test side of counter hardware: a decoder of the ESC/POS commands the agent's receipts,
 * drawer kicks and status requests use, written from Epson's command reference and independent of
 * the encoder the agent uses, so a test proves the bytes a real printer would get. A printer
 * emulator answers `DLE EOT` with the status a test scripts; a display emulator keeps the two
 * lines a pole display would show.
 */

export type PrinterEvent =
  | { type: 'init' }
  | { type: 'text'; line: string; bold: boolean; align: number }
  | { type: 'cut'; partial: boolean }
  | { type: 'qr_store'; data: string }
  | { type: 'qr_print' }
  | { type: 'qr_setting'; fn: number }
  | { type: 'kick'; pin: number; onMs: number; offMs: number }
  | { type: 'status_request'; n: number }
  | { type: 'unknown'; bytes: number[] };

const ESC = 0x1b;
const GS = 0x1d;
const DLE = 0x10;
const FS = 0x1c;
const LF = 0x0a;
const CR = 0x0d;

/** ESC commands taking one parameter byte that only change how text looks. */
const ESC_ONE = new Set([0x21, 0x2d, 0x33, 0x4d, 0x74, 0x64, 0x4a, 0x52, 0x56, 0x7b, 0x47, 0x20]);
/** GS commands taking one parameter byte. */
const GS_ONE = new Set([0x21, 0x42, 0x48, 0x66, 0x68, 0x77]);

/**
 * A streaming decoder: bytes may arrive split anywhere. Text is gathered into lines ended by LF
 * (CR is ignored), each line with the bold and alignment in force when it ended.
 */
export class EscPosDecoder {
  readonly events: PrinterEvent[] = [];
  #buf: number[] = [];
  #line: number[] = [];
  #bold = false;
  #align = 0;
  /** Called for each status request as it is decoded, so an emulator can answer at once. */
  onStatusRequest: ((n: number) => void) | undefined;

  feed(chunk: Uint8Array): void {
    this.#buf.push(...chunk);
    for (;;) {
      const used = this.#step();
      if (used === 0) return;
      this.#buf.splice(0, used);
    }
  }

  /** Decodes one command or byte at the head of the buffer; 0 when more bytes are needed. */
  #step(): number {
    const b = this.#buf;
    if (b.length === 0) return 0;
    const need = (n: number) => b.length >= n;
    const c = b[0]!;
    if (c === LF) {
      this.events.push({ type: 'text', line: Buffer.from(this.#line).toString('latin1'), bold: this.#bold, align: this.#align });
      this.#line = [];
      return 1;
    }
    if (c === CR) return 1;
    if (c === DLE) {
      if (!need(3)) return 0;
      if (b[1] === 0x04) {
        this.events.push({ type: 'status_request', n: b[2]! });
        this.onStatusRequest?.(b[2]!);
        return 3;
      }
      this.events.push({ type: 'unknown', bytes: b.slice(0, 3) });
      return 3;
    }
    if (c === FS) {
      if (!need(2)) return 0;
      // FS . cancels Kanji mode: nothing to show.
      if (b[1] === 0x2e) return 2;
      this.events.push({ type: 'unknown', bytes: b.slice(0, 2) });
      return 2;
    }
    if (c === ESC) {
      if (!need(2)) return 0;
      const cmd = b[1]!;
      if (cmd === 0x40) {
        this.#bold = false;
        this.#align = 0;
        this.events.push({ type: 'init' });
        return 2;
      }
      if (cmd === 0x70) {
        if (!need(5)) return 0;
        this.events.push({ type: 'kick', pin: b[2]! & 1 ? 5 : 2, onMs: b[3]! * 2, offMs: b[4]! * 2 });
        return 5;
      }
      if (!need(3)) return 0;
      if (cmd === 0x45) {
        this.#bold = (b[2]! & 1) === 1;
        return 3;
      }
      if (cmd === 0x61) {
        this.#align = b[2]! % 48;
        return 3;
      }
      if (ESC_ONE.has(cmd)) return 3;
      this.events.push({ type: 'unknown', bytes: b.slice(0, 3) });
      return 3;
    }
    if (c === GS) {
      if (!need(2)) return 0;
      const cmd = b[1]!;
      if (cmd === 0x56) {
        if (!need(3)) return 0;
        const m = b[2]!;
        const withFeed = m === 65 || m === 66;
        if (withFeed && !need(4)) return 0;
        this.events.push({ type: 'cut', partial: m === 1 || m === 49 || m === 66 });
        return withFeed ? 4 : 3;
      }
      if (cmd === 0x28 && need(3) && b[2] === 0x6b) {
        if (!need(5)) return 0;
        const len = b[3]! + b[4]! * 256;
        if (!need(5 + len)) return 0;
        const body = b.slice(5, 5 + len);
        const [cn, fn] = body as [number, number];
        if (cn === 0x31 && fn === 0x50) this.events.push({ type: 'qr_store', data: Buffer.from(body.slice(3)).toString('latin1') });
        else if (cn === 0x31 && fn === 0x51) this.events.push({ type: 'qr_print' });
        else if (cn === 0x31) this.events.push({ type: 'qr_setting', fn });
        else this.events.push({ type: 'unknown', bytes: b.slice(0, 5 + len) });
        return 5 + len;
      }
      if (!need(3)) return 0;
      if (GS_ONE.has(cmd)) return 3;
      this.events.push({ type: 'unknown', bytes: b.slice(0, 3) });
      return 3;
    }
    if (c < 0x20) {
      this.events.push({ type: 'unknown', bytes: [c] });
      return 1;
    }
    this.#line.push(c);
    return 1;
  }

  /** The text lines printed so far, trimmed on the right. */
  lines(from = 0): string[] {
    return this.events.slice(from).flatMap((e) => (e.type === 'text' ? [e.line.trimEnd()] : []));
  }

  count(type: PrinterEvent['type'], from = 0): number {
    return this.events.slice(from).filter((e) => e.type === type).length;
  }
}

/** What a scripted printer reports: the `DLE EOT` replies are built from it. */
export interface ScriptedStatus {
  /** false: the printer answers nothing at all (powered off, cable cut). */
  answering: boolean;
  offline: boolean;
  paperOut: boolean;
  coverOpen: boolean;
  drawerOpen: boolean;
}

/** The reply byte to `DLE EOT n` for a scripted status (fixed bits 1 and 4 set). */
export function statusReply(n: number, s: ScriptedStatus): number {
  const base = 0x12;
  if (n === 1) return base | (s.drawerOpen ? 0x04 : 0) | (s.offline || s.paperOut || s.coverOpen ? 0x08 : 0);
  if (n === 2) return base | (s.coverOpen ? 0x04 : 0) | (s.paperOut ? 0x20 : 0);
  if (n === 4) return base | (s.paperOut ? 0x60 : 0);
  return base;
}

/**
 * The two lines of a 2×20 ESC/POS customer display: `ESC @` and CLR clear it, `US $ x y` moves
 * the cursor, printable bytes are written where it stands.
 */
export class DisplayScreen {
  readonly cols = 20;
  rows: string[] = [' '.repeat(20), ' '.repeat(20)];
  readonly history: string[][] = [];
  #x = 0;
  #y = 0;
  #buf: number[] = [];
  unknown = 0;

  feed(chunk: Uint8Array): void {
    this.#buf.push(...chunk);
    for (;;) {
      const b = this.#buf;
      if (b.length === 0) break;
      const c = b[0]!;
      let used = 1;
      if (c === ESC) {
        if (b.length < 2) break;
        if (b[1] === 0x40) this.#clear();
        else this.unknown += 1;
        used = 2;
      } else if (c === 0x0c) {
        this.#clear();
      } else if (c === 0x1f) {
        if (b.length < 2) break;
        if (b[1] === 0x24) {
          if (b.length < 4) break;
          this.#x = Math.max(0, b[2]! - 1);
          this.#y = Math.max(0, Math.min(1, b[3]! - 1));
          used = 4;
        } else {
          this.unknown += 1;
          used = 2;
        }
      } else if (c >= 0x20 && c < 0x7f) {
        if (this.#x < this.cols) {
          const row = this.rows[this.#y]!;
          this.rows[this.#y] = row.slice(0, this.#x) + String.fromCharCode(c) + row.slice(this.#x + 1);
        }
        this.#x += 1;
      } else {
        this.unknown += 1;
      }
      this.#buf.splice(0, used);
    }
    const shown = this.text();
    const last = this.history[this.history.length - 1];
    if (!last || last[0] !== shown[0] || last[1] !== shown[1]) this.history.push(shown);
  }

  #clear(): void {
    this.rows = [' '.repeat(20), ' '.repeat(20)];
    this.#x = 0;
    this.#y = 0;
  }

  /** Both lines, trimmed. */
  text(): [string, string] {
    return [this.rows[0]!.trim(), this.rows[1]!.trim()];
  }
}
