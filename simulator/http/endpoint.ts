import { createHash } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import Stripe from 'stripe';
import { SimError, authentication, idempotencyMismatch, invalidRequest } from '../errors.js';
import { newId } from '../ids.js';
import type { Kernel, Origin } from '../engine/kernel.js';
import type { Scope } from '../store.js';
import { type RawParams, normalize } from './params.js';
import { expandBody } from './expand.js';

/**
 * The request layer every `/v1` route goes through: authentication and scoping (mode from the key,
 * account from `Stripe-Account`), idempotent replay, expansion and Stripe-shaped errors. Handlers
 * are synchronous and run inside one database transaction, so a request is atomic and two
 * concurrent requests with the same idempotency key can never both execute.
 */

export interface PlatformKeys {
  secretTest: string;
  secretLive: string;
  publishableTest: string;
  publishableLive: string;
}

export interface RequestContext extends Origin {
  keyKind: 'secret' | 'publishable';
  key: string;
}

export interface Call {
  ctx: RequestContext;
  params: RawParams;
  path: Record<string, string>;
}

/** A response with a status other than 200 (a committed 402 decline). */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {}
}

/** Returns the response body (answered with 200) or a `Reply`. */
export type Handler = (call: Call) => unknown;

export const DEFAULT_API_VERSION: string = Stripe.API_VERSION;

export function requestId(res: Response): string {
  const id = res.locals.requestId;
  return typeof id === 'string' ? id : 'req_unknown';
}

/** Every response carries a `Request-Id`, errors and control routes included. */
export function assignRequestId(_req: Request, res: Response, next: NextFunction): void {
  const id = newId('req').slice(0, 18);
  res.locals.requestId = id;
  res.setHeader('Request-Id', id);
  next();
}

function redact(key: string): string {
  return `${key.slice(0, 8)}${'*'.repeat(Math.max(0, key.length - 12))}${key.slice(-4)}`;
}

function bearerKey(req: Request): string | undefined {
  const header = req.header('authorization');
  if (!header) return undefined;
  const [scheme, value] = header.split(' ', 2);
  if (!value) return undefined;
  if (scheme?.toLowerCase() === 'bearer') return value.trim();
  if (scheme?.toLowerCase() === 'basic') return Buffer.from(value, 'base64').toString('utf8').split(':')[0];
  return undefined;
}

export interface AuthDeps {
  keys: PlatformKeys;
  accountExists(livemode: boolean, id: string): boolean;
}

/** Resolves the key and `Stripe-Account` into `res.locals.ctx`, or answers Stripe's 401/403. */
export function authenticate(deps: AuthDeps): RequestHandler {
  return (req, res, next) => {
    const key = bearerKey(req);
    if (!key) {
      throw authentication(
        "You did not provide an API key. You need to provide your API key in the Authorization header, using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY'). See https://stripe.com/docs/api#authentication for details, or we can help at https://support.stripe.com/.",
      );
    }
    const known: Record<string, { livemode: boolean; kind: 'secret' | 'publishable' }> = {
      [deps.keys.secretTest]: { livemode: false, kind: 'secret' },
      [deps.keys.secretLive]: { livemode: true, kind: 'secret' },
      [deps.keys.publishableTest]: { livemode: false, kind: 'publishable' },
      [deps.keys.publishableLive]: { livemode: true, kind: 'publishable' },
    };
    const match = known[key];
    if (!match) throw authentication(`Invalid API Key provided: ${redact(key)}`);
    const account = req.header('stripe-account') ?? req.header('stripe-context') ?? null;
    if (account !== null && !deps.accountExists(match.livemode, account)) {
      throw new SimError(
        403,
        'invalid_request_error',
        `The provided key '${redact(key)}' does not have access to account '${account}' (or that account does not exist). Application access may have been revoked.`,
        { code: 'account_invalid' },
      );
    }
    const scope: Scope = { livemode: match.livemode, account };
    const ctx: RequestContext = {
      scope,
      requestId: requestId(res),
      idempotencyKey: req.header('idempotency-key') ?? null,
      apiVersion: req.header('stripe-version') ?? DEFAULT_API_VERSION,
      keyKind: match.kind,
      key,
    };
    res.locals.ctx = ctx;
    next();
  };
}

