import express, { type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Clock } from '../shared/time.js';
import type { Store } from './db/store.js';
import { apiEntry, errorHandler, gate, hideCustomerData, notFoundHandler, requestContext, timeResponses } from './http/middleware.js';
import { checkTable, openApiDocument, routeMatcher, routerOf, runRoute, type Route } from './http/route-table.js';
import { leanPaths } from './http/lean-path.js';
import { auditTrail } from './http/audit.js';
import { liveMoneyGate, liveMoneyOf } from './http/live-money.js';
import { accountReadinessGate } from './http/account-readiness.js';
import { MemoryRateLimiter, type RateLimiter } from './http/rate-limit.js';
import { pagesRouter } from './routes/pages.js';
import { receiptsRouter } from './routes/receipts.js';
import { agentRoutes } from './routes/agent.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { auditLogRoutes } from './routes/audit-log.js';
import { checkoutSessionRoutes } from './routes/checkout-sessions.js';
import { customerRoutes } from './routes/customers.js';
import { disputeRoutes } from './routes/disputes.js';
import { eventRoutes } from './routes/events.js';
import { requestLogRoutes } from './routes/request-log.js';
import { merchantRoutes } from './routes/merchant.js';
import { paymentLinkRoutes } from './routes/payment-links.js';
import { payoutRoutes } from './routes/payouts.js';
import { terminalRoutes } from './routes/terminal.js';
import { transactionRoutes } from './routes/transactions.js';
import { webhookEndpointRoutes } from './routes/webhook-endpoints.js';
import { findReceipt } from './payments/receipts.js';
import type { Services } from './services.js';
import { keyAuthenticator } from './accounts/api-keys.js';
import { processorEventsRouter, type ProcessorEventHandler } from './processor/events-route.js';
import type { PaymentProcessor } from './processor/port.js';
import { ProcessorEventLog } from './processor/event-log.js';
import { operationsRouter, type OperationsRoutesDeps } from './http/operations.js';
import { requestTelemetry } from './http/telemetry.js';
import { series } from './http/series.js';
import { inRequestContext } from './operations/observe.js';
import { Readiness } from './operations/readiness.js';
import { noTelemetry } from './operations/observe.js';
import type { InFlight } from './http/in-flight.js';

/**
 * Largest accepted request body. The biggest legitimate body is a create with 50 metadata pairs of
 * 40 + 500 characters (about 27 KB); 256 KB leaves room without letting a client park megabytes.
 */
export const BODY_LIMIT = '256kb';

export interface AppConfig {
  rateLimit: number;
  rateWindowSeconds: number;
  /** With the simulator, whether live mode takes simulated payments (`--simulate-live`). */
  simulateLive: boolean;
  /**
   * Proxies whose X-Forwarded-For decides `req.ip` (and so the rate-limit bucket of requests
   * without a key): a hop count or addresses/CIDRs. Unset trusts none: the header is ignored, since
   * without a proxy any client could write it.
   */
  trustProxy?: number | string[] | undefined;
}

export interface AppDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  config: AppConfig;
  processor: PaymentProcessor;
  services: Services;
  rateLimiter?: RateLimiter;
  /** Extra consumers of processor events (tests observe with these). */
  processorEventHandlers?: readonly ProcessorEventHandler[];
  /** What /healthz, /readyz and /metrics answer; default: ready when the database is, no metrics. */
  operations?: OperationsRoutesDeps;
  /** Counts the requests whose work is not over, for a stopping server to wait on (server/main.ts). */
  inFlight?: InFlight;
  /**
   * The lean path of the hottest operations (server/http/lean-path.ts): on unless `enabled` is
   * false; `taken` hears each request it answers. Tests compare the two paths' answers.
   */
  leanPaths?: { enabled: boolean; taken?: (operationId: string) => void };
}

/** The operations answered by the lean path: a payment read by id, and payment creates with their replays. */
const LEAN_OPERATIONS = ['retrieveTransaction', 'createTransaction'];

/** Every /v1 operation: what the router mounts, `GET /v1/openapi.json` documents and the gate grants. */
export const apiRoutes: readonly Route[] = [
  ...merchantRoutes,
  ...apiKeyRoutes,
  ...customerRoutes,
  ...transactionRoutes,
  ...disputeRoutes,
  ...payoutRoutes,
  ...terminalRoutes,
  ...checkoutSessionRoutes,
  ...paymentLinkRoutes,
  ...webhookEndpointRoutes,
  ...eventRoutes,
  ...agentRoutes,
  ...auditLogRoutes,
  ...requestLogRoutes,
];
checkTable(apiRoutes);

