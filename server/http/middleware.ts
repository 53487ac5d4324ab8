import type { RequestLogHub } from '../audit/request-log.js';
import { answerForFailure, ProcessorFailure } from '../processor/errors.js';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { newReference } from '../../shared/ids.js';
import type { Clock } from '../../shared/time.js';
import { ApiError, badRequest, bodyTooLarge, forbidden, internal, invalid, missing, missingScope, rateLimited, routeNotFound, unauthenticated, unsupportedMediaType } from '../errors.js';
import { missingPermission } from '../accounts/permissions.js';
import { shownTo } from '../accounts/visibility.js';
import { declaredOrFlagged, type RouteMatcher } from './route-table.js';
import type { KeyAuthenticator, Principal } from '../accounts/api-keys.js';
import type { Scope } from '../accounts/scope.js';
import type { RateLimitDecision, RateLimiter } from './rate-limit.js';
import { inputProblem } from './input.js';
import { sendJson } from './send.js';
import './types.js';

/**
 * What every request gets first: its id (`Request-Id`), its start time and, at info level, one
 * access-log line. `Server-Timing` (how much of the client's latency was ours; the benchmark reads
 * it) is added by `timeResponses` as the head goes out.
 */
export function requestContext(logger: Logger, requestLog?: RequestLogHub): RequestHandler {
  const logRequests = logger.isLevelEnabled('info');
  // Listeners shared by every response (`this` is the response), not closures made per request.
  const publish = requestLog
    ? function (this: Response): void {
        const req = this.req;
        const principal = req.principal;
        if (!principal || !requestLog.follows(principal.merchantId, principal.mode)) return;
        requestLog.publish(principal.merchantId, principal.mode, {
          request_id: req.requestId,
          method: req.method,
          path: pathOf(req),
          status: this.statusCode,
          duration_ms: Math.round((performance.now() - req.startedAt) * 10) / 10,
          idempotency_key: req.get('idempotency-key') ?? null,
          key_type: principal.kind,
          key_last4: principal.last4,
          created_at: new Date().toISOString(),
        });
      }
    : undefined;
  const logRequest = function (this: Response): void {
    const req = this.req;
    logger.info(
      {
        req_id: req.requestId,
        method: req.method,
        // The whole path: inside a router req.path is only the part after its mount point.
        path: pathOf(req),
        status: this.statusCode,
        ms: performance.now() - req.startedAt,
        merchant_id: req.principal?.merchantId,
        mode: req.principal?.mode,
      },
      'request',
    );
  };
  return (req, res, next) => {
    req.startedAt = performance.now();
    req.requestId = newReference('request');
    res.setHeader('Request-Id', req.requestId);
    if (publish) res.on('finish', publish);
    if (logRequests) res.on('finish', logRequest);
    next();
  };
}

/**
 * Adds `Server-Timing: app;dur=<ms>` to every response of `app` as its head is written. Done once
 * on the app's response prototype rather than by wrapping each response's writeHead: a closure per
 * request showed in the profile.
 */
export function timeResponses(app: Express): void {
  const response = app.response as Response;
  const writeHead = response.writeHead as (this: Response, status: number, reason?: unknown, headers?: unknown) => Response;
  // The arguments are passed on as they came, without collecting them into an array.
  response.writeHead = function (this: Response, status: number, reason?: unknown, headers?: unknown) {
    const started = this.req.startedAt;
    if (!this.headersSent && started !== undefined) this.setHeader('Server-Timing', `app;dur=${(performance.now() - started).toFixed(2)}`);
    return writeHead.call(this, status, reason, headers);
  } as Response['writeHead'];
}

/**
 * Every JSON answer of `app` as its key may see it: a key without `customers:read` gets the
 * customer fields other objects carry (a payment's receipt_email, …; server/accounts/visibility.ts)
 * as null, in whatever route, list, event or replay they travel. Done where `res.json` sends, like
 * `timeResponses`, so no route can forget it; answers sent by `sendJson` pass the same rule there.
 */
