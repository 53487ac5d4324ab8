import { timingSafeEqual } from 'node:crypto';
import express, { type RequestHandler } from 'express';
import type { Readiness } from '../operations/readiness.js';
import type { Telemetry } from '../operations/observe.js';
import { sendJson } from './send.js';

export interface OperationsRoutesDeps {
  readiness: Readiness;
  telemetry: Telemetry;
  /**
   * Who may read `/metrics` here: `open` on the operator's own metrics listener, a bearer token on
   * the public one, `none` where metrics are not served.
   */
  metrics: 'open' | { token: string } | 'none';
}

/**
 * What every instance serves whatever its role, for load balancers, supervisors and Prometheus:
 * `GET /healthz` (alive: the process answers; nothing else is checked, so an outage of the
 * database or the processor never gets it restarted), `GET /readyz` (fit for traffic:
 * server/operations/readiness.ts) and `GET /metrics` (Prometheus text). Mounted at the root of the
 * public app and of the metrics listener (docs/operations.md).
 */
export function operationsRouter(deps: OperationsRoutesDeps): RequestHandler {
  const router = express.Router();
  router.get('/healthz', (_req, res) => {
    sendJson(res, 200, { status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const report = await deps.readiness.check();
    res.setHeader('Cache-Control', 'no-store');
    sendJson(res, report.ready ? 200 : 503, { status: report.ready ? 'ready' : 'not_ready', checks: report.checks, reasons: report.reasons });
  });
  const prometheus = deps.telemetry.prometheus;
  const access = deps.metrics;
  if (prometheus && access !== 'none') {
    const expected = access === 'open' ? undefined : Buffer.from(`Bearer ${access.token}`);
    router.get('/metrics', (req, res) => {
      if (expected) {
        const presented = Buffer.from(req.headers.authorization ?? '');
        if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
          res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
          sendJson(res, 401, { error: { type: 'authentication_error', message: 'Metrics need `Authorization: Bearer <POS_METRICS_TOKEN>`' } });
          return;
        }
      }
      prometheus(req, res);
    });
  }
  // Every request passes here first, nearly all of them for /v1: those skip the router (a path
  // match per probe route) after one lookup. Express matches these paths in any letter case and
  // with a trailing slash, and so does the lookup.
  return (req, res, next) => (PATHS.has(probePath(req.url)) ? router(req, res, next) : next());
}

const PATHS = new Set(['/healthz', '/readyz', '/metrics']);

function probePath(url: string): string {
  const query = url.indexOf('?');
  const path = (query < 0 ? url : url.slice(0, query)).toLowerCase();
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
