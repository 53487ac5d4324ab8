import express, { type Express } from 'express';
import type { Logger } from 'pino';
import { operationsRouter, type OperationsRoutesDeps } from './http/operations.js';
import { errorHandler, notFoundHandler, requestContext } from './http/middleware.js';

/**
 * What a worker instance (`pos server --role worker`) serves: the operational endpoints only
 * (`/healthz`, `/readyz`, `/metrics`, the same router the API's app mounts), never `/v1`, the hosted
 * pages or processor events, so it can sit on a private address apart from the API instances a
 * load balancer sends traffic to.
 */
export function createOperationsApp(deps: { logger: Logger; operations: OperationsRoutesDeps }): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(requestContext(deps.logger));
  app.use(operationsRouter(deps.operations));
  app.use(notFoundHandler());
  app.use(errorHandler(deps.logger));
  return app;
}
