/**
 * The serial reader line protocol (docs/serial-readers.md): ASCII lines ending in `\n` (a `\r`
 * before it is ignored), a verb in capitals, then `key=value` fields without spaces.
 *
 * Reader → agent                               Agent → reader
 *   HELLO model=M serial=S [firmware=F]          IDENTIFY            (answer with HELLO)
 *   PONG                                         PING                (answer with PONG)
 *   STATE idle|waiting_for_card|processing       PAY txn=T amount=N currency=C
 *   CARD brand=B last4=NNNN                      CANCEL
 *   RESULT approved|declined|canceled [code=C]
 *   ERR free text
 */

/** Longer lines are a garbled stream, not a message: they are dropped. */
export const MAX_LINE_LENGTH = 256;

export type DeviceMessage =
  | { verb: 'HELLO'; model: string; serial: string; firmware?: string }
  | { verb: 'PONG' }
  | { verb: 'STATE'; state: 'idle' | 'waiting_for_card' | 'processing' }
  | { verb: 'CARD'; brand: string; last4: string }
  | { verb: 'RESULT'; result: 'approved' | 'declined' | 'canceled'; code?: string }
  | { verb: 'ERR'; message: string };

export type ParseResult = { ok: true; message: DeviceMessage } | { ok: false; error: string };

const TOKEN = /^[A-Za-z0-9_.:\-/]{1,64}$/;

function fields(parts: string[]): Map<string, string> | string {
  const map = new Map<string, string>();
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq <= 0) return `expected key=value, got "${part}"`;
    const key = part.slice(0, eq);
    const value = part.slice(eq + 1);
    if (!TOKEN.test(key) || !TOKEN.test(value)) return `bad field "${part}"`;
    map.set(key, value);
  }
  return map;
}

export function parseLine(raw: string): ParseResult {
  const line = raw.replace(/\r$/, '').trim();
  if (line.length === 0) return { ok: false, error: 'empty line' };
  if (line.length > MAX_LINE_LENGTH) return { ok: false, error: 'line too long' };
  const [verb, ...rest] = line.split(/\s+/);
  switch (verb) {
    case 'PONG':
      return rest.length === 0 ? { ok: true, message: { verb } } : { ok: false, error: 'PONG takes no fields' };
    case 'ERR':
      return { ok: true, message: { verb, message: rest.join(' ') } };
    case 'STATE': {
      const state = rest[0];
      if (rest.length !== 1 || (state !== 'idle' && state !== 'waiting_for_card' && state !== 'processing')) return { ok: false, error: 'STATE takes idle, waiting_for_card or processing' };
      return { ok: true, message: { verb, state } };
    }
    case 'RESULT': {
      const [result, ...more] = rest;
      if (result !== 'approved' && result !== 'declined' && result !== 'canceled') return { ok: false, error: 'RESULT takes approved, declined or canceled' };
      const f = fields(more);
      if (typeof f === 'string') return { ok: false, error: f };
      const code = f.get('code');
      return { ok: true, message: { verb, result, ...(code ? { code } : {}) } };
    }
    case 'HELLO': {
      const f = fields(rest);
      if (typeof f === 'string') return { ok: false, error: f };
      const model = f.get('model');
      const serial = f.get('serial');
      if (!model || !serial) return { ok: false, error: 'HELLO needs model= and serial=' };
      const firmware = f.get('firmware');
      return { ok: true, message: { verb, model, serial, ...(firmware ? { firmware } : {}) } };
    }
    case 'CARD': {
      const f = fields(rest);
      if (typeof f === 'string') return { ok: false, error: f };
      const brand = f.get('brand');
      const last4 = f.get('last4');
      if (!brand || !last4 || !/^\d{4}$/.test(last4)) return { ok: false, error: 'CARD needs brand= and last4=NNNN' };
      return { ok: true, message: { verb, brand, last4 } };
    }
    default:
      return { ok: false, error: `unknown verb "${verb ?? ''}"` };
  }
}

/** Splits a byte stream into lines; keeps the unfinished tail for the next chunk. */
export class LineSplitter {
  #buffer = '';

  push(chunk: string): string[] {
    this.#buffer += chunk;
    const lines = this.#buffer.split('\n');
    this.#buffer = lines.pop() ?? '';
    // A tail this long without a newline is garbage; keeping it would grow without bound.
    if (this.#buffer.length > MAX_LINE_LENGTH * 4) this.#buffer = '';
    return lines;
  }
}

export function payLine(txn: string, amount: number, currency: string): string {
  return `PAY txn=${txn} amount=${amount} currency=${currency}\n`;
}
