import type { Express, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { answeredObjectId, type AuditLog, factsOf } from '../audit/log.js';
import type { RouteMatcher } from './route-table.js';
import { headerKeyOf } from './idempotency.js';
import './types.js';

/** The methods that change something; reads leave no entry. */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

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
export function auditTrail(app: Express, audit: AuditLog, routes: RouteMatcher, logger: Logger): RequestHandler {
  const response = app.response as Response;
  const end = response.end as (this: Response, chunk?: unknown, encoding?: unknown, cb?: unknown) => Response;
  // The answer of a write this middleware took is held back at its first `end`, patched once on the
  // app's response prototype (as timeResponses does) rather than on each response: a closure per
  // request showed in the profile. Patched after the in-flight count's `end`, so a request counts
  // until its held answer has gone out.
  response.end = function (this: Response, chunk?: unknown, encoding?: unknown, cb?: unknown) {
    const req = this.req;
    const origin = req.origin;
    const principal = req.principal;
    if (!req.auditPending || !origin || !principal) return end.call(this, chunk, encoding, cb);
    req.auditPending = false;
    const status = this.statusCode;
    if (origin.engine || (status >= 400 && status < 500 && status !== 403)) return end.call(this, chunk, encoding, cb);
    const objectId = answeredObjectId(status, answerOf(this, chunk));
    const send = (): Response => end.call(this, chunk, encoding, cb);
    audit.record({ merchantId: principal.merchantId, mode: principal.mode }, factsOf(origin, { status, objectId })).then(send, (err: unknown) => {
      logger.error({ err, req_id: req.requestId, operation: origin.operation }, 'writing the audit entry of a request failed');
      send();
    });
    return this;
  } as Response['end'];
  return (req, _res, next) => {
    const principal = req.principal;
    if (!principal || !WRITES.has(req.method)) return next();
    const match = routes(req.method, req.baseUrl + req.path);
    if (!match) return next();
    const key = headerKeyOf(req);
    req.origin = {
      requestId: req.requestId,
      idempotencyKey: key === false ? null : key,
      key: { id: principal.keyId, type: principal.kind, last4: principal.last4 },
      operation: `${req.method} ${match.route.path}`,
      targetId: match.params[0] ?? null,
    };
    req.auditPending = true;
    next();
  };
}
