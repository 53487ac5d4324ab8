import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { expressServer } from '../shared/express-server.js';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { LooseFileReport } from '../shared/files.js';
import { Store } from './store.js';
import { Keyring } from '../shared/crypto/keyring.js';
import { keySourceOf } from '../shared/crypto/key-source.js';
import { newSecret } from './ids.js';
import type { Kernel, RuntimeConfig } from './engine/kernel.js';
import { Accounts } from './engine/connect/accounts.js';
import { AccountLinks } from './engine/connect/accountLinks.js';
import { AccountVerification } from './engine/connect/verification.js';
import { BankAccounts } from './engine/connect/bankAccounts.js';
import { Capabilities } from './engine/connect/capabilities.js';
import { Transfers } from './engine/connect/transfers.js';
import { Customers } from './engine/customers/customers.js';
import { Disputes } from './engine/disputes/disputes.js';
import { EventLog, WebhookEndpoints } from './engine/events/events.js';
import { Ledger } from './engine/ledger.js';
import { Captures } from './engine/payments/captures.js';
import { Charges } from './engine/payments/charges.js';
import { PaymentAttempts } from './engine/payments/paymentAttempts.js';
import { PaymentIntents } from './engine/payments/paymentIntents.js';
import { PaymentMethods } from './engine/payments/paymentMethods.js';
import { Refunds } from './engine/payments/refunds.js';
import { Payouts } from './engine/payouts/payouts.js';
import { Configurations } from './engine/terminal/configurations.js';
import { Locations } from './engine/terminal/locations.js';
import { ReaderActions } from './engine/terminal/readerActions.js';
import { Readers } from './engine/terminal/readers.js';
import { WebhookDispatcher } from './engine/events/dispatcher.js';
import { Timers } from './engine/timers.js';
import { type SimulatorControl, createControl } from './control.js';
import { lockSimulatorState } from './lock.js';
import type { PlatformKeys } from './http/endpoint.js';
import { AccountAdmin } from './engine/connect/accountAdmin.js';
import { PaymentMethodAttachments } from './engine/payments/paymentMethodAttachments.js';
import { Adjustments } from './engine/payments/adjustments.js';
import { PlatformMoney } from './engine/connect/platformMoney.js';
import { PayoutReversals } from './engine/payouts/payoutReversals.js';
import { CashBalances } from './engine/customers/cashBalances.js';
import { CashBalancePayments } from './engine/payments/cashBalancePayments.js';
import { CustomerObjects } from './engine/customers/customerObjects.js';
import type { Services } from './http/services.js';
import { createApp } from './http/app.js';
import { RateLimits } from './http/rate-limits.js';

export type { PlatformKeys } from './http/endpoint.js';
export type { SimulatorControl, DeliveryInfo, WebhookFaults, ScriptedOutcome, CapabilityStatus, RateLimitReport } from './control.js';

export interface SimulatorOptions {
  /** State is persisted here (`simulator.db`); a restart loses no object, timer or pending delivery. */
  dataDir: string;
  /** Default 0 (ephemeral) when embedded; the standalone command uses 12111. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Card-present authorisation window after a card is presented; default 300 ms. */
  authorizationDelayMs?: number;
  /** us_bank_account processing → succeeded; default 2000 ms. */
  achSettlementDelayMs?: number;
  /** Capture on a dispute test card → dispute opens; deciding evidence → dispute closes. Default 1000 ms. */
  disputeDelayMs?: number;
  /** Identity fields submitted → verified or failed (`pending_verification` meanwhile); default 1000 ms. */
  verificationDelayMs?: number;
  /** How long an Account Link's URL works; default 300 000 ms (Stripe's five minutes). */
  accountLinkTtlMs?: number;
  logger?: (line: string) => void;
  /**
   * A `logger` line per request answered (method, path, status, request id); default on. Off, the
   * logger hears only of problems (failed deliveries and timers, internal errors, loose files).
   */
  requestLog?: boolean;
  /** Hears of the data dir or a file in it found open to other users; by default a `logger` line. */
  onLooseFile?: LooseFileReport;
  /**
   * Stripe's published rate limits (simulator/http/rate-limits.ts); default on. Off only for
   * throughput benchmarks and bulk fixtures: a feature must work within them.
   */
  rateLimits?: boolean;
  /**
   * The main keys its secrets are sealed under (docs/keys.md): `pos server` shares its own; by
   * default a key file in `dataDir`, made on first start.
   */
  keyring?: Keyring;
}

