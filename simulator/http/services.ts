import type { Kernel } from '../engine/kernel.js';
import type { Ledger } from '../engine/ledger.js';
import type { Accounts } from '../engine/connect/accounts.js';
import type { AccountAdmin } from '../engine/connect/accountAdmin.js';
import type { AccountLinks } from '../engine/connect/accountLinks.js';
import type { BankAccounts } from '../engine/connect/bankAccounts.js';
import type { Capabilities } from '../engine/connect/capabilities.js';
import type { Customers } from '../engine/customers/customers.js';
import type { CashBalances } from '../engine/customers/cashBalances.js';
import type { CashBalancePayments } from '../engine/payments/cashBalancePayments.js';
import type { CustomerObjects } from '../engine/customers/customerObjects.js';
import type { Disputes } from '../engine/disputes/disputes.js';
import type { EventLog, WebhookEndpoints } from '../engine/events/events.js';
import type { Captures } from '../engine/payments/captures.js';
import type { Charges } from '../engine/payments/charges.js';
import type { PaymentIntents } from '../engine/payments/paymentIntents.js';
import type { PaymentMethods } from '../engine/payments/paymentMethods.js';
import type { PaymentMethodAttachments } from '../engine/payments/paymentMethodAttachments.js';
import type { Refunds } from '../engine/payments/refunds.js';
import type { Adjustments } from '../engine/payments/adjustments.js';
import type { PlatformMoney } from '../engine/connect/platformMoney.js';
import type { Payouts } from '../engine/payouts/payouts.js';
import type { PayoutReversals } from '../engine/payouts/payoutReversals.js';
import type { Configurations } from '../engine/terminal/configurations.js';
import type { Locations } from '../engine/terminal/locations.js';
import type { ReaderActions } from '../engine/terminal/readerActions.js';
import type { Readers } from '../engine/terminal/readers.js';
import { type Handler, type EndpointOptions, type RequestContext, endpoint } from './endpoint.js';
import type { RequestHandler } from 'express';
import { RateLimitError, type RateLimits } from './rate-limits.js';

/** Everything a router needs, built once in `index.ts`. */
export interface Services {
  kernel: Kernel;
  accounts: Accounts;
  accountAdmin: AccountAdmin;
  capabilities: Capabilities;
  accountLinks: AccountLinks;
  paymentMethods: PaymentMethods;
  savedPaymentMethods: PaymentMethodAttachments;
  payments: PaymentIntents;
  captures: Captures;
  charges: Charges;
  refunds: Refunds;
  adjustments: Adjustments;
  platformMoney: PlatformMoney;
  locations: Locations;
  terminalConfigurations: Configurations;
  readers: Readers;
  readerActions: ReaderActions;
  ledger: Ledger;
  disputes: Disputes;
  payouts: Payouts;
  payoutReversals: PayoutReversals;
  bankAccounts: BankAccounts;
  customers: Customers;
  customerObjects: CustomerObjects;
  cashBalances: CashBalances;
  cashBalancePayments: CashBalancePayments;
  endpoints: WebhookEndpoints;
  events: EventLog;
  /** Wakes timers and the webhook dispatcher once a request has committed. */
  afterCommit(): void;
  rateLimits: RateLimits;
}

/** A POST to a PaymentIntent or one of its actions updates that PaymentIntent (Stripe's hourly limit per object). */
const PAYMENT_INTENT_UPDATE = /^\/v1\/payment_intents\/:id(\/|$)/;

/**
 * A `/v1` route: rate limits first (a refused request never executes, so nothing is stored for
 * idempotent replay), then the request layer. The endpoint is Express's route template, so every
 * PaymentIntent's confirm counts as the one endpoint `POST /v1/payment_intents/:id/confirm`.
 */
export function handle(services: Services, handler: Handler, options?: EndpointOptions): RequestHandler {
  const run = endpoint(services.kernel, services.afterCommit, handler, options);
  return (req, res, next) => {
    const ctx = res.locals.ctx as RequestContext;
    const template = String((req.route as { path?: unknown } | undefined)?.path ?? req.path);
    const reason = services.rateLimits.admit(
      {
        mode: ctx.scope.livemode ? 'live' : 'test',
        endpoint: `${req.method} ${template}`,
        paymentIntent: req.method === 'POST' && PAYMENT_INTENT_UPDATE.test(template) ? String(req.params.id) : null,
      },
      services.kernel.now(),
    );
    if (reason !== null) {
      const error = new RateLimitError(reason);
      res.set(error.headers());
      throw error;
    }
    run(req, res, next);
  };
}

export function page(params: { limit?: number | undefined; starting_after?: string | undefined; ending_before?: string | undefined }, defaultLimit: number): {
  limit: number;
  startingAfter: string | undefined;
  endingBefore: string | undefined;
} {
  return { limit: params.limit ?? defaultLimit, startingAfter: params.starting_after, endingBefore: params.ending_before };
}
