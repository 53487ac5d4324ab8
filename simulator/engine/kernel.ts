import type { Scope, Store, StoredObject } from '../store.js';
import { resourceMissing } from '../errors.js';

/**
 * What every service needs: the store, the clock, the live configuration and the two side-effect
 * queues (events for webhooks, timers for delayed transitions). Writes to both queues happen inside
 * the caller's transaction (an outbox), so a state change and its event/timer commit together.
 */

/** Where a change came from; becomes the event's `request` field. */
export interface Origin {
  scope: Scope;
  requestId: string | null;
  idempotencyKey: string | null;
  apiVersion: string;
}

export interface RuntimeConfig {
  authorizationDelayMs: number;
  achSettlementDelayMs: number;
  /** A captured charge on a dispute test card → its dispute opens; evidence submitted → the bank decides. */
  disputeDelayMs: number;
  /** Identity fields submitted → Stripe's verification result (`pending_verification` meanwhile). */
  verificationDelayMs: number;
  /** An Account Link's URL works this long after creation (`expires_at`). */
  accountLinkTtlMs: number;
  /** Public base URL of the simulator (3DS pages, receipts), known once the server listens. */
  baseUrl: string;
}

export type TimerKind =
  | 'ach_settlement'
  | 'card_present_authorization'
  | 'balance_available'
  | 'dispute_open'
  | 'dispute_decision'
  | 'payout_run'
  | 'payout_submit'
  | 'payout_arrival'
  | 'account_verification';

export interface TimerQueue {
  schedule(kind: TimerKind, dueAt: number, payload: unknown): string;
  cancel(id: string): void;
}

export interface EventSink {
  emit(origin: Origin, type: string, object: object, previousAttributes?: Record<string, unknown>): void;
}

export interface Kernel {
  store: Store;
  config: RuntimeConfig;
  now(): number;
  timers: TimerQueue;
  events: EventSink;
  log(line: string): void;
}

export function unixSeconds(ms: number): number {
  return Math.floor(ms / 1000);
}

/**
 * One object of `type` visible in `scope`, or Stripe's 404. `what` is the noun Stripe uses in the
 * message ("payment_intent", "PaymentMethod", …) and `param` the field it blames.
 */
export function getScoped<TBody, TInternal>(
  kernel: Kernel,
  type: string,
  scope: Scope,
  id: string,
  what: string,
  param: string,
): StoredObject<TBody, TInternal> {
  const found = kernel.store.find<TBody, TInternal>(id);
  if (found && found.type === type && found.livemode === scope.livemode && found.account === scope.account) return found;
  const otherMode = found && found.type === type && found.account === scope.account ? { livemode: found.livemode } : undefined;
  throw resourceMissing(what, id, param, otherMode);
}

/** Any object by id and type, whatever its scope; for the control API, which acts by id. */
export function getAny<TBody, TInternal>(kernel: Kernel, type: string, id: string, what: string): StoredObject<TBody, TInternal> {
  const found = kernel.store.find<TBody, TInternal>(id);
  if (found && found.type === type) return found;
  throw resourceMissing(what, id, 'id');
}

export function systemOrigin(scope: Scope, apiVersion: string): Origin {
  return { scope, requestId: null, idempotencyKey: null, apiVersion };
}