export interface RunningSimulator {
  url: string;
  host: string;
  port: number;
  protocol: 'http';
  keys: PlatformKeys;
  control: SimulatorControl;
  close(): Promise<void>;
}

/**
 * 300 ms: long enough that a client polling the intent sees `processing` (and can try to cancel
 * during the window, as a cashier might), short enough not to slow a test suite or a demo.
 */
const DEFAULT_AUTHORIZATION_DELAY_MS = 300;
/** 2 s: ACH takes days on Stripe; two seconds keeps the `processing` state observable in a demo. */
const DEFAULT_ACH_SETTLEMENT_DELAY_MS = 2_000;
/**
 * 1 s: on Stripe a test dispute opens moments after the charge. A second lets a client see the
 * payment succeed, undisputed, before `charge.dispute.created`, and keeps a demo moving.
 */
const DEFAULT_DISPUTE_DELAY_MS = 1_000;

/**
 * 1 s: Stripe's test-mode verification comes back within seconds. A second keeps
 * `pending_verification` observable to a client without slowing a demo.
 */
const DEFAULT_VERIFICATION_DELAY_MS = 1_000;
/** 300 s: Stripe's Account Links expire five minutes after creation (`expires_at`). */
const DEFAULT_ACCOUNT_LINK_TTL_MS = 300_000;

const KEYS_META = 'platform_keys';

function loadOrCreateKeys(store: Store): PlatformKeys {
  const raw = store.getMeta(KEYS_META);
  if (raw) return JSON.parse(raw) as PlatformKeys;
  const keys: PlatformKeys = {
    secretTest: newSecret('sk_test_'),
    secretLive: newSecret('sk_live_'),
    publishableTest: newSecret('pk_test_'),
    publishableLive: newSecret('pk_live_'),
  };
  store.setMeta(KEYS_META, JSON.stringify(keys));
  return keys;
}

/**
 * Seals the secrets of a simulator's store under the keyring's primary key (`pos admin
 * rotate-master-key` does this for the simulator beside the server's data); false when there is no
 * store in `dataDir`. A simulator running on it meanwhile reads either key.
 */
