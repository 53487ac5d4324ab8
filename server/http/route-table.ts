import { OpenApiGeneratorV31, OpenAPIRegistry, type ResponseConfig, type ZodMediaTypeObject } from '@asteasolutions/zod-to-openapi';

/** A schema written as OpenAPI rather than zod (the document's own shapes). */
type SchemaObject = Exclude<ZodMediaTypeObject['schema'], { _zod: unknown } | { $ref: string }>;
import { type Request, type RequestHandler, type Response, Router } from 'express';
import type { z } from 'zod';
import type { RouteScope } from '../accounts/permissions.js';
import { ErrorBodySchema } from '../../shared/contract/common.js';
import { EVENT_TYPES } from '../../shared/contract/event-types.js';
import { EVENT_PAYLOADS } from '../../shared/contract/event-payloads.js';
import { type ApiError, ERROR_CODES, type CodedStatus, type ErrorCode, undeclaredRefusal } from '../errors.js';
import { z as zo } from '../../shared/contract/zod.js';
import type { Services } from '../services.js';
import { parseInput } from './validate.js';
import { handling } from './in-flight.js';

/**
 * The /v1 operations, each declared once: its method, path, scope, schemas, statuses and handler.
 * From that one list come the Express routes, the OpenAPI document and the scope the gate checks,
 * so a route cannot be served without a scope or documented apart from what it does.
 */

export type Method = 'get' | 'post' | 'delete' | 'patch';

/**
 * The statuses an operation answers on purpose, each with its schema (426: a websocket endpoint sent
 * an Upgrade header that did not arrive as an upgrade; declaring it also declares the upgrade's 101).
 */
export type SuccessStatus = 200 | 201 | 202 | 426;

/**
 * The refusals an operation can answer beyond those every /v1 operation can (400, 401, 403, 404,
 * 429, listed for all): a declined payment (402), a body too large or not JSON (413, 415: added for
 * every operation that takes a body), the processor failing (502) or given up on (503). A conflict
 * (409) is declared by its codes (`conflicts`), and an idempotent operation can answer
 * `idempotency_key_in_use`.
 */
export type ErrorStatus = 402 | 410 | 502 | 503;

type Parsed<S> = [S] extends [z.ZodType] ? z.output<S> : undefined;

/** What a handler gets: the request and response, and the body, query and path parameters parsed by their declared schemas. */
export interface Call<B, Q, P> {
  req: Request;
  res: Response;
  body: B;
  query: Q;
  params: P;
}

export interface Declaration<B extends z.ZodType | undefined = undefined, Q extends z.ZodObject | undefined = undefined, P extends z.ZodObject | undefined = undefined> {
  /** Stable camelCase name of the operation in the OpenAPI document (`createTransaction`). */
  operationId: string;
  method: Method;
  /** The whole path with `{name}` parameters, as the OpenAPI document shows it (`/v1/transactions/{id}`). */
  path: string;
  summary: string;
  /**
   * What a key needs to call it: a restricted key's permission (or several, all needed), or
   * `secret` for the secret key only. Required, so no operation is served without deciding.
   */
  scope: RouteScope;
  body?: B;
  query?: Q;
  params?: P;
  /** Each success status with the schema of its body (an idempotent create: 201, and 200 for its replay). */
  responses: Partial<Record<SuccessStatus, z.ZodType>>;
  errors?: readonly ErrorStatus[];
  /** The 409 codes the operation can raise (besides `idempotency_key_in_use` of an idempotent one). */
  conflicts?: readonly ErrorCode<409>[];
  /** Honours Idempotency-Key (spec §8). */
  idempotent?: boolean;
  /**
   * The 200 is a Server-Sent Events stream (`text/event-stream`) whose each event's data is one
   * object of the 200's schema as JSON: the name of that schema's component, for the description.
   */
  stream?: string;
  /** Writes the answer; errors it throws go to the one error handler. */
  handle(services: Services, call: Call<Parsed<B>, Parsed<Q>, Parsed<P>>): Promise<void> | void;
}

/** A declared operation, its input types closed over: what the table mounts, documents and gates. */
export interface Route {
  readonly operationId: string;
  readonly method: Method;
  readonly path: string;
  readonly summary: string;
  readonly scope: RouteScope;
  readonly body: z.ZodType | undefined;
  readonly query: z.ZodObject | undefined;
  readonly params: z.ZodObject | undefined;
  readonly responses: Partial<Record<SuccessStatus, z.ZodType>>;
  readonly errors: readonly ErrorStatus[];
  readonly conflicts: readonly ErrorCode<409>[];
  readonly idempotent: boolean;
  readonly stream: string | undefined;
  /** Parses the declared inputs in order (path, query, body; the first problem is the 400) and runs the handler. */
  run(services: Services, req: Request, res: Response): Promise<void> | void;
}