function publishableRefused(): SimError {
  return authentication(
    'This API call cannot be made with a publishable API key. Please use a secret API key. You can find a list of your API keys at https://dashboard.stripe.com/account/apikeys.',
  );
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, canonical(v)]),
    );
  }
  return value;
}

export interface EndpointOptions {
  /** Client-side calls (Stripe.js style) a publishable key may make when it carries the client_secret. */
  publishable?: boolean;
}

/** What a request's unit came to, sent once its batch has committed. */
type Outcome = { reply: Reply } | { replayed: { status: number; body: string } } | { error: unknown };

/**
 * Wraps a synchronous handler in the request layer. The handler runs as a unit of the store's
 * group commit, and its answer, error or replay waits for that commit: a caller never hears of
 * state a crash could still take back, nor of another request's that a crash could.
 */
export function endpoint(kernel: Kernel, afterCommit: () => void, handler: Handler, options: EndpointOptions = {}): RequestHandler {
  return (req, res, next) => {
    const ctx = res.locals.ctx as RequestContext;
    const params = normalize({ ...(req.query as RawParams), ...((req.body as RawParams | undefined) ?? {}) }) as RawParams;
    if (ctx.keyKind === 'publishable' && (!options.publishable || typeof params.client_secret !== 'string')) throw publishableRefused();
    const call: Call = { ctx, params, path: req.params as Record<string, string> };
    const key = req.method === 'POST' ? ctx.idempotencyKey : null;
    const scopeKey = `${ctx.scope.livemode ? 'live' : 'test'}:${ctx.scope.account ?? ''}:${ctx.key.slice(0, 3)}`;
    const paramsHash = createHash('sha256').update(JSON.stringify(canonical(params))).digest('hex');
    const path = req.originalUrl.split('?')[0] ?? req.path;

    let outcome: Outcome = { error: new Error('the request unit never ran') };
    const send = (failure: unknown): void => {
      if (failure !== undefined) return next(failure);
      if ('error' in outcome) return next(outcome.error);
      if ('replayed' in outcome) {
        res.setHeader('Idempotent-Replayed', 'true');
        res.status(outcome.replayed.status).type('application/json').send(outcome.replayed.body);
        return;
      }
      res.status(outcome.reply.status).json(outcome.reply.body);
    };
    // The answer goes out before the webhooks the request made are woken, as Stripe's mostly do.
    // It is sent from the batch's commit, outside Express's own try: what it throws goes to Express.
    const answer = (failure: unknown): void => {
      try {
        send(failure);
      } catch (error) {
        next(error);
      } finally {
        afterCommit();
      }
    };
    try {
      outcome = kernel.store.unit((): Outcome => {
        if (key) {
          const stored = kernel.store.getIdempotent(scopeKey, key, kernel.now());
          if (stored) {
            if (stored.method !== req.method || stored.path !== path || stored.paramsHash !== paramsHash) throw idempotencyMismatch(key);
            return { replayed: { status: stored.status, body: stored.body } };
          }
        }
        // A thrown error (bad params, missing object) rolls back and is not stored, so the caller can
        // fix the request and retry with the same key; anything that executed (402 declines included)
        // is stored and replayed, as on Stripe.
        const raw = handler(call);
        let result = raw instanceof Reply ? raw : new Reply(200, raw);
        const expand = params.expand;
        if (result.status < 300 && expand !== undefined) {
          const paths = Array.isArray(expand) ? expand.map(String) : [String(expand)];
          result = new Reply(result.status, expandBody(kernel, ctx.scope, result.body, paths));
        }
        if (key) {
          kernel.store.putIdempotent(scopeKey, key, { method: req.method, path, paramsHash, status: result.status, body: JSON.stringify(result.body) }, kernel.now());
        }
        return { reply: result };
      }, answer);
    } catch (error) {
      outcome = { error };
    }
  };
}

/** A committed card error: the state change stays, the caller gets the 402. */
export function errorReply(error: SimError): Reply {
  return new Reply(error.status, error.toBody());
}

export function requireString(params: RawParams, name: string): string {
  const value = params[name];
  if (typeof value !== 'string' || value === '') throw invalidRequest(`Missing required param: ${name}.`, name, 'parameter_missing');
  return value;
}