export function resealSimulatorStore(dataDir: string, keyring: Keyring): boolean {
  if (!existsSync(join(dataDir, 'simulator.db'))) return false;
  new Store(dataDir, keyring).close();
  return true;
}

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function startSimulator(options: SimulatorOptions): Promise<RunningSimulator> {
  const host = options.host ?? '127.0.0.1';
  const log = options.logger ?? (() => {});
  const now = (): number => Date.now();
  const store = new Store(options.dataDir, options.keyring ?? new Keyring(keySourceOf({ dataDir: options.dataDir })), options.onLooseFile ?? ((found) => log(`warning: ${found.message}`)));
  let unlock: () => void;
  try {
    unlock = lockSimulatorState(options.dataDir);
  } catch (err) {
    store.close();
    throw err;
  }
  const keys = loadOrCreateKeys(store);
  store.pruneIdempotency(now());

  const config: RuntimeConfig = {
    authorizationDelayMs: options.authorizationDelayMs ?? DEFAULT_AUTHORIZATION_DELAY_MS,
    achSettlementDelayMs: options.achSettlementDelayMs ?? DEFAULT_ACH_SETTLEMENT_DELAY_MS,
    disputeDelayMs: options.disputeDelayMs ?? DEFAULT_DISPUTE_DELAY_MS,
    verificationDelayMs: options.verificationDelayMs ?? DEFAULT_VERIFICATION_DELAY_MS,
    accountLinkTtlMs: options.accountLinkTtlMs ?? DEFAULT_ACCOUNT_LINK_TTL_MS,
    baseUrl: '',
  };
  const timers = new Timers(store, now, log);
  const events = new EventLog(store, now);
  const dispatcher = new WebhookDispatcher(store, now, log);
  events.onDelivery = () => queueMicrotask(() => dispatcher.poke());
  timers.afterFire = () => dispatcher.poke();
  const kernel: Kernel = { store, config, now, timers, events, log };
  const rateLimits = new RateLimits(options.rateLimits ?? true);

  const ledger = new Ledger(kernel);
  const transfers = new Transfers(kernel, ledger);
  const bankAccounts = new BankAccounts(kernel);
  const verification = new AccountVerification(kernel);
  const accounts = new Accounts(kernel, bankAccounts, verification);
  const capabilities = new Capabilities(kernel, accounts, verification);
  const accountAdmin = new AccountAdmin(kernel, accounts, verification);
  const accountLinks = new AccountLinks(kernel, accounts);
  const customers = new Customers(kernel);
  const customerObjects = new CustomerObjects(kernel);
  const cashBalances = new CashBalances(kernel);
  const paymentMethods = new PaymentMethods(kernel);
  const savedPaymentMethods = new PaymentMethodAttachments(kernel, customers);
  const charges = new Charges(kernel, ledger, transfers);
  const captures = new Captures(kernel, charges);
  const attempts = new PaymentAttempts(kernel, accounts, paymentMethods, charges, captures);
  const cashBalancePayments = new CashBalancePayments(kernel, cashBalances, paymentMethods, (origin, row, pm) => attempts.approve(origin, row, pm, {}));
  attempts.cashBalancePayments = cashBalancePayments;
  captures.onCanceled = (origin, row) => cashBalancePayments.canceled(origin, row);
  const payments = new PaymentIntents(kernel, accounts, paymentMethods, customers, attempts);
  const refunds = new Refunds(kernel, charges, ledger, transfers);
  const adjustments = new Adjustments(kernel, charges, captures);
  const platformMoney = new PlatformMoney(kernel, ledger, transfers, accounts);
  const terminalConfigurations = new Configurations(kernel);
  const locations = new Locations(kernel, terminalConfigurations);
  const readers = new Readers(kernel);
  const readerActions = new ReaderActions(kernel, attempts, paymentMethods, terminalConfigurations);
  const disputes = new Disputes(kernel, ledger, transfers);
  const payouts = new Payouts(kernel, ledger, bankAccounts);
  const payoutReversals = new PayoutReversals(kernel, ledger);
  const endpoints = new WebhookEndpoints(kernel);
  ledger.onFundsAvailable = (origin) => payouts.scheduleRun(origin);
  timers.on('ach_settlement', (payload) => attempts.settleAch(payload as { paymentIntent: string; apiVersion: string }));
  timers.on('card_present_authorization', (payload) => readerActions.completeAuthorization(payload));
  timers.on('balance_available', (payload) => ledger.makeAvailable(payload));
  timers.on('dispute_open', (payload) => disputes.open(payload));
  timers.on('dispute_decision', (payload) => disputes.decide(payload));
  timers.on('payout_run', (payload) => payouts.run(payload));
  timers.on('payout_submit', (payload) => payouts.submit(payload));
  timers.on('payout_arrival', (payload) => payouts.arrive(payload));
  timers.on('account_verification', (payload) => verification.completeVerification(payload));

  const services: Services = {
    kernel,
    accounts,
    accountAdmin,
    capabilities,
    accountLinks,
    paymentMethods,
    savedPaymentMethods,
    payments,
    captures,
    charges,
    refunds,
    adjustments,
    platformMoney,
    locations,
    terminalConfigurations,
    readers,
    readerActions,
    ledger,
    disputes,
    payouts,
    payoutReversals,
    bankAccounts,
    customers,
    customerObjects,
    cashBalances,
    cashBalancePayments,
    endpoints,
    events,
    afterCommit: () => dispatcher.poke(),
    rateLimits,
  };
  const control = createControl({ kernel, capabilities, attempts, readers, readerActions, timers, dispatcher, rateLimits, endpoints });
  const server = expressServer(createApp(services, keys, control, { requestLog: options.requestLog ?? true }));
  let address: AddressInfo;
  try {
    address = await listen(server, options.port ?? 0, host);
  } catch (error) {
    store.close();
    unlock();
    throw error;
  }
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const url = `http://${urlHost}:${address.port}`;
  config.baseUrl = url;
  log(`simulator listening on ${url}`);

  // Resume what the previous run left: due timers fire now, pending deliveries are sent.
  timers.arm();
  dispatcher.poke();

  let closing: Promise<void> | null = null;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      timers.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await dispatcher.close();
      store.close();
      unlock();
    })();
    return closing;
  };

  return { url, host, port: address.port, protocol: 'http', keys, control, close };
}
