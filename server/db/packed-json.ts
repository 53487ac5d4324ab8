import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';
import { toIsoTimestamp } from '../../shared/time.js';

/**
 * JSON kept compactly in the store: the event log's data and idempotent requests' state, origin and
 * stored answer. Most of a stored payment is the same field names and nulls in every row, so the
 * text is deflated against a preset dictionary of those (a payment of ~1,120 bytes packs to ~185
 * characters) and kept as text, so that both stores keep their column types and a value can still
 * be sealed (server/db/encryption.ts) after it is packed. Deflate is lossless: unpacking gives back
 * the very text that was packed, so an event or a replayed answer reads byte for byte as written.
 *
 *     z2:<base91 (below) of raw deflate of the compact bytes (below) against DICTIONARY_V1>
 *     z1:<base64 of raw deflate of the text's UTF-8 against DICTIONARY_V1, without padding>
 *
 * `z2:` is written; `z1:` values, written before it, are still read. What is left of a payment once
 * its field names match the dictionary is mostly its ids and times, which deflate codes a byte per
 * character: `z2:` deflates the text's UTF-8 with each lowercase UUID replaced by UUID_MARK and its
 * 16 bytes, and each quoted UTC timestamp (`"2026-11-27T05:36:57.490+00:00"`, the API's form)
 * replaced by TIME_MARK and its epoch milliseconds in 6 bytes. Neither mark byte occurs in UTF-8,
 * and a timestamp is replaced only where it is written exactly as it is given back, so the text
 * unpacked is the text packed. Its bytes are then written 13 bits to two characters of BASE91,
 * 8% shorter than base64 (four characters for 24 bits).
 *
 * Anything else is JSON stored as it is (values written before packing, and values that would not
 * shrink); JSON text never starts with `z`.
 */

const PREFIX_V1 = 'z1:';
const PREFIX_V2 = 'z2:';

/**
 * The preset dictionary of `z1:` and `z2:`: never edited, since every value packed with it needs it
 * to unpack. A better dictionary is a new version beside them (`z3:`), with `unpackJson` reading all.
 * Deflate finds matches nearest the end cheapest, so the most common shape (a payment) comes last.
 */
const DICTIONARY_V1 = Buffer.from(
  [
    '{"requestId":"req_","idempotencyKey":"","key":{"id":"","type":"secret","last4":""},"operation":"POST /v1/transactions","targetId":null}',
    '{"input":{"amount":,"currency":"usd","payment_method":"pm_card_visa","payment_method_type":"card","confirm":true,"capture_method":"automatic","description":""},"source":"api","terminalId":null,"response":"transaction","transactionId":""}',
    '{"data":{"id":"","object":"transaction","reference":"txn_","type":"payment","status":"succeeded","status_badge":"Succeeded","amount":,"amount_captured":,',
    '"amount_refunded":0,"currency":"usd","payment_method_type":"card","capture_method":"automatic","description":null,"receipt_email":null,"source":"api",',
    '"customer_id":null,"is_test":true,"metadata":{},"payment_intent_id":"pi_","card_brand":"visa","card_last_four":"4242","platform_fee_cents":,"tip_amount":0,',
    '"amount_tendered":null,"change_due":null,"failure_code":null,"decline_code":null,"failure_message":null,"cancellation_reason":null,"receipt_url":null,',
    '"terminal_id":null,"reader_id":null,"location_id":null,"created_by_key_id":"","offline_reference":null,"checkout_session_id":null,"payment_link_id":null,',
    '"created_at":"2026-11-27T05:36:57.490+00:00","updated_at":"2026-11-27T05:36:57.490+00:00","captured_at":null,"failed_at":null,"canceled_at":null,',
    '"refunded_at":null,"disputed_at":null,"dispute_id":null,"dispute_status":null,"cart":null},"client_secret":"pi__secret_"}',
  ].join(''),
  'utf8',
);

/** Byte values that never occur in UTF-8: each starts a compacted id or time in `z2:` bytes. */
const UUID_MARK = 0xff;
const TIME_MARK = 0xfe;
const UUID_BYTES = 16;
const TIME_BYTES = 6;

