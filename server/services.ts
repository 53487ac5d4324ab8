import type { ProcessorCharge, ProcessorPaymentIntent, ProcessorRefund } from './processor/types.js';
import type { Logger } from 'pino';
import type { Clock } from '../shared/time.js';
import type { Store } from './db/store.js';
import type { ProcessorEventHandler } from './processor/events-route.js';
import type { ProcessorGateway } from './processor/gateway.js';
import { CheckoutService, type PublicUrl } from './checkout/sessions.js';
import { CheckoutPages } from './checkout/pages.js';
import { AgentService } from './terminal/agents.js';
import { PresenceExpiry } from './terminal/presence-expiry.js';
import { CustomerService } from './accounts/customers.js';
import { DEFAULT_KEY_TTL_MS, IdempotencyService } from './idempotency/keys.js';
import type { Leases } from './db/leases.js';
import { MerchantService } from './accounts/merchants.js';
import { PaymentLinkService } from './checkout/payment-links.js';
import { RefundService } from './payments/refunds.js';
import { TerminalService } from './terminal/readers.js';
import { TransactionService } from './payments/transactions.js';
import { DEFAULT_EGRESS, type EgressOptions } from './webhooks/egress.js';
import { WebhookEndpointService } from './webhooks/endpoints.js';
import { EventService, EventStreams } from './webhooks/events.js';
import { WebhookQueue } from './webhooks/queue.js';

export interface Services {
  customers: CustomerService;
  merchants: MerchantService;
  idempotency: IdempotencyService;
  transactions: TransactionService;
  refunds: RefundService;
  terminal: TerminalService;
  checkout: CheckoutService;
  paymentLinks: PaymentLinkService;
  /** What the hosted checkout and payment-link pages read and do. */
  pages: CheckoutPages;
  agents: AgentService;
  /** Takes readers offline when their agent-reported presence lapses; started by the server. */
  presenceExpiry: PresenceExpiry;
  /** Applies processor events to payments and refunds. */
  onProcessorEvent: ProcessorEventHandler;
  webhookEndpoints: WebhookEndpointService;
  events: EventService;
  eventStreams: EventStreams;
  webhookQueue: WebhookQueue;
}

export interface ServiceDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  processor: ProcessorGateway;
  /** This server's public base URL (receipt and page links); known only once it listens. */
  publicUrl: () => string;
  idempotencyTtlMs?: number;
  /** Instance identity and leases (shared with the reconciler). */
  leases?: Leases;
  terminalStaleMs?: number;
  webhookEgress?: EgressOptions;
  webhookRetryScale?: number;
  /** Compresses the recovery backoff (server/services/recovery-schedule.ts); tests only. */
  recoveryRetryScale?: number;
  /** Agent presence TTL; default three of each agent's heartbeat intervals. */
  presenceTtlMs?: number;
}

export function buildServices(deps: ServiceDeps): Services {
  const { store, clock, logger, processor } = deps;
  const idempotency = new IdempotencyService(store, clock, logger, deps.idempotencyTtlMs ?? DEFAULT_KEY_TTL_MS, deps.leases, deps.recoveryRetryScale ?? 1);
  const transactions = new TransactionService(store, clock, processor, idempotency, logger, deps.publicUrl);
  const refunds = new RefundService(store, clock, processor, idempotency, logger);
  const publicUrl = deps.publicUrl;
  const checkout = new CheckoutService(store, clock, transactions, logger, publicUrl);
  const paymentLinks = new PaymentLinkService(store, clock, transactions, idempotency, logger, publicUrl);
  const agents = new AgentService(store, clock, processor, logger, deps.presenceTtlMs);
  const onProcessorEvent: ProcessorEventHandler = async (event, mode) => {
    if (event.type.startsWith('payment_intent.')) {
      const intent = event.data.object as ProcessorPaymentIntent;
      await transactions.onIntentEvent(intent.id, intent.metadata?.pos_transaction_id, mode);
    } else if (event.type.startsWith('refund.')) {
      await refunds.onRefundEvent((event.data.object as ProcessorRefund).id, mode);
    } else if (event.type === 'charge.refunded') {
      const charge = event.data.object as ProcessorCharge;
      const intent = typeof charge.payment_intent === 'string' ? charge.payment_intent : charge.payment_intent?.id;
      if (!intent) return;
      const list = await processor.client(mode).refunds.list({ payment_intent: intent, limit: 100 });
      for (const refund of list.data) await refunds.onProcessorRefund(refund);
    }
  };
  return {
    customers: new CustomerService(store, clock),
    merchants: new MerchantService(store, processor),
    idempotency,
    transactions,
    refunds,
    terminal: new TerminalService(store, clock, processor, transactions, logger, deps.terminalStaleMs),
    checkout,
    paymentLinks,
    pages: new CheckoutPages(store, checkout, paymentLinks),
    agents,
    presenceExpiry: new PresenceExpiry(agents, store.notifications, clock, logger),
    onProcessorEvent,
    webhookEndpoints: new WebhookEndpointService(store, clock, deps.webhookEgress ?? DEFAULT_EGRESS),
    events: new EventService(store, clock),
    eventStreams: new EventStreams(),
    webhookQueue: new WebhookQueue(store, clock, deps.webhookRetryScale ?? 1),
  };
}