export function route<B extends z.ZodType | undefined = undefined, Q extends z.ZodObject | undefined = undefined, P extends z.ZodObject | undefined = undefined>(
  declaration: Declaration<B, Q, P>,
): Route {
  const { body, query, params } = declaration;
  return {
    operationId: declaration.operationId,
    method: declaration.method,
    path: declaration.path,
    summary: declaration.summary,
    scope: declaration.scope,
    body,
    query,
    params,
    responses: declaration.responses,
    errors: declaration.errors ?? [],
    conflicts: declaration.conflicts ?? [],
    idempotent: declaration.idempotent ?? false,
    stream: declaration.stream,
    run(services, req, res) {
      const parsedParams = (params ? parseInput(params, req.params) : undefined) as Parsed<P>;
      const parsedQuery = (query ? parseInput(query, req.query) : undefined) as Parsed<Q>;
      if (!body && declaration.method === 'post') parseInput(EmptyBody, req.body ?? {});
      const parsedBody = (body ? parseInput(body, req.body ?? {}) : undefined) as Parsed<B>;
      return declaration.handle(services, { req, res, body: parsedBody, query: parsedQuery, params: parsedParams });
    },
  };
}

/** What an operation without a body accepts: nothing, or an empty JSON object (as Stripe does). */
const EmptyBody = zo.object({}).strict();

/**
 * With POS_CHECK_REFUSALS=1 (the test suite), a refusal an operation does not declare is a bug of
 * the declaration, not an answer: the one error handler answers it as a 500 naming it, so the
 * document cannot silently fall behind what a handler, a gate or the processor's mapping raises.
 */
export const CHECK_REFUSALS = process.env.POS_CHECK_REFUSALS === '1';

/**
 * What the error handler answers for `error` on a request to `r`: the error itself when the
 * operation declares its status and code (or the check is off), else a 500 naming the gap.
 */
export function declaredOrFlagged(r: Route | undefined, error: ApiError): ApiError {
  if (!CHECK_REFUSALS || r === undefined || (error.status >= 500 && !(error.status in ERROR_CODES)) || declaresRefusal(r, error.status, error.code)) return error;
  return undeclaredRefusal(r.operationId, error.status, error.code);
}

/** The codes an operation can answer with a refusal status, or undefined when it cannot answer that status. */
export function refusalCodes(r: Route, status: number): readonly string[] | undefined {
  switch (status) {
    case 400:
    case 401:
    case 403:
    case 404:
    case 429:
      return ERROR_CODES[status];
    case 413:
    case 415:
      // A body is checked before any route: any method that sends one can get these.
      return ERROR_CODES[status];
    case 426:
      return r.responses[426] ? ERROR_CODES[426] : undefined;
    case 409: {
      const codes = [...(r.idempotent ? (['idempotency_key_in_use'] as const) : []), ...r.conflicts];
      return codes.length > 0 ? [...new Set(codes)] : undefined;
    }
    default:
      return (r.errors as readonly number[]).includes(status) ? ERROR_CODES[status as CodedStatus] : undefined;
  }
}

export function declaresRefusal(r: Route, status: number, code: string | undefined): boolean {
  const codes = refusalCodes(r, status);
  return codes !== undefined && (code === undefined || codes.includes(code));
}

/** Where the table is mounted: declared paths start with it, Express sees the rest. */
const MOUNT = '/v1';

/** The declared operation a request is for, with its path parameters in order (decoded). */
export interface RouteMatch {
  route: Route;
  params: string[];
}

export type RouteMatcher = (method: string, path: string) => RouteMatch | undefined;