/** A lowercase UUID, or a quoted timestamp in the API's form (shared/time.ts `toIsoTimestamp`). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const QUOTED_TIME = /^"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}\+00:00"$/;
const UUID_CHARS = 36;
const QUOTED_TIME_CHARS = 31;

/** The quoted timestamp of epoch milliseconds, as the API writes it. */
function quotedTime(ms: number): string {
  return `"${toIsoTimestamp(ms)}"`;
}

/** The epoch milliseconds of a quoted timestamp that is given back exactly as written, else undefined. */
function compactTime(quoted: string): number | undefined {
  if (!QUOTED_TIME.test(quoted)) return undefined;
  const ms = Date.parse(quoted.slice(1, -1));
  // Only a real date, within 6 bytes of ms, that reads back as the very text.
  return Number.isInteger(ms) && ms >= 0 && ms < 2 ** (8 * TIME_BYTES) && quotedTime(ms) === quoted ? ms : undefined;
}

/**
 * The `z2:` bytes of JSON text: its UTF-8 with UUIDs and timestamps compacted. Both hold a dash at
 * a fixed place (a UUID's first after 8 characters, a quoted time's after 5), and JSON text has few
 * other dashes, so the text is walked from dash to dash rather than matched at every character.
 * Each is taken leftmost first and never overlapping, as a left-to-right scan of the two patterns
 * would; the bytes are written into one buffer (compacting only shortens the text).
 */
function compact(text: string): Buffer {
  const out = Buffer.allocUnsafe(Buffer.byteLength(text, 'utf8'));
  let n = 0;
  let from = 0;
  const copyTo = (end: number) => {
    if (end > from) n += out.write(text.slice(from, end), n, 'utf8');
  };
  let dash = text.indexOf('-', from);
  while (dash !== -1) {
    // Of the two that could hold this dash, the one starting further left comes first.
    const timeStart = dash - 5;
    const uuidStart = dash - 8;
    let taken = false;
    const uuid = uuidStart >= from && text.charCodeAt(dash + 5) === 45 ? text.slice(uuidStart, uuidStart + UUID_CHARS) : '';
    if (UUID.test(uuid)) {
      copyTo(uuidStart);
      out[n++] = UUID_MARK;
      n += out.write(uuid.replaceAll('-', ''), n, 'hex');
      from = uuidStart + UUID_CHARS;
      taken = true;
    } else if (timeStart >= from && text.charCodeAt(timeStart) === 34) {
      const ms = compactTime(text.slice(timeStart, timeStart + QUOTED_TIME_CHARS));
      if (ms !== undefined) {
        copyTo(timeStart);
        out[n++] = TIME_MARK;
        out.writeUIntBE(ms, n, TIME_BYTES);
        n += TIME_BYTES;
        from = timeStart + QUOTED_TIME_CHARS;
        taken = true;
      }
    }
    dash = text.indexOf('-', taken ? from : dash + 1);
  }
  copyTo(text.length);
  return out.subarray(0, n);
}

