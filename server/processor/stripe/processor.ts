import Stripe from 'stripe';
import type { Mode } from '../../db/schema.js';
import { ApiError, invalid, unavailable } from '../../errors.js';
import type { BudgetLedger } from '../budget.js';
import { ProcessorFailure, type ProcessorFailureDetails, type ProcessorFailureKind } from '../errors.js';
import { budgetedHttpClient, InstrumentedHttpClient, tracingAuthenticator } from './budget-client.js';
import { noMetrics } from '../../operations/metrics.js';
import { inTrace, type Telemetry } from '../../operations/observe.js';
import type { ProcessorConnection } from '../connection.js';
import type { EndpointSettings } from '../endpoint-settings.js';
import { prefilledAccountParams } from './test-accounts.js';
import { PROCESSOR_CONNECT_EVENTS, PROCESSOR_EVENTS } from '../../../shared/processor-events.js';
import {
  type AccountLink,
  type AccountLinkRequest,
  type AccountPolicy,
  type AccountRequest,
  type BankAccountRequest,
  type CustomerFields,
  type DisputeEvidence,
  type IntentCreation,
  type IntentRequest,
  type CartRequest,
  type LocationRequest,
  type ProcessConfig,
  type TippingRequest,
  type PaymentProcessor,
  type ProcessorScope,
  type PayoutRequest,
  type PresentedCard,
  type ReaderRequest,
  type RefundRequest,
} from '../port.js';
import type {
  AccountSnapshot,
  BalanceSnapshot,
  BankAccountSnapshot,
  CustomerSnapshot,
  DisputeSnapshot,
  PaymentCancellationReason,
  PaymentSnapshot,
  PayoutSnapshot,
  ProcessorEvent,
  ReaderSnapshot,
  RefundSnapshot,
} from '../snapshots.js';
import {
  accountSnapshot,
  balanceSnapshot,
  bankAccountSnapshot,
  customerSnapshot,
  declinedSnapshot,
  disputeSnapshot,
  eventSnapshot,
  paymentSnapshot,
  payoutSnapshot,
  readerSnapshot,
  refundSnapshot,
} from './transformers.js';

/**
 * The processor calls are one HTTP round trip each; 20 s is well past Stripe's slowest documented
 * operations (card authorisations hold up to ~15 s) and keeps a stuck call from holding a request
 * for the SDK's default 80 s. It bounds the whole call, the wait for the rate budget and the
 * retries of 429s included (budget-client.ts). `--processor-timeout-ms` shortens it for tests.
 */
const PROCESSOR_TIMEOUT_MS = 20_000;

/**
 * Retries inside the SDK, on network errors and 409/429/5xx. Every mutating call carries an
 * idempotency key, so a retry cannot charge twice; two retries ride out a processor blip without
 * making a counter wait long.
 */
const PROCESSOR_RETRIES = 2;

const WEBHOOK_SETTING = (mode: Mode, connect: boolean) => `webhook_endpoint_${connect ? 'connect_' : ''}${mode}`;

/** Live accounts go through Stripe's hosted onboarding; test-mode ones are ready at once (port.ts). */
export const DEFAULT_ACCOUNT_POLICY: AccountPolicy = { type: 'express', prefill: { test: true, live: false } };

/**
 * What the adapter keeps outside itself: it touches no table. `ledger` is the rate budget every
 * instance shares (none: this process's own); `endpoints` keeps the webhook endpoints it registers.
 */
export interface StripeProcessorDeps {
  ledger?: BudgetLedger;
  endpoints: EndpointSettings;
  /** Spans and metrics of every call (server/operations/); none by default. */
  telemetry?: Pick<Telemetry, 'metrics' | 'tracer'>;
}

/**
 * The processor ports on the `stripe` package, against Stripe or the simulator: Stripe's calls
 * here, Stripe's objects mapped to pos's snapshots in transformers.ts.
 */
/**
 * The SDK's HTTP client: the rate budget in front unless the simulator's limits are off, and the
 * telemetry wrapper around both when telemetry is on (none at all when it is off: not a frame).
 */