function paramCount(path: string): number {
  return (path.match(/\{/g) ?? []).length;
}

/**
 * Literal paths first (`/v1/events/stream` before `/v1/events/{id}`), otherwise in declaration
 * order. The router is mounted and the matcher tries routes in this one order, so the operation
 * whose scope the gate checks is the one Express then runs.
 */
function inMatchOrder(routes: readonly Route[]): Route[] {
  return [...routes].sort((a, b) => paramCount(a.path) - paramCount(b.path));
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Finds the operation of a request as Express routes it: `{name}` matches one path segment,
 * letter case and a trailing slash are ignored, and HEAD is answered by GET operations.
 */
export function routeMatcher(routes: readonly Route[]): RouteMatcher {
  // Indexed by method and first segment under the mount (literal in every declared path), so a
  // request tries the few patterns of its own group rather than the whole table: the audit trail
  // and the error handler match every write and every refusal. A table with another shape is
  // searched whole.
  type Entry = { method: string; pattern: RegExp; route: Route };
  const groups = new Map<string, Entry[]>();
  const all: Entry[] = [];
  let indexed = true;
  for (const r of inMatchOrder(routes)) {
    const parts = r.path.split(/(\{[^}]+\})/).map((part) => (part.startsWith('{') ? '([^/]+)' : escape(part)));
    const entry = { method: r.method.toUpperCase(), pattern: new RegExp(`^${parts.join('')}/?$`, 'i'), route: r };
    all.push(entry);
    const segment = firstSegment(r.path);
    if (segment === undefined || segment.includes('{')) indexed = false;
    const key = `${entry.method} ${segment}`;
    let group = groups.get(key);
    if (!group) groups.set(key, (group = []));
    group.push(entry);
  }
  const found = (method: string, path: string, entries: readonly Entry[]): RouteMatch | undefined => {
    for (const entry of entries) {
      if (entry.method !== method) continue;
      const match = entry.pattern.exec(path);
      if (match) return { route: entry.route, params: match.slice(1).map(decoded) };
    }
    return undefined;
  };
  return (method, path) => {
    const m = method === 'HEAD' ? 'GET' : method;
    if (!indexed) return found(m, path, all);
    const segment = firstSegment(path);
    if (segment === undefined) return undefined;
    const group = groups.get(`${m} ${segment}`);
    return group ? found(m, path, group) : undefined;
  };
}

/** The first path segment under the mount, lowercased as Express matches (`transactions`), or undefined outside it. */
function firstSegment(path: string): string | undefined {
  if (path.length <= MOUNT.length + 1 || path.charAt(MOUNT.length) !== '/' || path.slice(0, MOUNT.length).toLowerCase() !== MOUNT) return undefined;
  const end = path.indexOf('/', MOUNT.length + 1);
  return (end < 0 ? path.slice(MOUNT.length + 1) : path.slice(MOUNT.length + 1, end)).toLowerCase();
}

/** Each mounted Express route's declared path (`/v1/transactions/{id}`), for whoever labels a request by it. */
const declaredPaths = new WeakMap<object, string>();

/** The declared path of the operation that answered `req`, once routed; undefined outside the table. */
export function declaredPathOf(req: Request): string | undefined {
  const route: unknown = req.route;
  return typeof route === 'object' && route !== null ? declaredPaths.get(route) : undefined;
}

/**
 * The Express router of the operations, to mount at `/v1`. The operations are grouped by their
 * first segment (`/transactions`, `/terminal`), each group a router of its own holding its routes
 * under their whole path, and a request goes straight to its group by a map lookup on that segment:
 * Express would try a mounted router per group one by one, a path match each, on every request.
 * Segments are literal, so no two groups can match one request, and inside a group the table's
 * match order holds. Express matches paths without regard to letter case, and so does the lookup.
 */
export function routerOf(routes: readonly Route[], services: Services): RequestHandler {
  const groups = new Map<string, Router>();
  for (const r of inMatchOrder(routes)) {
    if (!r.path.startsWith(`${MOUNT}/`)) throw new Error(`${r.operationId}: ${r.path} is not under ${MOUNT}`);
    const path = r.path.slice(MOUNT.length);
    const segment = path.split('/')[1] ?? '';
    if (segment === '' || segment.includes('{')) throw new Error(`${r.operationId}: ${r.path} must start with a literal segment under ${MOUNT}`);
    let group = groups.get(segment.toLowerCase());
    if (!group) {
      group = Router();
      groups.set(segment.toLowerCase(), group);
    }
    const route = group.route(path.replace(/\{(\w+)\}/g, ':$1'));
    route[r.method]((req: Request, res: Response) => handling(req, r.run(services, req, res)));
    declaredPaths.set(route, r.path);
  }
  return (req, res, next) => {
    const url = req.url;
    const end = url.slice(1).search(/[/?]/);
    const group = groups.get((end < 0 ? url.slice(1) : url.slice(1, end + 1)).toLowerCase());
    if (!group) return next();
    group(req, res, next);
  };
}

/**
 * An operation's handler outside the router (server/http/lean-path.ts): the request carries a route
 * of its own, known by its declared path as a mounted one is (`declaredPathOf`), so whoever labels
 * requests by route sees the same label on either path.
 */
export function runRoute(r: Route, services: Services): RequestHandler {
  const route = { path: r.path, methods: { [r.method]: true } };
  declaredPaths.set(route, r.path);
  return (req, res) => {
    req.route = route;
    return handling(req, r.run(services, req, res));
  };
}

/** Refuses a table that names an operation twice or serves one method and path twice. */
export function checkTable(routes: readonly Route[]): void {
  const ids = new Set<string>();
  const endpoints = new Set<string>();
  for (const r of routes) {
    if (!/^[a-z][A-Za-z0-9]*$/.test(r.operationId)) throw new Error(`operationId ${r.operationId} is not camelCase`);
    if (ids.has(r.operationId)) throw new Error(`operationId ${r.operationId} is declared twice`);
    const endpoint = `${r.method} ${r.path.toLowerCase()}`;
    if (endpoints.has(endpoint)) throw new Error(`${endpoint} is declared twice`);
    ids.add(r.operationId);
    endpoints.add(endpoint);
  }
}

const IdempotencyHeaders = zo.object({
  'Idempotency-Key': zo.string().min(1).max(255).optional().openapi({ description: 'Repeat-safe key; the original result is replayed (a create: 200 instead of 201)' }),
});

/** The permissions an operation needs, as OpenAPI 3.1 lists them under its security requirement. */
function scopeList(scope: RouteScope): string[] {
  if (scope === 'secret') return [];
  return typeof scope === 'string' ? [scope] : [...scope];
}

const SUCCESS_DESCRIPTION: Record<SuccessStatus, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 426: 'Upgrade required: an Upgrade header arrived without Connection: Upgrade (a proxy on the way may drop it), so no websocket was opened' };

