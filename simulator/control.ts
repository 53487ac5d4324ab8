import type Stripe from 'stripe';
import type { CapabilityStatus } from './engine/connect/accountTypes.js';
import type { Capabilities } from './engine/connect/capabilities.js';
import type { WebhookDispatcher } from './engine/events/dispatcher.js';
import { type EndpointInternal, type WebhookEndpoints, type WebhookFaults, loadFaults, saveFaults } from './engine/events/events.js';
import type { Kernel, Origin } from './engine/kernel.js';
import type { PaymentAttempts } from './engine/payments/paymentAttempts.js';
import { isDeclineName } from './engine/payments/instruments.js';
import type { ReaderActions } from './engine/terminal/readerActions.js';
import type { Readers } from './engine/terminal/readers.js';
import type { ReaderDisplay, ScriptedOutcome } from './engine/terminal/types.js';
import type { Timers } from './engine/timers.js';
import { invalidRequest } from './errors.js';
import { DEFAULT_API_VERSION } from './http/endpoint.js';
import type { DeliveryStatus } from './store.js';
import type { RateLimitReport, RateLimits } from './http/rate-limits.js';

/**
 * The simulator's control surface: what a test (or a developer at the `/_sim` HTTP API) does to the
 * world outside Stripe's API — the cardholder, the issuer, the reader, the network. Every operation
 * here is also a `/_sim/…` route (see README.md).
 */

export type { CapabilityStatus, RateLimitReport, ScriptedOutcome, WebhookFaults };

export interface DeliveryInfo {
  id: number;
  eventId: string;
  eventType: string | null;
  endpointId: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: number;
  lastError: string | null;
}

export interface SimulatorControl {
  /**
   * The enabled webhook endpoint at `url` of one mode, for the platform's events or connected
   * accounts' (`connect`), with its signing secret, subscribed to `events`: made when there is none,
   * its events set to `events` when there is (its secret kept). What `pos simulator env` prints for
   * servers that share this simulator.
   */
  webhookEndpointFor(url: string, livemode: boolean, connect: boolean, events: readonly string[]): Promise<{ id: string; secret: string }>;
  /** Card-present authorisation window for cards presented from now on. */
  setAuthorizationDelay(ms: number): Promise<void>;
  /** ACH settlement delay for debits confirmed from now on. */
  setAchSettlementDelay(ms: number): Promise<void>;
  /** Delay before a dispute test card's dispute opens, and before submitted evidence is decided. */
  setDisputeDelay(ms: number): Promise<void>;
  /** Delay between identity fields being submitted and Stripe's verification result, from now on. */
  setVerificationDelay(ms: number): Promise<void>;
  /** How long Account Links created from now on stay usable. */
  setAccountLinkTtl(ms: number): Promise<void>;
  /** The cardholder passes the 3DS challenge of an intent in `requires_action`. */
  completeThreeDSecure(paymentIntentId: string): Promise<Stripe.PaymentIntent>;
  /** The cardholder fails the 3DS challenge. */
  failThreeDSecure(paymentIntentId: string): Promise<Stripe.PaymentIntent>;
  /** Stripe's review decides a capability (e.g. activates `us_bank_account_ach_payments`). */
  setCapability(accountId: string, capability: string, status: CapabilityStatus): Promise<Stripe.Capability>;
  /** The customer presses cancel on the reader while it waits for a card. */
  customerCancel(readerId: string): Promise<Stripe.Terminal.Reader>;
  /** What the reader's screen shows: cart, tip selection, "tap card" with the total, outcome; `lines` as text. */
  readerDisplay(readerId: string): Promise<ReaderDisplay & { reader: string; lines: string[] }>;
  /** The customer answers the tip selection screen: suggestion 1–3, a custom amount, or no tip. */
  chooseTip(readerId: string, choice: { option?: number; amount?: number; none?: boolean }): Promise<ReaderDisplay & { reader: string; lines: string[] }>;
  /** Unplugs (false) or reconnects (true) a reader. */
  setReaderOnline(readerId: string, online: boolean): Promise<Stripe.Terminal.Reader>;
  /** Outcomes for the next cards presented on a reader, in order: 'approve' or a decline code. */
  scriptReader(readerId: string, outcomes: ScriptedOutcome[]): Promise<Stripe.Terminal.Reader>;
  /** Changes the webhook delivery faults; returns the faults now in force. */
  setWebhookFaults(faults: Partial<WebhookFaults>): Promise<WebhookFaults>;
  getWebhookFaults(): Promise<WebhookFaults>;
  /** Sends held deliveries, newest first. Returns how many were released. */
  releaseHeldWebhooks(): Promise<number>;
  /** Fires every pending timer now and makes every waiting webhook retry due. */
  advanceTimers(): Promise<{ timersFired: number }>;
  /** Every delivery the simulator has recorded, oldest first. */
  webhookDeliveries(): Promise<DeliveryInfo[]>;
  /** Resolves once no webhook delivery is due or waiting for a retry. */
  webhooksIdle(): Promise<void>;
  /** Whether Stripe's rate limits are enforced, and the requests and 429s counted per endpoint since start or the last reset. */
  rateLimits(): Promise<RateLimitReport>;
  /** Turns the rate limits on or off (off: throughput benchmarks and bulk fixtures only); counting goes on either way. */
  setRateLimits(enabled: boolean): Promise<RateLimitReport>;
  /** Zeroes the counts and empties the windows. */
  resetRateLimits(): Promise<RateLimitReport>;
  /** Answers 429 to every request to these endpoints (`POST /v1/refunds`; `*` for all) until called with others or none. */
  throttle(endpoints: string[]): Promise<RateLimitReport>;
}

