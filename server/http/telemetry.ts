import type { IncomingHttpHeaders } from 'node:http';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type TextMapGetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import type { Request, RequestHandler } from 'express';
import type { Telemetry } from '../operations/observe.js';
import { noMetrics } from '../operations/metrics.js';
import { declaredPathOf, type RouteMatcher } from './route-table.js';
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
 * transactions) runs inside it, so their spans are its children. With telemetry off there is no
 * layer at all (undefined).
 */
export function requestTelemetry(telemetry: Telemetry, routes: RouteMatcher): RequestHandler | undefined {
  const { metrics, tracer } = telemetry;
  if (metrics === noMetrics && !tracer) return undefined;
  const templates = new RouteTemplates(routes);
  return (req, res, next) => {
    const started = performance.now();
    if (!tracer) {
      res.once('finish', () => metrics.request(templates.of(req), req.method, res.statusCode, req.principal?.mode ?? 'none', (performance.now() - started) / 1000));
      return next();
    }
    // Most requests carry no traceparent: they start a trace of their own without parsing headers.
    const parent = req.headers.traceparent === undefined ? ROOT_CONTEXT : propagator.extract(ROOT_CONTEXT, req.headers, headerGetter);
    const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.path': pathOf(req.originalUrl) } }, parent);
    res.once('finish', () => {
      const route = templates.of(req);
      metrics.request(route, req.method, res.statusCode, req.principal?.mode ?? 'none', (performance.now() - started) / 1000);
      if (span.isRecording()) {
        span.updateName(`${req.method} ${route}`);
        span.setAttribute('http.route', route);
        span.setAttribute('http.response.status_code', res.statusCode);
        span.setAttribute('pos.request_id', req.requestId);
        if (req.principal) span.setAttribute('pos.mode', req.principal.mode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    });
    const active = trace.setSpan(parent, span);
    req.trace = active;
    context.with(active, next);
  };
}

/**
 * The route template that answered: the declared path of a /v1 operation, Express's own elsewhere
 * (`/pay/:id` written as the route table writes it, `{id}`), or for a /v1 request refused before
 * routing (401, 429) the declared route it asked for. Express's route objects live as long as the
 * app, so each one's template is worked out once rather than on every request.
 */
class RouteTemplates {
  readonly #routes: RouteMatcher;
  readonly #known = new WeakMap<object, { baseUrl: string; template: string }>();

  constructor(routes: RouteMatcher) {
    this.#routes = routes;
  }

  of(req: Request): string {
    const declared = declaredPathOf(req);
    if (declared !== undefined) return declared;
    const route = req.route as { path?: unknown } | undefined;
    if (route && typeof route.path === 'string') {
      const known = this.#known.get(route);
      if (known && known.baseUrl === req.baseUrl) return known.template;
      const template = (req.baseUrl + route.path).replace(/:(\w+)/g, '{$1}');
      this.#known.set(route, { baseUrl: req.baseUrl, template });
      return template;
    }
    const path = pathOf(req.originalUrl);
    if (path.startsWith('/v1/')) return this.#routes(req.method, path)?.route.path ?? UNMATCHED;
    return UNMATCHED;
  }
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}
