import type { IncomingHttpHeaders } from 'node:http';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type TextMapGetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Request, RequestHandler } from 'express';
import type { Telemetry } from '../operations/observe.js';
import { noMetrics } from '../operations/metrics.js';
import type { RouteMatcher } from './route-table.js';
import './types.js';

const propagator = new W3CTraceContextPropagator();
const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/** The label of a request no route answered (a 404, or refused before routing): one value, not its path. */
const UNMATCHED = 'unmatched';

/**
 * Each request counted and timed by its route template (`/v1/transactions/{id}`, never the id),
 * method, status and mode, and, when traces are exported, one server span continuing an incoming
 * `traceparent`: everything the request does (domain steps, processor calls, database
 * transactions) runs inside it, so their spans are its children. With telemetry off it is not even
 * a layer's work.
 */
export function requestTelemetry(telemetry: Telemetry, routes: RouteMatcher): RequestHandler {
  const { metrics, tracer } = telemetry;
  if (metrics === noMetrics && !tracer) return (_req, _res, next) => next();
  return (req, res, next) => {
    const started = performance.now();
    if (!tracer) {
      res.once('finish', () => metrics.request(routeOf(req, routes), req.method, res.statusCode, req.principal?.mode ?? 'none', (performance.now() - started) / 1000));
      return next();
    }
    const parent = propagator.extract(ROOT_CONTEXT, req.headers, headerGetter);
    const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.path': pathOf(req.originalUrl) } }, parent);
    const active = trace.setSpan(parent, span);
    res.once('finish', () => {
      const route = routeOf(req, routes);
      metrics.request(route, req.method, res.statusCode, req.principal?.mode ?? 'none', (performance.now() - started) / 1000);
      span.updateName(`${req.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode, 'pos.request_id': req.requestId, ...(req.principal ? { 'pos.mode': req.principal.mode } : {}) });
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    });
    context.with(active, next);
  };
}

/**
 * The route template that answered: Express's own (`/v1/transactions/:id` written as the route
 * table writes it, `{id}`), or for a /v1 request refused before routing (401, 429) the declared
 * route it asked for.
 */
function routeOf(req: Request, routes: RouteMatcher): string {
  const route = req.route as { path?: unknown } | undefined;
  if (route && typeof route.path === 'string') return (req.baseUrl + route.path).replace(/:(\w+)/g, '{$1}');
  const path = pathOf(req.originalUrl);
  if (path.startsWith('/v1/')) return routes(req.method, path)?.route.path ?? UNMATCHED;
  return UNMATCHED;
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}
