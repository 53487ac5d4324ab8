import type { NextFunction, Request, RequestHandler, Response } from 'express';
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
 * The hottest operations (a payment read by id, a payment create and its idempotent replays, at
 * thousands a second) answered by the same middleware the app mounts for them, in the same order,
 * run as one series rather than through Express's routers: those walked a layer per mount and per
 * group on every request, a path match, a URL parse and a params merge each, and came to a tenth
 * of a GET. Every other request, and any hot one whose URL Express would read differently (a query
 * string, percent-encoding), goes to `regular`, the app's usual first layer.
 *
 * A lane presents the request to the /v1 steps as the mount would (`baseUrl` /v1, the URL under
 * it), to the handler with its path parameters, and puts the URL back before an error goes on to
 * the app's error handler, as Express's router does. server/http/lean-path.test.ts compares its
 * answers with the regular path's, byte for byte.
 */
export function leanPaths(routes: RouteMatcher, operations: readonly Route[], steps: LaneSteps, run: (route: Route) => RequestHandler, regular: RequestHandler, taken?: (operationId: string) => void): RequestHandler {
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
  return (req: Request, res: Response, next: NextFunction) => {
    const url = req.url;
    const match = (req.method === 'GET' || req.method === 'POST') && !url.includes('?') && !url.includes('%') ? routes(req.method, url) : undefined;
    const lane = match ? lanes.get(match.route) : undefined;
    if (!match || !lane) return regular(req, res, next);
    taken?.(match.route.operationId);
    const params: Record<string, string> = {};
    for (const [i, name] of lane.names.entries()) params[name] = match.params[i]!;
    req.params = params;
    lane.handler(req, res, (err?: unknown) => {
      req.baseUrl = '';
      req.url = url;
      next(err);
    });
  };
}
