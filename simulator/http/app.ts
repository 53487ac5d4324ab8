import express, { type NextFunction, type Request, type Response } from 'express';
import { SimError } from '../errors.js';
import type { SimulatorControl } from '../control.js';
import { DEFAULT_API_VERSION, type PlatformKeys, assignRequestId, authenticate, requestId } from './endpoint.js';
import type { Services } from './services.js';
import { accountsRouter } from './routes/accounts.js';
import { connectRouter } from './routes/connect.js';
import { paymentIntentsRouter } from './routes/paymentIntents.js';
import { paymentMethodsRouter } from './routes/paymentMethods.js';
import { refundsRouter } from './routes/refunds.js';
import { moneyRouter } from './routes/money.js';
import { terminalRouter } from './routes/terminal.js';
import { webhooksRouter } from './routes/webhooks.js';
import { simRouter } from './routes/sim.js';
import { onboardingRouter } from './routes/onboarding.js';
import { balanceRouter } from './routes/balance.js';
import { customerObjectsRouter, customersRouter } from './routes/customers.js';
import { disputesRouter } from './routes/disputes.js';
import { payoutsRouter } from './routes/payouts.js';

/**
 * The simulator's HTTP app, built from explicit dependencies; only `index.ts` listens.
 * `/v1` speaks Stripe's wire API, `/_sim` is the control API and the browser pages.
 */

/** Form bodies of the SDK are small; 1 MB leaves room for long metadata without inviting abuse. */
const BODY_LIMIT = '1mb';

/** Browsers cache a preflight answer this long (Chrome caps it at 2 h); 10 min as on api.stripe.com. */
const PREFLIGHT_MAX_AGE_S = 600;

/**
 * Stripe's API answers cross-origin requests from any page (Stripe.js runs on the merchant's
 * origin), so the simulator does too: checkout pages confirm PaymentIntents from the browser with
 * the publishable key in an Authorization header, which needs a preflight.
 */
function cors(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Access-Control-Allow-Origin', '*');
  if (req.method !== 'OPTIONS') return next();
  res.setHeader('Access-Control-Allow-Methods', 'GET, POST, DELETE');
  res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Idempotency-Key, Stripe-Account, Stripe-Version');
  res.setHeader('Access-Control-Max-Age', String(PREFLIGHT_MAX_AGE_S));
  res.status(204).end();
}

/**
 * Stripe answers every request with the API version it used (the requested `Stripe-Version`, else
 * the account's default: here the version the stripe package pins) and echoes the idempotency key,
 * which the SDKs expose as `lastResponse.apiVersion` and `lastResponse.idempotencyKey`.
 */
function versionHeaders(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Stripe-Version', req.header('stripe-version') ?? DEFAULT_API_VERSION);
  const key = req.header('idempotency-key');
  if (key !== undefined && req.method === 'POST') res.setHeader('Idempotency-Key', key);
  next();
}

export function createApp(services: Services, keys: PlatformKeys, control: SimulatorControl, options: { requestLog: boolean }): express.Express {
  const app = express();
  app.set('query parser', 'extended');
  app.disable('x-powered-by');
  app.use(assignRequestId);
  if (options.requestLog) {
    app.use((req, res, next) => {
      res.on('finish', () => services.kernel.log(`${req.method} ${req.originalUrl.split('?')[0]} ${res.statusCode} ${requestId(res)}`));
      next();
    });
  }
  app.use('/_sim', express.urlencoded({ extended: true, limit: BODY_LIMIT }), express.json({ limit: BODY_LIMIT }), simRouter(services, control), onboardingRouter(services));
  app.use('/v1', cors, versionHeaders);
  app.use(
    '/v1',
    express.urlencoded({ extended: true, limit: BODY_LIMIT }),
    authenticate({ keys, accountExists: (livemode, id) => services.accounts.findConnected(livemode, id) !== undefined }),
  );
  app.use(accountsRouter(services));
  app.use(connectRouter(services));
  app.use(paymentIntentsRouter(services));
  app.use(paymentMethodsRouter(services));
  app.use(refundsRouter(services));
  app.use(moneyRouter(services));
  app.use(terminalRouter(services));
  app.use(webhooksRouter(services));
  app.use(disputesRouter(services));
  app.use(balanceRouter(services));
  app.use(payoutsRouter(services));
  app.use(customersRouter(services));
  app.use(customerObjectsRouter(services));
  app.use((req: Request) => {
    throw new SimError(
      404,
      'invalid_request_error',
      `Unrecognized request URL (${req.method}: ${req.path}). Please see https://stripe.com/docs or we can help at https://support.stripe.com/.`,
    );
  });
  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    if (error instanceof SimError) {
      res.status(error.status).json(error.toBody());
      return;
    }
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // body-parser: malformed or oversized body.
      res.status(status).json({ error: { type: 'invalid_request_error', message: (error as Error).message } });
      return;
    }
    services.kernel.log(`${requestId(res)} internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    res.status(500).json({ error: { type: 'api_error', message: 'An unexpected error occurred in the simulator.' } });
  });
  return app;
}
