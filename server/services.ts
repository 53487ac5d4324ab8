import type { Logger } from 'pino';
import type { Clock } from '../shared/time.js';
import type { Store } from './db/store.js';
import type { ProcessorEventHandler } from './processor/events-route.js';
import type { PaymentProcessor } from './processor/port.js';
import { CheckoutService } from './checkout/sessions.js';
import { CheckoutPages } from './checkout/pages.js';
import { completeCheckoutSession } from './checkout/state.js';
import { paymentEventHandler } from './payments/processor-events.js';
import { DisputeService } from './disputes/disputes.js';
import { disputeEventHandler } from './disputes/processor-events.js';
import { PayoutService } from './payouts/payouts.js';
import { payoutEventHandler } from './payouts/processor-events.js';
import { PaymentState, paymentEventRecorder } from './payments/payment-state.js';
import { ReaderResets } from './terminal/reader-reset.js';
import { AgentService } from './terminal/agents.js';
import { DeviceService } from './terminal/devices.js';
import { PresenceExpiry } from './terminal/presence-expiry.js';
import { ReaderActions } from './terminal/reader-actions.js';
import { ReaderViews } from './terminal/reader-view.js';
import { ReaderReconciler } from './terminal/reader-reconciler.js';
import { CustomerService } from './accounts/customers.js';
import { DEFAULT_KEY_TTL_MS, IdempotencyService } from './idempotency/keys.js';
import type { Leases, Presence } from './db/leases.js';
import { MerchantService } from './accounts/merchants.js';
import { ApiKeyService } from './accounts/restricted-keys.js';
import { KeyWatch } from './accounts/key-watch.js';
import { OnboardingService } from './accounts/onboarding.js';
import { ConnectedAccounts } from './accounts/connected-accounts.js';
import { accountEventHandler } from './accounts/processor-events.js';
import { PaymentLinkService } from './checkout/payment-links.js';
import { RefundService } from './payments/refunds.js';
import { TerminalService } from './terminal/readers.js';
import { TransactionService } from './payments/transactions.js';
import { DEFAULT_EGRESS, type EgressOptions } from './webhooks/egress.js';
import { WebhookEndpointService } from './webhooks/endpoints.js';
import { EventService, EventStreams } from './webhooks/events.js';
import { WebhookQueue } from './webhooks/queue.js';
import type { FieldCipher } from './db/encryption.js';
import { AuditLog } from './audit/log.js';
import { RequestLogHub } from './audit/request-log.js';
import { DEFAULT_RETENTION, Retention, type RetentionPeriods } from './retention.js';
import { noTelemetry, type Telemetry } from './operations/observe.js';

export interface Services {
  customers: CustomerService;
  /** The merchants' connected accounts on the processor: made on first need, and which merchant an account is. */
  connectedAccounts: ConnectedAccounts;
  merchants: MerchantService;
  /** The merchants' connected accounts: what they can do, what onboarding still needs, the onboarding link. */
  onboarding: OnboardingService;
  /** The merchant's own keys: restricted keys made, listed, rolled and revoked through the API. */
  apiKeys: ApiKeyService;
  /** Ends event streams and agent sockets when the key they opened with is revoked or expires. */
  keyWatch: KeyWatch;
  idempotency: IdempotencyService;
  transactions: TransactionService;
  refunds: RefundService;
  disputes: DisputeService;
  /** Payouts and the balance they are paid from. */
  payouts: PayoutService;
  terminal: TerminalService;
  checkout: CheckoutService;
  paymentLinks: PaymentLinkService;
  /** What the hosted checkout and payment-link pages read and do. */
  pages: CheckoutPages;
  agents: AgentService;
  /** The receipt printers and customer displays agents report. */
  devices: DeviceService;
  /** Takes readers and devices offline when their agent-reported presence lapses; started by the server. */
  presenceExpiry: PresenceExpiry;
  /** Each reader's action, from the processor's events. */
  readerActions: ReaderActions;
  /** Each reader joined with its action's payment: the view pushed to agents and shown at the counter. */
  readerViews: ReaderViews;
  /** Reads a reader whose in-progress action had no news for too long; started by the server. */
  readerReconciler: ReaderReconciler;
  /** Apply the processor's events: to payments and refunds, disputes, payouts, connected accounts. */
  processorEventHandlers: readonly ProcessorEventHandler[];
  webhookEndpoints: WebhookEndpointService;
  events: EventService;
  eventStreams: EventStreams;
  /** Finished requests, for whoever follows them live (GET /v1/request-log/stream). */
  requestLog: RequestLogHub;
  webhookQueue: WebhookQueue;
  /** The audit trail: who changed what, with which key, through which request. */
  audit: AuditLog;
  /** Prunes what is past its retention period (server/retention.ts); started by the server. */
  retention: Retention;
}