export function hideCustomerData(app: Express): void {
  const response = app.response as Response;
  const json = response.json;
  response.json = function (this: Response, body?: unknown) {
    const principal = this.req.principal;
    return json.call(this, principal ? shownTo(principal, body) : body);
  } as Response['json'];
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The gate every request but processor events passes: a NUL in the URL is refused, the presented
 * key (if any) is resolved without rejecting (the rate limiter needs to know who asks first), and
 * the caller's window is counted. One middleware, not three: each Express layer costs a dispatch.
 */
export function gate(keys: KeyAuthenticator, limiter: RateLimiter, clock: Clock): RequestHandler {
  const count = (res: Response, next: NextFunction, decision: RateLimitDecision): void => {
    res.setHeader('X-RateLimit-Limit', String(decision.limit));
    res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
    res.setHeader('X-RateLimit-Reset', String(decision.resetSeconds));
    next(decision.allowed ? undefined : rateLimited(decision.resetSeconds));
  };
  const limit = (req: Request, res: Response, next: NextFunction): void | Promise<void> => {
    const who = req.principal ? `m:${req.principal.merchantId}:${req.principal.mode}` : `ip:${req.ip ?? 'unknown'}`;
    const decision = limiter.hit(who, clock.now());
    if (decision instanceof Promise) return decision.then((d) => count(res, next, d));
    count(res, next, decision);
  };
  return (req, res, next) => {
    // NUL characters are refused at the edge, in the URL here and in JSON bodies by apiEntry: no field
    // means anything with one, and PostgreSQL text cannot hold them (SQLite would store them silently).
    if (req.url.includes('%00')) {
      return next(invalid(undefined, 'The request URL contains a NUL character', 'invalid_characters'));
    }
    const header = req.headers.authorization;
    const key = header ? BEARER.exec(header)?.[1] : undefined;
    const principal = key ? keys.authenticate(key, clock.now()) : null;
    if (principal instanceof Promise) {
      return principal.then((p) => {
        req.principal = p ?? undefined;
        return limit(req, res, next);
      });
    }
    req.principal = principal ?? undefined;
    return limit(req, res, next);
  };
}

/**
 * What every /v1 call passes before its route, as one layer: a secret key, or a restricted key
 * holding the permission the route's declaration names (the key alone picks the merchant and the mode),
 * a body only as JSON, parsed by `parseJson`, and a body and query that pass `inputProblem`
 * (shallow, well-formed text, no stray control characters) before any route, store or processor
 * sees them.
 */
export function apiEntry(parseJson: RequestHandler, routes: RouteMatcher): RequestHandler {
  return (req, res, next) => {
    const refused = keyProblem(req, routes) ?? bodyTypeProblem(req) ?? (req.url.includes('?') ? inputProblem(req.query, 'query') : undefined);
    if (refused) return next(refused);
    if (!hasBody(req)) return next();
    parseJson(req, res, (err?: unknown) => {
      if (err) return next(err);
      next(inputProblem(req.body, 'body'));
    });
  };
}

function keyProblem(req: Request, routes: RouteMatcher): ApiError | undefined {
  const header = req.headers.authorization;
  if (!header) return unauthenticated('No API key provided: send `Authorization: Bearer sk_test_…` or `sk_live_…`');
  if (!BEARER.test(header)) return unauthenticated('Malformed Authorization header: expected `Bearer <secret key>`');
  const principal = req.principal;
  if (!principal) return unauthenticated('Invalid API key provided');
  if (principal.kind === 'secret') return undefined;
  if (principal.kind === 'publishable') return forbidden('secret_key_required', 'This API call cannot be made with a publishable API key; use a secret key (sk_…)');
  return restrictedKeyProblem(req, routes, principal.permissions);
}

/**
 * A restricted key may call what its permissions cover and nothing else: the scope is the one the
 * matched declaration names. A request no declaration matches is a 404 for it.
 */
function restrictedKeyProblem(req: Request, routes: RouteMatcher, held: ReadonlySet<string>): ApiError | undefined {
  const path = req.baseUrl + req.path;
  const needed = routes(req.method, path)?.route.scope;
  if (needed === undefined) return routeNotFound(req.method, path);
  if (needed === 'secret') return forbidden('secret_key_required', 'Only a secret key (sk_…) can do this: restricted keys never manage keys or read the audit trail');
  const missing = missingPermission(held, needed);
  return missing ? missingScope(missing) : undefined;
}

function hasBody(req: Request): boolean {
  return (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** Bodies must be JSON: a body of any other type is refused rather than silently ignored. */
function bodyTypeProblem(req: Request): ApiError | undefined {
  if (hasBody(req) && !req.is('application/json')) {
    return unsupportedMediaType('Request bodies must be JSON (Content-Type: application/json)');
  }
  return undefined;
}

/** The key behind the request (the gate refused requests without one before any route). */
export function principalOf(req: Request): Principal {
  const principal = req.principal;
  if (!principal) throw unauthenticated('Invalid API key provided');
  return principal;
}

export function scopeOf(req: Request): Scope {
  const principal = req.principal;
  if (!principal) throw unauthenticated('Invalid API key provided');
  return { merchantId: principal.merchantId, mode: principal.mode, requestId: req.requestId, ...(req.origin ? { origin: req.origin } : {}), ...(req.trace ? { trace: req.trace } : {}) };
}

/** The request's full path, without the query string (which can carry customers' data). */
function pathOf(req: Request): string {
  const url = req.originalUrl;
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

export function notFoundHandler(): RequestHandler {
  return (req, _res, next) => next(routeNotFound(req.method, pathOf(req)));
}

interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
  message?: string;
}

function fromBodyParser(err: BodyParserError): ApiError | undefined {
  switch (err.type) {
    case 'entity.parse.failed':
      return invalid(undefined, 'Malformed JSON in the request body', 'invalid_json');
    case 'entity.too.large':
      return bodyTooLarge('Request body is too large');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return unsupportedMediaType(err.message ?? 'Unsupported body encoding');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return invalid(undefined, err.message ?? 'Malformed request body');
    default:
      if (typeof err.status === 'number' && err.status >= 400 && err.status < 500 && err.expose) {
        return badRequest(err.status, err.message ?? 'Bad request');
      }
      return undefined;
  }
}

/**
 * Express decodes path parameters with decodeURIComponent and passes on its URIError when a
 * segment is not valid percent-encoded UTF-8 (`%`, `%ff`, `%C3%28`). Every path parameter of this
 * server is an identifier, and no identifier has such a spelling: the answer is the unknown-id
 * 404. Any other URIError is a malformed request.
 */
function fromUriError(err: unknown): ApiError | undefined {
  if (!(err instanceof URIError)) return undefined;
  if (err.message.startsWith('Failed to decode param')) {
    return missing('No such object: the id in the URL is not valid percent-encoded UTF-8');
  }
  return invalid(undefined, 'The request URL is not valid percent-encoded UTF-8', 'invalid_url');
}

/**
 * The one error renderer: known errors as they are, anything else as a generic 500 with no internals.
 * Given the route table, every refusal of a /v1 operation (a handler's, a gate's, a processor
 * failure's) passes the same check of what the operation declares (`declaredOrFlagged`).
 */
export function errorHandler(logger: Logger, routes?: RouteMatcher): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let apiError = err instanceof ApiError ? err : (fromUriError(err) ?? fromBodyParser(err as BodyParserError));
    if (err instanceof ProcessorFailure) {
      logger.warn({ req_id: req.requestId, err, processor_request_id: err.requestId }, 'processor call failed');
      apiError = answerForFailure(err);
    }
    if (!apiError) {
      logger.error({ req_id: req.requestId, err }, 'unhandled error');
      apiError = internal();
    }
    if (routes) {
      const checked = declaredOrFlagged(routes(req.method, pathOf(req))?.route, apiError);
      if (checked !== apiError) logger.error({ req_id: req.requestId, err }, checked.message);
      apiError = checked;
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.set(apiError.headers);
    sendJson(res, apiError.status, apiError.toBody());
  };
}
