import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { newReference } from '../../shared/ids.js';
import type { Clock } from '../../shared/time.js';
import type { Store } from '../db/store.js';
import { ApiError, forbidden, internal, invalid, rateLimited, routeNotFound, unauthenticated } from '../errors.js';
import { authenticateKey } from '../services/api-keys.js';
import type { Scope } from '../services/scope.js';
import type { RateLimiter } from './rate-limit.js';
import './types.js';

export function requestId(): RequestHandler {
  return (req, res, next) => {
    req.requestId = newReference('request');
    res.set('Request-Id', req.requestId);
    next();
  };
}

export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    // Server-Timing tells a client (and the benchmark) how much of its latency was ours.
    const writeHead = res.writeHead;
    res.writeHead = function (this: Response, ...args: Parameters<Response['writeHead']>) {
      if (!this.headersSent) this.setHeader('Server-Timing', `app;dur=${(Number(process.hrtime.bigint() - started) / 1e6).toFixed(2)}`);
      return writeHead.apply(this, args);
    } as Response['writeHead'];
    res.on('finish', () => {
      logger.info(
        {
          req_id: req.requestId,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          merchant_id: req.principal?.merchantId,
          mode: req.principal?.mode,
        },
        'request',
      );
    });
    next();
  };
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** Resolves the presented key, if any, without rejecting: the rate limiter needs to know who asks first. */
export function identify(store: Store, clock: Clock): RequestHandler {
  return async (req, _res, next) => {
    const header = req.get('authorization');
    const key = header ? BEARER.exec(header)?.[1] : undefined;
    req.principal = key ? ((await authenticateKey(store.db, key, clock.now())) ?? undefined) : undefined;
    next();
  };
}

export function rateLimit(limiter: RateLimiter, clock: Clock): RequestHandler {
  return async (req, res, next) => {
    const who = req.principal ? `m:${req.principal.merchantId}:${req.principal.mode}` : `ip:${req.ip ?? 'unknown'}`;
    const decision = await limiter.hit(who, clock.now());
    res.set({
      'X-RateLimit-Limit': String(decision.limit),
      'X-RateLimit-Remaining': String(decision.remaining),
      'X-RateLimit-Reset': String(decision.resetSeconds),
    });
    next(decision.allowed ? undefined : rateLimited(decision.resetSeconds));
  };
}

/** Every /v1 endpoint needs a secret key; the key alone picks the merchant and the mode. */
export function requireSecretKey(): RequestHandler {
  return (req, _res, next) => {
    const header = req.get('authorization');
    if (!header) return next(unauthenticated('No API key provided: send `Authorization: Bearer sk_test_…` or `sk_live_…`'));
    if (!BEARER.test(header)) return next(unauthenticated('Malformed Authorization header: expected `Bearer <secret key>`'));
    const principal = req.principal;
    if (!principal) return next(unauthenticated('Invalid API key provided'));
    if (principal.kind !== 'secret') {
      return next(forbidden('secret_key_required', 'This API call cannot be made with a publishable API key; use a secret key (sk_…)'));
    }
    next();
  };
}

export function scopeOf(req: Request): Scope {
  const principal = req.principal;
  if (!principal) throw unauthenticated('Invalid API key provided');
  return { merchantId: principal.merchantId, mode: principal.mode };
}

/** The first string in a parsed body that holds a NUL character, as a param path. */
function nulParam(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path || 'body' : undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nulParam(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key.includes('\u0000')) return path ? `${path}[${key}]` : key;
      const found = nulParam(inner, path ? `${path}[${key}]` : key);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * NUL characters are refused at the edge, in the URL and in JSON bodies: no field means anything
 * with one, and PostgreSQL text cannot hold them (SQLite would store them silently).
 */
export function refuseNulInUrl(): RequestHandler {
  return (req, _res, next) => {
    next(/%00/i.test(req.originalUrl) ? invalid(undefined, 'The request URL contains a NUL character', 'invalid_characters') : undefined);
  };
}

/** The same for parsed JSON bodies (mounted after the body parser). */
export function refuseNulInBody(): RequestHandler {
  return (req, _res, next) => {
    const param = nulParam(req.body, '');
    next(param ? invalid(param, `${param} contains a NUL character`, 'invalid_characters') : undefined);
  };
}

/** Bodies must be JSON: a body of any other type is refused rather than silently ignored. */
export function requireJsonBody(): RequestHandler {
  return (req, _res, next) => {
    const hasBody = (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0') || req.headers['transfer-encoding'] !== undefined;
    if (hasBody && !req.is('application/json')) {
      return next(new ApiError(415, 'invalid_request_error', 'Request bodies must be JSON (Content-Type: application/json)', { code: 'unsupported_media_type' }));
    }
    next();
  };
}

export function notFoundHandler(): RequestHandler {
  return (req, _res, next) => next(routeNotFound(req.method, req.originalUrl.split('?')[0] ?? req.path));
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
      return new ApiError(413, 'invalid_request_error', 'Request body is too large', { code: 'body_too_large' });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError(415, 'invalid_request_error', err.message ?? 'Unsupported body encoding', { code: 'unsupported_media_type' });
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
      return invalid(undefined, err.message ?? 'Malformed request body');
    default:
      if (typeof err.status === 'number' && err.status >= 400 && err.status < 500 && err.expose) {
        return new ApiError(err.status, 'invalid_request_error', err.message ?? 'Bad request');
      }
      return undefined;
  }
}

/** The one error renderer: known errors as they are, anything else as a generic 500 with no internals. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    let apiError = err instanceof ApiError ? err : fromBodyParser(err as BodyParserError);
    if (!apiError) {
      logger.error({ req_id: req.requestId, err }, 'unhandled error');
      apiError = internal();
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.set(apiError.headers).status(apiError.status).json(apiError.toBody());
  };
}