export interface ServiceDeps {
  store: Store;
  /** Seals and opens what is kept encrypted at rest (server/db/encryption.ts). */
  cipher: FieldCipher;
  clock: Clock;
  logger: Logger;
  processor: PaymentProcessor;
  /** This server's public base URL (receipt and page links); known only once it listens. */
  publicUrl: () => string;
  idempotencyTtlMs?: number;
  /** Instance identity and leases (shared with the reconciler). */
  leases?: Leases;
  /** Keeps the instance counted alive while it holds locks, where no reconciler renews its presence (the api role). */
  presence?: Presence;
  terminalStaleMs?: number;
  webhookEgress?: EgressOptions;
  webhookRetryScale?: number;
  /** Compresses the recovery backoff (server/idempotency/recovery-schedule.ts); tests only. */
  recoveryRetryScale?: number;
  /** Agent presence TTL; default three of each agent's heartbeat intervals. */
  presenceTtlMs?: number;
  /** How long an in-progress reader action may go without news before it is read (server/terminal/reader-actions.ts). */
  readerCheckMs?: number;
  /** How long the processor's word that a reader is online spares the read before a payment for it (server/terminal/readers.ts). */
  readerStatusMaxAgeMs?: number;
  /** How long events, webhook deliveries and the processor's events are kept (server/retention.ts). */
  retention?: RetentionPeriods;
  /** Metrics and spans (server/operations/); none by default. */
  telemetry?: Pick<Telemetry, 'metrics' | 'tracer'>;
}

/**
 * The composition root: every service, and every dependency between them, is made here and only
 * here: what listens to payment moves, who resets a reader before a cancel, which operations the
 * idempotency engine can resume after a crash, and what applies the processor's events.
 */
export function buildServices(deps: ServiceDeps): Services {
  const { store, cipher, clock, logger, processor, publicUrl } = deps;
  const telemetry = deps.telemetry ?? noTelemetry;
  const idempotency = new IdempotencyService(store, clock, logger, deps.idempotencyTtlMs ?? DEFAULT_KEY_TTL_MS, deps.leases, deps.recoveryRetryScale ?? 1, cipher, telemetry, deps.presence);
  // Inside the transaction of every payment move: its event, then a checkout session it completes.
  const payments = new PaymentState([paymentEventRecorder(cipher), completeCheckoutSession]);
  const connectedAccounts = new ConnectedAccounts(store, clock, processor);
  const readerResets = new ReaderResets(processor, logger);
  const transactions = new TransactionService(store, clock, processor, connectedAccounts, payments, readerResets, idempotency, logger, publicUrl, cipher);
  const refunds = new RefundService(store, clock, processor, payments, idempotency, logger);
  const checkout = new CheckoutService(store, clock, transactions, logger, publicUrl, cipher);
  const paymentLinks = new PaymentLinkService(store, clock, transactions, idempotency, logger, publicUrl, cipher);
  const disputes = new DisputeService(store, clock, processor, payments, logger);
  const payouts = new PayoutService(store, clock, processor, connectedAccounts, idempotency, logger);
  // The operations a crash can leave half-done; the recovery pass resumes only these.
  idempotency.register(transactions.createOperation);
  idempotency.register(refunds.operation);
  idempotency.register(paymentLinks.createOperation);
  idempotency.register(payouts.operation);
  const onboarding = new OnboardingService(store, clock, processor, connectedAccounts, logger, publicUrl);
  const agents = new AgentService(store, clock, cipher, deps.presenceTtlMs);
  const readerActions = new ReaderActions(store, clock, processor, logger, deps.readerCheckMs);
  const retention = deps.retention ?? DEFAULT_RETENTION;
  return {
    customers: new CustomerService(store, clock, processor, cipher),
    connectedAccounts,
    merchants: new MerchantService(store, processor, connectedAccounts, onboarding),
    onboarding,
    apiKeys: new ApiKeyService(store, clock),
    keyWatch: new KeyWatch(store, clock, logger),
    idempotency,
    transactions,
    refunds,
    disputes,
    payouts,
    terminal: new TerminalService(store, clock, processor, transactions, payments, readerActions, logger, deps.terminalStaleMs, deps.readerStatusMaxAgeMs),
    checkout,
    paymentLinks,
    pages: new CheckoutPages(store, checkout, paymentLinks),
    agents,
    devices: new DeviceService(store, clock),
    presenceExpiry: new PresenceExpiry(agents, store.notifications, clock, logger),
    readerActions,
    readerViews: new ReaderViews(store),
    readerReconciler: new ReaderReconciler(readerActions, store.notifications, clock, logger),
    processorEventHandlers: [(event, mode) => readerActions.onEvent(event, mode), paymentEventHandler(transactions, refunds), disputeEventHandler(disputes), payoutEventHandler(payouts), accountEventHandler(onboarding)],
    webhookEndpoints: new WebhookEndpointService(store, clock, deps.webhookEgress ?? DEFAULT_EGRESS, cipher),
    events: new EventService(store, clock, cipher, retention),
    retention: new Retention(store, clock, logger, idempotency, retention, deps.leases),
    eventStreams: new EventStreams(),
    requestLog: new RequestLogHub(),
    audit: new AuditLog(store, clock),
    webhookQueue: new WebhookQueue(store, clock, deps.webhookRetryScale ?? 1, cipher, { logger, metrics: telemetry.metrics }),
  };
}
