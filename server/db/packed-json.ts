import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';

/**
 * JSON kept compactly in the store: the event log's data and idempotent requests' state, origin and
 * stored answer. Most of a stored payment is the same field names and nulls in every row, so the
 * text is deflated against a preset dictionary of those (a payment of ~1,150 bytes packs to ~230
 * characters) and kept as text, so that both stores keep their column types and a value can still
 * be sealed (server/db/encryption.ts) after it is packed. Deflate is lossless: unpacking gives back
 * the very text that was packed, so an event or a replayed answer reads byte for byte as written.
 *
 *     z1:<base64 of raw deflate against DICTIONARY_V1, without padding>
 *
 * Anything else is JSON stored as it is (values written before packing, and values that would not
 * shrink); JSON text never starts with `z`.
 */

const PREFIX_V1 = 'z1:';

/**
 * The preset dictionary of `z1:`: never edited, since every value packed with it needs it to
 * unpack. A better dictionary is a new version beside it (`z2:`), with `unpackJson` reading both.
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

/** JSON text as it is kept: packed when that is shorter. */
export function packJson(text: string): string {
  const packed = PREFIX_V1 + deflateRawSync(Buffer.from(text, 'utf8'), { level: constants.Z_BEST_COMPRESSION, dictionary: DICTIONARY_V1 }).toString('base64').replace(/=+$/, '');
  return packed.length < text.length ? packed : text;
}

/** The JSON text a kept value holds, exactly as it was packed. */
export function unpackJson(stored: string): string {
  if (!stored.startsWith(PREFIX_V1)) return stored;
  return inflateRawSync(Buffer.from(stored.slice(PREFIX_V1.length), 'base64'), { dictionary: DICTIONARY_V1 }).toString('utf8');
}

/** `packJson` for a nullable column. */
export function packJsonOrNull(text: string | null): string | null {
  return text === null ? null : packJson(text);
}
