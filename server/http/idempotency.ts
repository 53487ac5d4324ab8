import type { Request, Response } from 'express';
import type { ExecuteResult } from '../services/idempotency.js';
import { IdempotencyKeySchema } from '../schemas/transactions.js';
import { invalid } from '../errors.js';

/**
 * The client's idempotency key: the `Idempotency-Key` header, or (on the endpoints spec §9 names)
 * the legacy `idempotency_key` body field. The header wins when both are sent.
 */
export function idempotencyKeyOf(req: Request, bodyKey?: string): string | undefined {
  const header = req.get('idempotency-key');
  if (header !== undefined) {
    const result = IdempotencyKeySchema.safeParse(header);
    if (!result.success) throw invalid('Idempotency-Key', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
    return result.data;
  }
  return bodyKey;
}

/**
 * Answers an idempotent endpoint: the stored result, 200 instead of 201 on a replay with a note,
 * and the key echoed (only these endpoints echo it, spec §8 rule 2).
 */
export function sendIdempotent(res: Response, result: ExecuteResult, clientKey: string | undefined): void {
  if (clientKey !== undefined) res.set('Idempotency-Key', clientKey);
  let { status, body } = result.response;
  if (result.replayed) {
    res.set('Idempotent-Replayed', 'true');
    if (status === 201) {
      status = 200;
      if (body && typeof body === 'object' && !Array.isArray(body)) {
        body = { ...body, message: 'Idempotent replay: this is the object created by the first request with this Idempotency-Key' };
      }
    }
  }
  res.status(status).json(body);
}
