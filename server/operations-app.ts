import express, { type Express } from 'express';
import type { Logger } from 'pino';
import type { Store } from './db/store.js';
import { healthRouter } from './http/health.js';
import { errorHandler, notFoundHandler, requestContext } from './http/middleware.js';

/**
 * What a worker instance (`pos server --role worker`) serves: the operational endpoints only, never
 * `/v1`, the hosted pages or processor events, so it can sit on a private address apart from the
 * API instances a load balancer sends traffic to.
 */
export function createOperationsApp(deps: { store: Store; logger: Logger }): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestContext(deps.logger));
  app.use(healthRouter(deps.store));
  app.use(notFoundHandler());
  app.use(errorHandler(deps.logger));
  return app;
}