type RefusalStatus = ErrorStatus | 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429;

const REFUSAL_STATUSES: readonly RefusalStatus[] = [400, 401, 402, 403, 404, 409, 410, 413, 415, 429, 502, 503];

const ERROR_DESCRIPTION: Record<RefusalStatus, string> = {
  400: 'Invalid request: a parameter is missing or invalid (param names it), or the account or mode cannot do this',
  401: 'No API key, or an invalid, revoked or expired one',
  402: 'Declined: the card or the processor refused the payment (card_error; a payment create carries the failed transaction)',
  403: 'The key may not do this: a restricted key without the permission (missing_scope, required_scope), or not a secret key',
  404: 'No such object, or no such route',
  409: "Conflict with the object's state or with a request still being processed (code says which)",
  410: 'The object is over for good (expired, deactivated)',
  413: 'Request body is too large',
  415: 'Request bodies must be JSON',
  429: 'Too many requests: retry after Retry-After',
  502: 'The payment processor failed or is unavailable; safe to retry',
  503: 'Given up or unavailable now; retry (an idempotent request with a new Idempotency-Key)',
};

function successDescription(r: Route, status: SuccessStatus): string {
  if (status === 200 && r.idempotent && r.responses[201]) return 'Idempotent replay: the object the first request with this Idempotency-Key created';
  return SUCCESS_DESCRIPTION[status];
}

/** OpenAPI 3.1 cannot give the schema of each event of a stream: the description names it. */
function streamDescription(component: string): string {
  return `Server-Sent Events, kept open: each event's \`data\` is one ${component} (#/components/schemas/${component}) as JSON`;
}

/** The error body of a refusal, its `code` one of those the operation declares for the status. */
function errorSchema(codes: readonly string[]): SchemaObject {
  return {
    allOf: [
      { $ref: '#/components/schemas/Error' },
      { type: 'object', properties: { error: { type: 'object', properties: { code: { type: 'string', enum: [...codes] } } } } },
    ],
  };
}

/** A POST that takes no parameters: no body, or an empty JSON object. */
const EMPTY_BODY: SchemaObject = { type: 'object', additionalProperties: false, maxProperties: 0 };

/** `payment.succeeded` → `paymentSucceededEvent`: the webhook's name among the document's operations. */
export function webhookOperationId(type: string): string {
  const words = type.split(/[._]/);
  return words.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('') + 'Event';
}

