import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { answeredObjectId, type AuditLog, factsOf } from '../audit/log.js';
import type { RequestOrigin } from '../audit/origin.js';
import { IdempotencyKeySchema } from '../../shared/contract/transactions.js';
import type { RouteMatcher } from './route-table.js';
import './types.js';

/** The methods that change something; reads leave no entry. */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The Idempotency-Key a request carried, when it is one (an invalid one is refused by the route that reads it). */
function idempotencyKeyOf(req: Request): string | null {
  const header = req.get('idempotency-key');
  if (header === undefined) return null;
  const parsed = IdempotencyKeySchema.safeParse(header);
  return parsed.success ? parsed.data : null;
}

/** The answer's JSON, for the id of what it returned; only successes are read. */
function answerOf(res: Response, chunk: unknown): unknown {
  if (res.statusCode >= 300) return null;
  const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : undefined;
  if (!text?.startsWith('{')) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

/**
 * The audit trail at the edge. Every write to a declared /v1 operation made with a valid key gets an
 * origin (the key's id, type and last four, the Request-Id, the Idempotency-Key, the route), which
 * the route hands the domain on its `Scope`. Then one of two things writes the request's entry:
 *
 * - the idempotency engine, for the requests it takes (payments, refunds, payouts, payment
 *   links), in the transaction that stores the answer: the entry exists if and only if the answer
 *   does, and a replay writes none;
 * - this middleware, for every other write: in a transaction of its own once the route has
 *   answered, holding the answer back until the entry is committed. A crash in between leaves a
 *   change without an entry, but never an answer without one: the client saw no answer and must
 *   look or retry.
 *
 * Refusals answered here that changed nothing (400, 404, 409…) leave no entry: a flood of bad
 * requests must not become a flood of durable writes. A 403 does: a key that tried what it may
 * not do (a counter key refunding) is what an owner looks for in the trail. 5xx answers do too,
 * since whether something changed before the failure is exactly what the trail should show.
 *
 * An entry that cannot be written (the database is gone) is logged, and the answer still goes out:
 * the change it describes is committed, and hiding that from the client would be worse.
 */
export function auditTrail(audit: AuditLog, routes: RouteMatcher, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const principal = req.principal;
    if (!principal || !WRITES.has(req.method)) return next();
    const match = routes(req.method, req.baseUrl + req.path);
    if (!match) return next();
    const origin: RequestOrigin = {
      requestId: req.requestId,
      idempotencyKey: idempotencyKeyOf(req),
      key: { id: principal.keyId, type: principal.kind, last4: principal.last4 },
      operation: `${req.method} ${match.route.path}`,
      targetId: match.params[0] ?? null,
    };
    req.origin = origin;
    const end = res.end;
    res.end = function (this: Response, ...args: unknown[]) {
      res.end = end;
      const send = () => (end as (...a: unknown[]) => Response).apply(this, args);
      if (origin.engine || (res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 403)) return send();
      const objectId = answeredObjectId(res.statusCode, answerOf(res, args[0]));
      audit.record({ merchantId: principal.merchantId, mode: principal.mode }, factsOf(origin, { status: res.statusCode, objectId })).then(send, (err: unknown) => {
        logger.error({ err, req_id: req.requestId, operation: origin.operation }, 'writing the audit entry of a request failed');
        send();
      });
      return this;
    } as Response['end'];
    next();
  };
}
