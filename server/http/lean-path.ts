import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, Request, RequestHandler, Response } from 'express';
import type { Route, RouteMatcher } from './route-table.js';
import { series } from './series.js';
import './types.js';

/** Where the route table is mounted; a lane sees the request as a handler under that mount would. */
const MOUNT = '/v1';

/**
 * What a lane runs: the middleware every request passes before the /v1 mount (`leading`, then
 * `gate`), the /v1 series before its router (`v1`), and the operation's own handler.
 */
export interface LaneSteps {
  leading: readonly RequestHandler[];
  gate: RequestHandler;
  v1: readonly RequestHandler[];
}

/**
 * A URL Express reads as it is written: no query string, no percent-encoding to decode in a
 * parameter, no fragment or whitespace that its URL parser would cut or escape. Ids and references
 * are written in these characters; anything else takes the regular path.
 */
const PLAIN_URL = /^[\w./-]*$/;

/** Express's entry into an app, which `express()` calls for each request (`app.handle`). */
type Dispatch = (this: unknown, req: IncomingMessage, res: ServerResponse, callback?: (err?: unknown) => void) => void;

/** What the lean path uses of an Express app beyond its public type. */
interface ExpressInternals {
  handle: Dispatch;
  request: object;
  response: object;
  enabled(setting: string): boolean;
}

/**
 * The hottest operations (a payment read by id, a payment create and its idempotent replays, at
 * thousands a second) answered by the same middleware the app mounts for them, in the same order,
 * run as one series from the app's entry rather than through Express's routers: those walked a
 * layer per mount and per group on every request, a path match, a URL parse and a params merge
 * each, and came to a tenth of a GET. Every other request, and any hot one whose URL is not plain
 * (`PLAIN_URL`), goes through Express as before.
 *
 * A lane sets the request up as Express's entry and router would (prototypes, `originalUrl`), shows
 * it to the /v1 steps as the /v1 mount would (`baseUrl` /v1, the URL under it) and to the handler
 * with its path parameters. Anything a lane passes on (an error, for the error handler) goes into
 * Express's own dispatch with the URL put back, where the first layer, the one this returns,
 * passes it on in turn: from there it takes the layers it would have taken after the regular path's
 * first. server/http/lean-path.test.ts compares the answers of both paths byte for byte.
 */
export function leanPaths(app: Express, routes: RouteMatcher, operations: readonly Route[], steps: LaneSteps, run: (route: Route) => RequestHandler, regular: RequestHandler, taken?: (operationId: string) => void): RequestHandler {
  const lanes = new Map<Route, { handler: RequestHandler; names: string[] }>();
  const enter: RequestHandler = (req, _res, next) => {
    req.baseUrl = MOUNT;
    req.url = req.url.slice(MOUNT.length);
    next();
  };
  for (const route of operations) {
    const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    lanes.set(route, { handler: series(...steps.leading, steps.gate, enter, ...steps.v1, run(route)), names });
  }
  const passedOn = new WeakMap<object, { err: unknown }>();
  const express = app as unknown as ExpressInternals;
  const dispatch = express.handle;
  express.handle = function (this: unknown, req: IncomingMessage, res: ServerResponse, callback?: (err?: unknown) => void) {
    const url = req.url ?? '';
    const method = req.method;
    const match = (method === 'GET' || method === 'POST') && PLAIN_URL.test(url) ? routes(method, url) : undefined;
    const lane = match ? lanes.get(match.route) : undefined;
    if (!match || !lane) return dispatch.call(this, req, res, callback);
    taken?.(match.route.operationId);
    // What Express's entry does before its router (express/lib/application.js `handle`)…
    if (express.enabled('x-powered-by')) res.setHeader('X-Powered-By', 'Express');
    const request = Object.setPrototypeOf(req, express.request) as Request;
    const response = Object.setPrototypeOf(res, express.response) as Response;
    request.res = response;
    response.req = request;
    response.locals ??= Object.create(null) as Response['locals'];
    // …and its router before the first layer, then the route's own parameters.
    request.baseUrl = '';
    request.originalUrl ||= url;
    const params: Record<string, string> = {};
    for (const [i, name] of lane.names.entries()) params[name] = match.params[i]!;
    request.params = params;
    lane.handler(request, response, (err?: unknown) => {
      request.baseUrl = '';
      request.url = url;
      passedOn.set(request, { err });
      dispatch.call(this, req, res, callback);
    });
  };
  return (req, res, next) => {
    const passed = passedOn.get(req);
    if (!passed) return regular(req, res, next);
    passedOn.delete(req);
    next(passed.err);
  };
}