/** The OpenAPI 3.1 document of the operations, and the events sent to webhook endpoints as its `webhooks`. */
export function openApiDocument(routes: readonly Route[]): ReturnType<OpenApiGeneratorV31['generateDocument']> {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description:
      'sk_test_… or sk_live_… secret key, or an rk_test_…/rk_live_… restricted key holding the permissions an operation lists (none listed: secret keys only; see docs/api-choices.md)',
  });
  registry.register('Error', ErrorBodySchema);
  for (const r of routes) {
    const responses: Record<string, ResponseConfig> = {};
    for (const [status, schema] of Object.entries(r.responses)) {
      if (!schema) continue;
      responses[status] =
        r.stream !== undefined && status === '200'
          ? { description: streamDescription(r.stream), content: { 'text/event-stream': { schema: { type: 'string' } } } }
          : { description: successDescription(r, Number(status) as SuccessStatus), content: { 'application/json': { schema } } };
    }
    // A websocket endpoint's success is the upgrade itself, which no 2xx can describe.
    if (r.responses[426]) responses['101'] = { description: 'Switching Protocols: the upgrade (Connection: Upgrade, Upgrade: websocket) opened the websocket' };
    for (const status of REFUSAL_STATUSES) {
      const codes = refusalCodes(r, status);
      if (codes) responses[String(status)] = { description: ERROR_DESCRIPTION[status], content: { 'application/json': { schema: errorSchema(codes) } } };
    }
    registry.registerPath({
      operationId: r.operationId,
      method: r.method,
      path: r.path,
      summary: r.summary,
      security: [{ apiKey: scopeList(r.scope) }],
      'x-required-scope': r.scope === 'secret' ? 'secret_key' : scopeList(r.scope).join(' '),
      request: {
        ...(r.body ? { body: { content: { 'application/json': { schema: r.body } } } } : {}),
        ...(!r.body && r.method === 'post' ? { body: { required: false, description: 'Takes no parameters: send no body or `{}`', content: { 'application/json': { schema: EMPTY_BODY } } } } : {}),
        ...(r.query ? { query: r.query } : {}),
        ...(r.params ? { params: r.params } : {}),
        ...(r.idempotent ? { headers: IdempotencyHeaders } : {}),
      },
      responses,
    });
  }
  for (const type of EVENT_TYPES) {
    registry.registerWebhook({
      operationId: webhookOperationId(type),
      method: 'post',
      path: type,
      summary: `The ${type} event, POSTed to each webhook endpoint whose events match it`,
      // The endpoint authenticates the call by its signature (the description), not by a credential it was given.
      security: [],
      description: 'Signed as Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature headers; docs/webhooks.md). Answer 2xx to acknowledge; anything else is retried.',
      request: { body: { required: true, content: { 'application/json': { schema: EVENT_PAYLOADS[type] } } } },
      responses: { 200: { description: 'Acknowledged (any 2xx)' } },
    });
  }
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'pos payments API', version: '1', description: 'Card, ACH, terminal, hosted checkout and payment links. See docs/ for the choices made where the spec is silent.' },
    servers: [{ url: '/' }],
  });
  return withCrossReplays(document, routes);
}

type Document = ReturnType<OpenApiGeneratorV31['generateDocument']>;

/**
 * An Idempotency-Key is the merchant's, not the endpoint's (spec §8): a key reused on another
 * idempotent create replays what the first request created there. So each idempotent operation's
 * 200 can carry any idempotent create's object, and the document says so.
 */
function withCrossReplays(document: Document, routes: readonly Route[]): Document {
  type Media = { schema?: unknown };
  const content = (r: Route, status: number): Media | undefined =>
    (document.paths?.[r.path]?.[r.method]?.responses?.[String(status)] as { content?: Record<string, Media> } | undefined)?.content?.['application/json'];
  const idempotent = routes.filter((r) => r.idempotent && r.responses[201]);
  const created = idempotent.map((r) => content(r, 201)?.schema).filter((schema) => schema !== undefined);
  const distinct = [...new Map(created.map((schema) => [JSON.stringify(schema), schema])).values()];
  for (const r of idempotent) {
    const replay = content(r, 200);
    if (!replay?.schema || distinct.length < 2) continue;
    const own = JSON.stringify(replay.schema);
    replay.schema = { anyOf: [replay.schema, ...distinct.filter((schema) => JSON.stringify(schema) !== own)] };
  }
  return document;
}