/** The terminal routes that take money; readers and locations are set up in live mode as in test. */
const TERMINAL_PAYMENT_PATHS = ['/terminal/create-payment', '/terminal/process-payment', '/terminal/simulate-payment'];

/** Builds the HTTP application from explicit dependencies; only the `pos server` entry point listens. */
export function createApp(deps: AppDeps): Express {
  const { store, clock, logger, config } = deps;
  const limiter = deps.rateLimiter ?? new MemoryRateLimiter(config.rateLimit, config.rateWindowSeconds);
  const { services } = deps;
  let openApi: unknown;

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'extended');
  app.set('trust proxy', config.trustProxy ?? false);
  timeResponses(app);
  hideCustomerData(app);
  const countInFlight = deps.inFlight?.attach(app);

  // Probes and scrapes right after the request's context: neither rate limited nor counted as API
  // traffic. One layer (server/http/series.ts): every request passes all of these.
  const operations = deps.operations ?? { readiness: new Readiness({ db: store.db, processor: null, logger }), telemetry: noTelemetry, metrics: 'none' };
  const routes = routeMatcher(apiRoutes);
  const measured = requestTelemetry(operations.telemetry, routes);
  const context = requestContext(logger, services.requestLog);
  const leading = [...(countInFlight ? [countInFlight] : []), context];
  const first = series(...leading, operationsRouter(operations), ...(measured ? [measured] : []));
  const theGate = gate(keyAuthenticator(store), limiter, clock);

  const liveMoney = liveMoneyOf(deps.processor.kind, config.simulateLive);
  // Both gates let every read and every test-mode request through, so those skip them whole:
  // Express walks a layer per path. (Every request here has a key: apiEntry refused the others.)
  const moneyGates = express.Router();
  moneyGates.use(['/transactions', '/payment-intents', '/checkout/sessions', '/payment-links', '/payouts', ...TERMINAL_PAYMENT_PATHS], liveMoneyGate(liveMoney));
  moneyGates.use(['/transactions', '/payment-intents', '/checkout/sessions', '/payment-links', ...TERMINAL_PAYMENT_PATHS], accountReadinessGate(services.onboarding, 'charges'));
  moneyGates.use('/payouts', accountReadinessGate(services.onboarding, 'payouts'));
  // What every /v1 call passes before its route, as one layer of the /v1 router.
  const v1Steps: RequestHandler[] = [
    // Before the key's permissions are checked, so a restricted key refused a write is on the trail too.
    auditTrail(app, services.audit, routes, logger),
    apiEntry(inRequestContext(express.json({ limit: BODY_LIMIT })), routes),
    (req, res, next) => (req.method === 'GET' || req.method === 'HEAD' || req.principal?.mode !== 'live' ? next() : moneyGates(req, res, next)),
  ];

  // The hottest operations take the same steps as one series (server/http/lean-path.ts); the
  // probes are left out of theirs, since no probe path is an operation's.
  const hot = apiRoutes.filter((r) => LEAN_OPERATIONS.includes(r.operationId));
  app.use(
    deps.leanPaths?.enabled === false
      ? first
      : leanPaths(app, routes, hot, { leading: [...leading, ...(measured ? [measured] : [])], gate: theGate, v1: v1Steps }, (r) => runRoute(r, services), first, deps.leanPaths?.taken),
  );
  // Processor events are authenticated by their signature, not an API key, and are not rate
  // limited: throttling the processor would only delay outcomes it retries anyway.
  app.use(
    '/processor/webhooks',
    processorEventsRouter({ processor: deps.processor, log: new ProcessorEventLog(store, clock), logger, handlers: [...services.processorEventHandlers, ...(deps.processorEventHandlers ?? [])] }),
  );
  app.use(theGate);

  // /v1 first: it is nearly all of the traffic, and every layer before it is walked per request.
  const v1 = express.Router();
  v1.get('/openapi.json', (_req, res) => {
    openApi ??= openApiDocument(apiRoutes);
    res.json(openApi);
  });
  v1.use(series(...v1Steps, routerOf(apiRoutes, services)));
  app.use('/v1', v1);

  app.use('/receipts', receiptsRouter((token) => findReceipt(store.db, token, deps.processor.kind === 'simulator')));
  // Hosted checkout and payment-link pages: public, outside /v1.
  app.use(pagesRouter(services.pages, deps.processor, liveMoney));

  app.use(notFoundHandler());
  app.use(errorHandler(logger, routes));
  return app;
}
