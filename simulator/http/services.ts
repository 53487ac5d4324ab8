import type { Accounts } from '../engine/accounts.js';
import type { EventLog, WebhookEndpoints } from '../engine/events.js';
import type { Kernel } from '../engine/kernel.js';
import type { PaymentMethods } from '../engine/paymentMethods.js';
import type { Charges } from '../engine/charges.js';
import type { Payments } from '../engine/payments.js';
import type { Refunds } from '../engine/refunds.js';
import type { Terminal } from '../engine/terminal.js';
import type { Ledger } from '../engine/ledger.js';
import type { Disputes } from '../engine/disputes.js';
import type { Payouts } from '../engine/payouts.js';
import type { BankAccounts } from '../engine/bankAccounts.js';
import type { Customers } from '../engine/customers.js';
import { type Handler, type EndpointOptions, endpoint } from './endpoint.js';
import type { RequestHandler } from 'express';

/** Everything a router needs, built once in `index.ts`. */
export interface Services {
  kernel: Kernel;
  accounts: Accounts;
  paymentMethods: PaymentMethods;
  payments: Payments;
  charges: Charges;
  refunds: Refunds;
  terminal: Terminal;
  ledger: Ledger;
  disputes: Disputes;
  payouts: Payouts;
  bankAccounts: BankAccounts;
  customers: Customers;
  endpoints: WebhookEndpoints;
  events: EventLog;
  /** Wakes timers and the webhook dispatcher once a request has committed. */
  afterCommit(): void;
}

export function handle(services: Services, handler: Handler, options?: EndpointOptions): RequestHandler {
  return endpoint(services.kernel, services.afterCommit, handler, options);
}

export function page(params: { limit?: number | undefined; starting_after?: string | undefined; ending_before?: string | undefined }, defaultLimit: number): {
  limit: number;
  startingAfter: string | undefined;
  endingBefore: string | undefined;
} {
  return { limit: params.limit ?? defaultLimit, startingAfter: params.starting_after, endingBefore: params.ending_before };
}
