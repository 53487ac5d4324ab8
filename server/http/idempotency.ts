import type { Request, Response } from 'express';
import type { ExecuteResult } from '../idempotency/keys.js';
import { IdempotencyKeySchema } from '../../shared/contract/transactions.js';
import { invalid } from '../errors.js';
import { sendJson, sendJsonText } from './send.js';

/**
 * The request's `Idempotency-Key` header, checked once however many read it (the audit trail, then
 * the route): the key, null when there is none, false when it is not a valid key.
 */
export function headerKeyOf(req: Request): string | null | false {
  if (req.idempotencyHeader !== undefined) return req.idempotencyHeader;
  const header = req.get('idempotency-key');
  const parsed = header === undefined ? undefined : IdempotencyKeySchema.safeParse(header);
  const checked = parsed === undefined ? null : parsed.success ? parsed.data : false;
  req.idempotencyHeader = checked;
  return checked;
}

/**
 * The client's idempotency key: the `Idempotency-Key` header, or (on the endpoints spec §9 names)
 * the legacy `idempotency_key` body field. The header wins when both are sent.
 */
export function idempotencyKeyOf(req: Request, bodyKey?: string): string | undefined {
  const header = headerKeyOf(req);
  if (header === false) throw invalid('Idempotency-Key', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
  return header ?? bodyKey;
}

/**
 * Answers an idempotent endpoint: the stored result, 200 instead of 201 on a replay with a note,
 * and the key echoed (only these endpoints echo it, spec §8 rule 2).
 */
export function sendIdempotent(res: Response, result: ExecuteResult, clientKey: string | undefined): void {
  if (clientKey !== undefined) res.setHeader('Idempotency-Key', clientKey);
  const { status, text } = result.response;
  if (!result.replayed) return sendJson(res, status, result.response.body);
  res.setHeader('Idempotent-Replayed', 'true');
  if (status !== 201) return text === undefined ? sendJson(res, status, result.response.body) : sendJsonText(res, status, text);
  // A replayed create answers 200 with a note next to the stored object, spliced into the stored
  // text when that is plainly an object without a message of its own.
  if (text !== undefined && text.startsWith('{') && text !== '{}' && !text.includes('"message"')) {
    return sendJsonText(res, 200, `${text.slice(0, -1)},"message":${REPLAY_NOTE_JSON}}`);
  }
  const body = result.response.body;
  sendJson(res, 200, body && typeof body === 'object' && !Array.isArray(body) ? { ...body, message: REPLAY_NOTE } : body);
}

const REPLAY_NOTE = 'Idempotent replay: this is the object created by the first request with this Idempotency-Key';
const REPLAY_NOTE_JSON = JSON.stringify(REPLAY_NOTE);