/** The JSON text of `z2:` bytes. */
function expand(bytes: Buffer): string {
  let text = '';
  let from = 0;
  for (let i = 0; i < bytes.length; i++) {
    const mark = bytes[i];
    if (mark !== UUID_MARK && mark !== TIME_MARK) continue;
    text += bytes.toString('utf8', from, i);
    if (mark === UUID_MARK) {
      const hex = bytes.toString('hex', i + 1, i + 1 + UUID_BYTES);
      if (hex.length !== 2 * UUID_BYTES) throw new Error('packed JSON ends inside a UUID');
      text += `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
      i += UUID_BYTES;
    } else {
      if (i + TIME_BYTES >= bytes.length) throw new Error('packed JSON ends inside a timestamp');
      text += quotedTime(bytes.readUIntBE(i + 1, TIME_BYTES));
      i += TIME_BYTES;
    }
    from = i + 1;
  }
  return text + bytes.toString('utf8', from);
}

/**
 * Printable ASCII without the quote, the apostrophe and the backslash, so a packed value reads the
 * same inside SQL or JSON: 91 characters, and 91² ≥ 2¹³, so two of them carry 13 bits.
 */
const BASE91 = Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i))
  .filter((c) => c !== '"' && c !== "'" && c !== '\\')
  .join('');
const BASE91_DIGIT = new Map([...BASE91].map((c, i) => [c, i]));

/**
 * Bytes as BASE91 text: each 13 bits as two characters (low digit first); a last group of up to 6
 * bits as one character, of 7 to 12 bits as two, padded with zero bits. The length says how many
 * bits there were: the whole bytes they hold.
 */
function toBase91(bytes: Buffer): string {
  let text = '';
  let held = 0;
  let bits = 0;
  const pair = (value: number) => BASE91[value % 91]! + BASE91[Math.floor(value / 91)]!;
  for (const byte of bytes) {
    held = (held << 8) | byte;
    bits += 8;
    if (bits >= 13) {
      bits -= 13;
      text += pair(held >>> bits);
      held &= (1 << bits) - 1;
    }
  }
  if (bits > 6) text += pair(held << (13 - bits));
  else if (bits > 0) text += BASE91[held << (6 - bits)]!;
  return text;
}

function fromBase91(text: string): Buffer {
  const digit = (c: string): number => {
    const value = BASE91_DIGIT.get(c);
    if (value === undefined) throw new Error('packed JSON holds a character outside its alphabet');
    return value;
  };
  const pairs = text.length >>> 1;
  const bytes = Buffer.alloc((pairs * 13 + (text.length % 2) * 6) >>> 3);
  let held = 0;
  let bits = 0;
  let n = 0;
  const take = (value: number, width: number) => {
    held = (held << width) | value;
    bits += width;
    while (bits >= 8 && n < bytes.length) {
      bits -= 8;
      bytes[n++] = (held >>> bits) & 0xff;
    }
    held &= (1 << bits) - 1;
  };
  for (let i = 0; i < pairs; i++) {
    const value = digit(text[2 * i]!) + 91 * digit(text[2 * i + 1]!);
    if (value >= 1 << 13) throw new Error('packed JSON holds a pair of characters above 13 bits');
    take(value, 13);
  }
  if (text.length % 2 === 1) {
    const value = digit(text[text.length - 1]!);
    if (value >= 1 << 6) throw new Error('packed JSON ends in a character above 6 bits');
    take(value, 6);
  }
  return bytes;
}

/**
 * How values are deflated. A value is a kilobyte or so after a 1.4 KB dictionary, so a 4 KB window
 * (2^12) reaches all of both for nearly every value, and a smaller hash (memLevel 6) indexes them as
 * well: counted with callgrind over stored events and answers, each deflate took 31 % fewer
 * instructions than with zlib's defaults (2^15, 8), most of which went to clearing their larger
 * tables, and the output was the same size. Inflating needs no setting: a stream made with a
 * smaller window is read by the default one, so values packed before read as they did.
 *
 * Both sides write into output chunks smaller than zlib's default 16 KiB: a chunk under 4 KiB is
 * cut from Node's buffer pool instead of being a new allocation, which for a value this small is a
 * good part of the call. Measured on a stored payment event (~1.1 KB of JSON, ~180 bytes packed),
 * 20,000 calls a round, median of six: a pack 18.2 -> 14.9 us with 512-byte chunks, an unpack
 * 8.6 -> 6.2 us with 2 KiB ones. The bytes are the same; a larger value takes more chunks.
 */
const DEFLATE_OPTIONS = { level: constants.Z_BEST_COMPRESSION, windowBits: 12, memLevel: 6, dictionary: DICTIONARY_V1, chunkSize: 512 };
const INFLATE_OPTIONS = { dictionary: DICTIONARY_V1, chunkSize: 2048 };

/** JSON text as it is kept: packed when that is shorter. */
export function packJson(text: string): string {
  const packed = PREFIX_V2 + toBase91(deflateRawSync(compact(text), DEFLATE_OPTIONS));
  return packed.length < text.length ? packed : text;
}

/** The JSON text a kept value holds, exactly as it was packed. */
export function unpackJson(stored: string): string {
  if (stored.startsWith(PREFIX_V2)) return expand(inflateRawSync(fromBase91(stored.slice(PREFIX_V2.length)), INFLATE_OPTIONS));
  if (stored.startsWith(PREFIX_V1)) return inflateRawSync(Buffer.from(stored.slice(PREFIX_V1.length), 'base64'), INFLATE_OPTIONS).toString('utf8');
  return stored;
}