function httpClientOf(key: string, connection: ProcessorConnection, deps: StripeProcessorDeps): { httpClient?: Stripe.HttpClient } {
  const telemetry = deps.telemetry;
  const observed = telemetry && (telemetry.tracer || telemetry.metrics !== noMetrics) ? telemetry : undefined;
  const budgeted = connection.unlimited ? undefined : budgetedHttpClient(key, deps.ledger, observed?.metrics);
  if (!observed) return budgeted ? { httpClient: budgeted } : {};
  return { httpClient: new InstrumentedHttpClient(budgeted ?? Stripe.createNodeHttpClient(), observed) };
}

/** The readiness check's read waits this long; the check itself gives up soon after (server/operations/readiness.ts). */
const PING_TIMEOUT_MS = 3_000;

export class StripeProcessor implements PaymentProcessor {
  readonly name: string;
  readonly kind: ProcessorConnection['kind'];
  readonly modes: readonly Mode[];
  readonly #clients: Partial<Record<Mode, Stripe>> = {};
  readonly #connection: ProcessorConnection;
  readonly #endpoints: EndpointSettings;

  readonly #policy: AccountPolicy;

  constructor(connection: ProcessorConnection, deps: StripeProcessorDeps) {
    this.#connection = connection;
    this.#endpoints = deps.endpoints;
    this.#policy = connection.accounts ?? DEFAULT_ACCOUNT_POLICY;
    this.kind = connection.kind;
    this.name = connection.kind === 'simulator' ? 'stripe-simulator' : 'stripe';
    this.modes = (['test', 'live'] as const).filter((mode) => connection.secretKeys[mode]);
    for (const mode of ['test', 'live'] as const) {
      const key = connection.secretKeys[mode];
      if (!key) continue;
      // With traces on, the key is given through an authenticator that also passes the caller's trace context on.
      const tracing = deps.telemetry?.tracer !== undefined;
      this.#clients[mode] = new Stripe(tracing ? '' : key, {
        ...(tracing ? { authenticator: tracingAuthenticator(key) } : {}),
        maxNetworkRetries: PROCESSOR_RETRIES,
        timeout: connection.timeoutMs ?? PROCESSOR_TIMEOUT_MS,
        appInfo: { name: 'pos' },
        // The SDK's request-latency reports to Stripe: nothing we use, and its buffer warns under load.
        telemetry: false,
        ...httpClientOf(key, connection, deps),
        ...(connection.endpoint ?? {}),
      });
    }
  }

  /** The SDK client for a mode; a mode without keys is a configuration error the caller sees. */
  #client(mode: Mode): Stripe {
    const client = this.#clients[mode];
    if (!client) {
      throw unavailable(`The platform has no ${mode}-mode processor key configured`, 'processor_not_configured');
    }
    return client;
  }

  publishableKey(mode: Mode): string | null {
    return this.#connection.publishableKeys[mode] ?? null;
  }

  browserUrl(): string | null {
    return this.#connection.browserUrl ?? null;
  }

  async ping(): Promise<void> {
    const mode = this.modes[0];
    if (!mode) return;
    const scope = { mode };
    // The platform's own balance: a read every account has. Not retried, and quicker than a
    // payment's timeout: a check that waits 20 s tells a probe nothing it can use.
    await call(scope, () => this.#client(scope.mode).balance.retrieve({}, { timeout: PING_TIMEOUT_MS, maxNetworkRetries: 0 }));
  }

  /** Creation is keyed by the caller (merchant and mode), so a retry reuses the account the processor already made. */
  async createAccount(scope: ProcessorScope, request: AccountRequest, idempotencyKey: string): Promise<AccountSnapshot> {
    const params: Stripe.AccountCreateParams = this.#policy.prefill[scope.mode]
      ? prefilledAccountParams({ country: request.country, businessName: request.businessName, merchantId: request.merchantId, acceptedAt: request.acceptedAt })
      : {
          type: this.#policy.type,
          country: request.country,
          business_profile: { name: request.businessName },
          capabilities: { card_payments: { requested: true }, transfers: { requested: true } },
          metadata: { pos_merchant_id: request.merchantId },
        };
    const account = await call(scope, () => this.#client(scope.mode).accounts.create(params, { idempotencyKey }));
    const snapshot = accountSnapshot(account);
    return { ...snapshot, type: snapshot.type ?? params.type ?? null };
  }

  async retrieveAccount(scope: ProcessorScope, account: string): Promise<AccountSnapshot> {
    return accountSnapshot(await call(scope, () => this.#client(scope.mode).accounts.retrieve(account)));
  }

  async createAccountLink(scope: ProcessorScope, request: AccountLinkRequest): Promise<AccountLink> {
    const link = await call(scope, () =>
      this.#client(scope.mode).accountLinks.create({ account: request.account, refresh_url: request.refreshUrl, return_url: request.returnUrl, type: 'account_onboarding', collection_options: { fields: 'currently_due' } }),
    );
    return { url: link.url, expiresAt: link.expires_at * 1000 };
  }

  async capabilityStatus(scope: ProcessorScope, account: string, capability: string): Promise<string> {
    try {
      return (await inTrace(scope.trace, () => this.#client(scope.mode).accounts.retrieveCapability(account, capability))).status;
    } catch (err) {
      if (err instanceof Stripe.errors.StripeInvalidRequestError) return 'inactive';
      throw failureOf(err);
    }
  }

  async createIntent(scope: ProcessorScope, request: IntentRequest, idempotencyKey: string): Promise<IntentCreation> {
    const client = this.#client(scope.mode);
    const params: Stripe.PaymentIntentCreateParams = {
      amount: request.amount,
      currency: request.currency,
      allowed_payment_method_types: request.methods,
      capture_method: request.captureMethod,
      application_fee_amount: request.applicationFee,
      transfer_data: { destination: request.destination },
      ...(request.confirm ? { confirm: true } : {}),
      ...(request.paymentMethod ? { payment_method: request.paymentMethod } : {}),
      ...(request.returnUrl ? { return_url: request.returnUrl } : {}),
      ...(request.offlineMandate ? { mandate_data: { customer_acceptance: { type: 'offline' } } } : {}),
      ...(request.description ? { description: request.description } : {}),
      ...(request.receiptEmail ? { receipt_email: request.receiptEmail } : {}),
      ...(request.customer ? { customer: request.customer } : {}),
      metadata: request.metadata,
      expand: ['latest_charge'],
    };
    try {
      return { intent: paymentSnapshot(await inTrace(scope.trace, () => client.paymentIntents.create(params, { idempotencyKey }))) };
    } catch (err) {
      // Declined on creation: the intent exists and carries the failure. The error holds the intent
      // and the card it tried, so the answer needs no second call.
      if (err instanceof Stripe.errors.StripeCardError && err.payment_intent) {
        return { intent: declinedSnapshot(err.payment_intent, err.payment_method), decline: new ProcessorFailure('card', err.message, detailsOf(err)) };
      }
      throw failureOf(err);
    }
  }

  async retrieveIntent(scope: ProcessorScope, id: string): Promise<PaymentSnapshot> {
    return paymentSnapshot(await call(scope, () => this.#client(scope.mode).paymentIntents.retrieve(id, { expand: ['latest_charge'] })));
  }

  async captureIntent(scope: ProcessorScope, id: string, amount: number | undefined, idempotencyKey: string): Promise<PaymentSnapshot> {
    return paymentSnapshot(await call(scope, () => this.#client(scope.mode).paymentIntents.capture(id, { ...(amount !== undefined ? { amount_to_capture: amount } : {}), expand: ['latest_charge'] }, { idempotencyKey })));
  }

  async cancelIntent(scope: ProcessorScope, id: string, reason: PaymentCancellationReason | undefined, idempotencyKey: string): Promise<PaymentSnapshot> {
    return paymentSnapshot(await call(scope, () => this.#client(scope.mode).paymentIntents.cancel(id, { ...(reason ? { cancellation_reason: reason } : {}), expand: ['latest_charge'] }, { idempotencyKey })));
  }

  async createRefund(scope: ProcessorScope, request: RefundRequest, idempotencyKey: string): Promise<RefundSnapshot> {
    const refund = await call(scope, () =>
      this.#client(scope.mode).refunds.create(
        {
          payment_intent: request.paymentIntent,
          amount: request.amount,
          // Destination charges: give back the merchant's share and our fee with the money.
          reverse_transfer: true,
          refund_application_fee: true,
          ...(request.reason ? { reason: request.reason } : {}),
          metadata: request.metadata,
        },
        { idempotencyKey },
      ),
    );
    return refundSnapshot(refund);
  }

  async retrieveRefund(scope: ProcessorScope, id: string): Promise<RefundSnapshot> {
    return refundSnapshot(await call(scope, () => this.#client(scope.mode).refunds.retrieve(id)));
  }

  async listRefunds(scope: ProcessorScope, paymentIntent: string): Promise<RefundSnapshot[]> {
    return (await call(scope, () => this.#client(scope.mode).refunds.list({ payment_intent: paymentIntent, limit: LIST_PAGE }).autoPagingToArray({ limit: LIST_MAX }))).map(refundSnapshot);
  }

  async createLocation(scope: ProcessorScope, request: LocationRequest, idempotencyKey: string): Promise<{ id: string }> {
    const location = await call(scope, () =>
      this.#client(scope.mode).terminal.locations.create(
        { display_name: request.displayName, address: request.address as unknown as Stripe.Terminal.LocationCreateParams.Address, metadata: request.metadata },
        { idempotencyKey },
      ),
    );
    return { id: location.id };
  }

  async registerReader(scope: ProcessorScope, request: ReaderRequest, idempotencyKey: string): Promise<ReaderSnapshot> {
    const reader = await call(scope, () =>
      this.#client(scope.mode).terminal.readers.create(
        { registration_code: request.registrationCode, location: request.location, label: request.label, metadata: request.metadata },
        { idempotencyKey },
      ),
    );
    return readerSnapshot(reader);
  }

  async listReaders(scope: ProcessorScope, location?: string): Promise<ReaderSnapshot[]> {
    return (await call(scope, () => this.#client(scope.mode).terminal.readers.list({ ...(location ? { location } : {}), limit: LIST_PAGE }).autoPagingToArray({ limit: LIST_MAX }))).map(readerSnapshot);
  }

  async retrieveReader(scope: ProcessorScope, id: string): Promise<ReaderSnapshot | null> {
    const reader = await call(scope, () => this.#client(scope.mode).terminal.readers.retrieve(id));
    return 'deleted' in reader && reader.deleted ? null : readerSnapshot(reader as Stripe.Terminal.Reader);
  }

  async deleteReader(scope: ProcessorScope, id: string): Promise<void> {
    await call(scope, () => this.#client(scope.mode).terminal.readers.del(id));
  }

  async configureLocationTipping(scope: ProcessorScope, location: string, configuration: string | null, tipping: TippingRequest | null, idempotencyKey: string): Promise<string> {
    const client = this.#client(scope.mode);
    const perCurrency: Stripe.Emptyable<Stripe.Terminal.ConfigurationCreateParams.Tipping> = tipping
      ? {
          [tipping.currency]: {
            ...(tipping.percentages ? { percentages: tipping.percentages } : {}),
            ...(tipping.fixedAmounts ? { fixed_amounts: tipping.fixedAmounts } : {}),
            ...(tipping.smartTipThreshold !== undefined ? { smart_tip_threshold: tipping.smartTipThreshold } : {}),
          },
        }
      : '';
    if (configuration) {
      await call(scope, () => client.terminal.configurations.update(configuration, { tipping: perCurrency }, { idempotencyKey }));
      return configuration;
    }
    const created = await call(scope, () => client.terminal.configurations.create(perCurrency === '' ? {} : { tipping: perCurrency }, { idempotencyKey: `${idempotencyKey}_create` }));
    await call(scope, () => client.terminal.locations.update(location, { configuration_overrides: created.id }, { idempotencyKey: `${idempotencyKey}_assign` }));
    return created.id;
  }

  async processPaymentIntent(scope: ProcessorScope, reader: string, paymentIntent: string, config?: ProcessConfig): Promise<ReaderSnapshot> {
    const answer = await call(scope, () =>
      this.#client(scope.mode).terminal.readers.processPaymentIntent(reader, {
        payment_intent: paymentIntent,
        ...(config
          ? {
              process_config: {
                skip_tipping: config.skipTipping,
                enable_customer_cancellation: config.enableCustomerCancellation,
                ...(config.tipEligibleAmount !== undefined ? { tipping: { amount_eligible: config.tipEligibleAmount } } : {}),
              },
            }
          : {}),
      }),
    );
    return readerSnapshot(answer);
  }

  async setReaderDisplay(scope: ProcessorScope, reader: string, cart: CartRequest): Promise<ReaderSnapshot> {
    const answer = await call(scope, () =>
      this.#client(scope.mode).terminal.readers.setReaderDisplay(reader, {
        type: 'cart',
        cart: {
          currency: cart.currency,
          line_items: cart.lineItems.map((item) => ({ description: item.description, quantity: item.quantity, amount: item.amount })),
          ...(cart.tax !== undefined ? { tax: cart.tax } : {}),
          total: cart.total,
        },
      }),
    );
    return readerSnapshot(answer);
  }

  async cancelReaderAction(scope: ProcessorScope, reader: string): Promise<void> {
    await call(scope, () => this.#client(scope.mode).terminal.readers.cancelAction(reader));
  }

  async presentPaymentMethod(scope: ProcessorScope, reader: string, card: PresentedCard): Promise<ReaderSnapshot> {
    const answer = await call(scope, () =>
      this.#client(scope.mode).testHelpers.terminal.readers.presentPaymentMethod(reader, {
        type: 'card_present',
        ...(card.amountTip ? { amount_tip: card.amountTip } : {}),
        ...(card.cardNumber ? { card_present: { number: card.cardNumber } } : {}),
      }),
    );
    return readerSnapshot(answer);
  }

  async listDisputes(scope: ProcessorScope, filter: { paymentIntent?: string; createdSince?: number }): Promise<DisputeSnapshot[]> {
    const disputes = await call(scope, () =>
      this.#client(scope.mode)
        .disputes.list({
          ...(filter.paymentIntent ? { payment_intent: filter.paymentIntent } : {}),
          ...(filter.createdSince !== undefined ? { created: { gte: Math.floor(filter.createdSince / 1000) } } : {}),
          limit: LIST_PAGE,
        })
        .autoPagingToArray({ limit: LIST_MAX }),
    );
    return disputes.map(disputeSnapshot);
  }

  async retrieveDispute(scope: ProcessorScope, id: string): Promise<DisputeSnapshot> {
    return disputeSnapshot(await call(scope, () => this.#client(scope.mode).disputes.retrieve(id)));
  }

  async updateDispute(scope: ProcessorScope, id: string, update: DisputeEvidence, idempotencyKey: string): Promise<DisputeSnapshot> {
    return disputeSnapshot(await call(scope, () => this.#client(scope.mode).disputes.update(id, { evidence: update.evidence, ...(update.submit ? { submit: true } : { submit: false }) }, { idempotencyKey })));
  }

  async closeDispute(scope: ProcessorScope, id: string, idempotencyKey: string): Promise<DisputeSnapshot> {
    return disputeSnapshot(await call(scope, () => this.#client(scope.mode).disputes.close(id, {}, { idempotencyKey })));
  }

  async retrieveBalance(scope: ProcessorScope, account: string): Promise<BalanceSnapshot> {
    return balanceSnapshot(await call(scope, () => this.#client(scope.mode).balance.retrieve({}, { stripeAccount: account })));
  }

  async createPayout(scope: ProcessorScope, request: PayoutRequest, idempotencyKey: string): Promise<PayoutSnapshot> {
    const payout = await call(scope, () =>
      this.#client(scope.mode).payouts.create(
        { amount: request.amount, currency: request.currency, ...(request.description ? { description: request.description } : {}), metadata: request.metadata },
        { stripeAccount: request.account, idempotencyKey },
      ),
    );
    return payoutSnapshot(payout);
  }

  async retrievePayout(scope: ProcessorScope, account: string, id: string): Promise<PayoutSnapshot> {
    return payoutSnapshot(await call(scope, () => this.#client(scope.mode).payouts.retrieve(id, {}, { stripeAccount: account })));
  }

  addBankAccount(scope: ProcessorScope, request: BankAccountRequest, idempotencyKey: string): Promise<BankAccountSnapshot> {
    return call(scope, async () => {
      const added = await this.#client(scope.mode).accounts.createExternalAccount(
        request.account,
        {
          external_account: {
            object: 'bank_account',
            account_number: request.accountNumber,
            country: request.country,
            currency: request.currency,
            ...(request.routingNumber ? { routing_number: request.routingNumber } : {}),
            ...(request.holderName ? { account_holder_name: request.holderName } : {}),
          },
          default_for_currency: true,
        },
        { idempotencyKey },
      );
      return bankAccountSnapshot(added as Stripe.BankAccount);
    });
  }

  async listBankAccounts(scope: ProcessorScope, account: string): Promise<BankAccountSnapshot[]> {
    const banks = await call(scope, () => this.#client(scope.mode).accounts.listExternalAccounts(account, { object: 'bank_account', limit: LIST_PAGE }).autoPagingToArray({ limit: LIST_MAX }));
    return (banks as Stripe.BankAccount[]).map(bankAccountSnapshot);
  }

  async createCustomer(scope: ProcessorScope, fields: CustomerFields, idempotencyKey: string): Promise<CustomerSnapshot> {
    return customerSnapshot(await call(scope, () => this.#client(scope.mode).customers.create(customerParams(fields), { idempotencyKey })));
  }

  async updateCustomer(scope: ProcessorScope, id: string, fields: CustomerFields, idempotencyKey: string): Promise<CustomerSnapshot> {
    return customerSnapshot(await call(scope, () => this.#client(scope.mode).customers.update(id, customerParams(fields), { idempotencyKey })));
  }

  async deleteCustomer(scope: ProcessorScope, id: string): Promise<void> {
    try {
      await inTrace(scope.trace, () => this.#client(scope.mode).customers.del(id));
    } catch (err) {
      // Already gone at the processor (deleted there, or by an earlier attempt of ours): done.
      if (err instanceof Stripe.errors.StripeInvalidRequestError && err.code === 'resource_missing') return;
      throw failureOf(err);
    }
  }

  /**
   * Simulator only: point the processor's webhook endpoints for each mode at this server, one for
   * the platform's events and one (Connect) for the connected accounts'. Each endpoint and its
   * secret are kept, and only the URL and events are updated on a restart, so events the processor
   * is still retrying reach the new address under the same secret.
   */
  async registerWebhookEndpoint(url: string): Promise<void> {
    for (const mode of ['test', 'live'] as const) {
      const client = this.#clients[mode];
      if (!client) continue;
      for (const connect of [false, true]) {
        const events = connect ? [...PROCESSOR_CONNECT_EVENTS] : [...PROCESSOR_EVENTS];
        const name = WEBHOOK_SETTING(mode, connect);
        let endpoint = await this.#endpoints.load(name);
        if (endpoint) {
          try {
            await client.webhookEndpoints.update(endpoint.id, { url, enabled_events: events, disabled: false });
          } catch (err) {
            if (!(err instanceof Stripe.errors.StripeInvalidRequestError)) throw err;
            endpoint = undefined;
          }
        }
        if (!endpoint) {
          const created = await client.webhookEndpoints.create({ url, enabled_events: events, connect, description: connect ? 'pos server (connected accounts)' : 'pos server' });
          endpoint = { id: created.id, secret: created.secret ?? '' };
          await this.#endpoints.save(name, endpoint);
        }
        if (!this.#connection.webhookSecrets.includes(endpoint.secret)) this.#connection.webhookSecrets.push(endpoint.secret);
      }
    }
  }

  /**
   * Verifies a processor event's signature against every configured secret. Throws when none
   * matches: a forged or altered event changes nothing.
   */
  verifyEvent(rawBody: Buffer, signature: string | undefined): ProcessorEvent {
    if (!signature) throw invalid(undefined, 'Missing Stripe-Signature header', 'signature_missing');
    const client = this.#clients.test ?? this.#clients.live;
    if (!client) throw unavailable('No processor configured', 'processor_not_configured');
    for (const secret of this.#connection.webhookSecrets) {
      try {
        return eventSnapshot(client.webhooks.constructEvent(rawBody, signature, secret));
      } catch (err) {
        if (!(err instanceof Stripe.errors.StripeSignatureVerificationError)) throw err;
      }
    }
    throw invalid(undefined, 'Processor event signature verification failed', 'signature_invalid');
  }
}

/**
 * List pages of 100, Stripe's largest; at most 1,000 objects per listing, far more readers or
 * refunds than one location or payment has, so a runaway listing cannot hold a request.
 */
const LIST_PAGE = 100;
const LIST_MAX = 1_000;

/** A customer's fields as Stripe's parameters: an empty string clears a field there. */
function customerParams(fields: CustomerFields): Stripe.CustomerUpdateParams {
  const params: Stripe.CustomerUpdateParams = {};
  for (const key of ['name', 'email', 'phone', 'description'] as const) {
    const value = fields[key];
    if (value !== undefined) params[key] = value ?? '';
  }
  if (fields.metadata) params.metadata = fields.metadata;
  return params;
}

/**
 * Runs one SDK call in the scope's trace (the SDK writes the caller's context into the request while
 * the call starts: budget-client.ts `tracingAuthenticator`), translating whatever it throws into a
 * `ProcessorFailure`.
 */
async function call<T>(scope: ProcessorScope, work: () => Promise<T>): Promise<T> {
  try {
    return await inTrace(scope.trace, work);
  } catch (err) {
    throw failureOf(err);
  }
}

/**
 * The SDK's errors as the domain's `ProcessorFailure`. An error that is not the SDK's was thrown by
 * its client before a byte went out (its form encoder refuses a lone UTF-16 surrogate, for one):
 * sending the same request again fails the same way. Our own `ApiError`s pass through.
 */
function failureOf(err: unknown): ProcessorFailure | ApiError {
  if (err instanceof ApiError || err instanceof ProcessorFailure) return err;
  if (!(err instanceof Stripe.errors.StripeError)) {
    const message =
      err instanceof URIError
        ? 'The request could not be sent to the payment processor: a field holds text that cannot be encoded (such as a lone UTF-16 surrogate)'
        : 'The request could not be sent to the payment processor: its client refused it before sending';
    return new ProcessorFailure('unsendable', message);
  }
  return new ProcessorFailure(kindOf(err), err.message, detailsOf(err));
}

function detailsOf(err: InstanceType<typeof Stripe.errors.StripeError>): ProcessorFailureDetails {
  return {
    ...(err.statusCode !== undefined ? { status: err.statusCode } : {}),
    ...(err.code ? { code: err.code } : {}),
    ...(err.decline_code ? { declineCode: err.decline_code } : {}),
    ...(err.param ? { param: err.param } : {}),
    ...(err.payment_intent?.id ? { paymentIntent: err.payment_intent.id } : {}),
    ...(err.requestId ? { requestId: err.requestId } : {}),
  };
}

function kindOf(err: InstanceType<typeof Stripe.errors.StripeError>): ProcessorFailureKind {
  if (err instanceof Stripe.errors.StripeCardError) return 'card';
  if (err instanceof Stripe.errors.StripeInvalidRequestError) return 'invalid_request';
  if (err instanceof Stripe.errors.StripeIdempotencyError) return 'idempotency';
  if (err instanceof Stripe.errors.StripeRateLimitError) return 'rate_limit';
  if (err instanceof Stripe.errors.StripeConnectionError) return 'connection';
  if (err instanceof Stripe.errors.StripeAPIError) return 'api';
  if (err instanceof Stripe.errors.StripeAuthenticationError || err instanceof Stripe.errors.StripePermissionError) return 'credentials';
  return 'other';
}