export interface ControlDeps {
  kernel: Kernel;
  capabilities: Capabilities;
  attempts: PaymentAttempts;
  readers: Readers;
  readerActions: ReaderActions;
  timers: Timers;
  dispatcher: WebhookDispatcher;
  rateLimits: RateLimits;
  endpoints: WebhookEndpoints;
}

const CAPABILITY_STATUSES: CapabilityStatus[] = ['active', 'inactive', 'pending', 'disabled', 'unrequested'];

function controlOrigin(): Origin {
  return { scope: { livemode: false, account: null }, requestId: null, idempotencyKey: null, apiVersion: DEFAULT_API_VERSION };
}

export function createControl(deps: ControlDeps): SimulatorControl {
  const { kernel, dispatcher } = deps;
  /** Runs a state change atomically, then lets timers and deliveries it produced go. */
  const act = <T>(work: () => T): Promise<T> => {
    try {
      const result = kernel.store.transaction(work);
      dispatcher.poke();
      return Promise.resolve(result);
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
  };
  const nonNegative = (ms: number, what: string): void => {
    if (!Number.isInteger(ms) || ms < 0) throw invalidRequest(`${what} must be a non-negative integer number of milliseconds.`, 'ms');
  };
  return {
    webhookEndpointFor: (url, livemode, connect, events) =>
      act(() => {
        const scope = { livemode, account: null };
        const found = kernel.store
          .list<Stripe.WebhookEndpoint, EndpointInternal>('webhook_endpoint', scope, { url, status: 'enabled' }, { limit: 100 })
          .data.find((row) => row.internal.connect === connect);
        if (found) {
          deps.endpoints.update(scope, found.id, { enabled_events: [...events] });
          return { id: found.id, secret: found.internal.secret };
        }
        const made = deps.endpoints.create(scope, { url, enabled_events: [...events], connect, description: connect ? 'pos servers (connected accounts)' : 'pos servers' });
        return { id: made.id, secret: made.secret ?? '' };
      }),
    setAuthorizationDelay: (ms) =>
      act(() => {
        nonNegative(ms, 'The authorization delay');
        kernel.config.authorizationDelayMs = ms;
      }),
    setAchSettlementDelay: (ms) =>
      act(() => {
        nonNegative(ms, 'The ACH settlement delay');
        kernel.config.achSettlementDelayMs = ms;
      }),
    setDisputeDelay: (ms) =>
      act(() => {
        nonNegative(ms, 'The dispute delay');
        kernel.config.disputeDelayMs = ms;
      }),
    setVerificationDelay: (ms) =>
      act(() => {
        nonNegative(ms, 'The verification delay');
        kernel.config.verificationDelayMs = ms;
      }),
    setAccountLinkTtl: (ms) =>
      act(() => {
        nonNegative(ms, 'The account link lifetime');
        kernel.config.accountLinkTtlMs = ms;
      }),
    completeThreeDSecure: (id) => act(() => deps.attempts.finishAuthentication(controlOrigin(), id, true)),
    failThreeDSecure: (id) => act(() => deps.attempts.finishAuthentication(controlOrigin(), id, false)),
    setCapability: (accountId, capability, status) =>
      act(() => {
        if (!CAPABILITY_STATUSES.includes(status)) throw invalidRequest(`Unknown capability status ${status}.`, 'status');
        return deps.capabilities.setCapabilityStatus(controlOrigin(), accountId, capability, status);
      }),
    customerCancel: (readerId) => act(() => deps.readerActions.customerCancel(controlOrigin(), readerId)),
    readerDisplay: (readerId) => act(() => deps.readers.display(readerId)),
    chooseTip: (readerId, choice) => act(() => deps.readers.chooseTip(readerId, choice)),
    setReaderOnline: (readerId, online) => act(() => deps.readers.setOnline(readerId, online)),
    scriptReader: (readerId, outcomes) =>
      act(() => {
        for (const outcome of outcomes) {
          if (outcome !== 'approve' && !isDeclineName(outcome)) throw invalidRequest(`Unknown outcome ${String(outcome)}.`, 'outcomes');
        }
        return deps.readers.script(readerId, outcomes);
      }),
    setWebhookFaults: (change) =>
      act(() => {
        const next = { ...loadFaults(kernel.store), ...change };
        if (!Number.isInteger(next.delayMs) || next.delayMs < 0) throw invalidRequest('delayMs must be a non-negative integer.', 'delay_ms');
        if (!Number.isInteger(next.holdBatch) || next.holdBatch < 0) throw invalidRequest('holdBatch must be a non-negative integer.', 'hold_batch');
        if (!Number.isInteger(next.dropNext) || next.dropNext < 0) throw invalidRequest('dropNext must be a non-negative integer.', 'drop_next');
        saveFaults(kernel.store, next);
        if (!next.hold) kernel.store.releaseHeldReversed(kernel.now());
        return next;
      }),
    getWebhookFaults: () => Promise.resolve(loadFaults(kernel.store)),
    releaseHeldWebhooks: () => act(() => kernel.store.releaseHeldReversed(kernel.now())),
    advanceTimers: async () => {
      const timersFired = deps.timers.advanceAll();
      kernel.store.hurryDeliveries(kernel.now());
      dispatcher.poke();
      return { timersFired };
    },
    webhookDeliveries: () =>
      Promise.resolve(
        kernel.store.deliveries().map((row) => ({
          id: row.id,
          eventId: row.eventId,
          eventType: kernel.store.find<{ type: string }, unknown>(row.eventId)?.body.type ?? null,
          endpointId: row.endpointId,
          status: row.status,
          attempts: row.attempts,
          nextAttemptAt: row.nextAt,
          lastError: row.lastError,
        })),
      ),
    webhooksIdle: () => dispatcher.idle(),
    rateLimits: () => Promise.resolve(deps.rateLimits.report()),
    setRateLimits: (enabled) => {
      deps.rateLimits.enabled = enabled;
      return Promise.resolve(deps.rateLimits.report());
    },
    resetRateLimits: () => {
      deps.rateLimits.reset();
      return Promise.resolve(deps.rateLimits.report());
    },
    throttle: (endpoints) => {
      deps.rateLimits.throttle(endpoints);
      return Promise.resolve(deps.rateLimits.report());
    },
  };
}
