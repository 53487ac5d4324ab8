import type Stripe from 'stripe';
import { newId, newSecret } from '../../ids.js';
import { invalidRequest } from '../../errors.js';
import type { Scope, Store, StoredObject } from '../../store.js';
import { type EventSink, type Kernel, type Origin, getScoped, unixSeconds } from '../kernel.js';
import { list, type ListEnvelope, type Metadata, mergeMetadata } from '../shapes.js';

/**
 * Events and webhook endpoints. An event is written in the same transaction as the change that
 * caused it, together with one delivery row per matching endpoint (an outbox); the dispatcher sends
 * them afterwards. Connected-account events carry `account` and go to endpoints created with
 * `connect: true`; platform events go to the others.
 */

export interface EventBody {
  id: string;
  object: 'event';
  account?: string;
  api_version: string | null;
  created: number;
  data: { object: unknown; previous_attributes?: Record<string, unknown> };
  livemode: boolean;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

export type EventRow = StoredObject<EventBody, Record<string, never>>;

export interface EndpointInternal {
  secret: string;
  connect: boolean;
}

export type EndpointRow = StoredObject<Stripe.WebhookEndpoint, EndpointInternal>;

/** Scriptable delivery faults (control API). */
export interface WebhookFaults {
  /** Every new delivery waits this long before its first attempt. */
  delayMs: number;
  /** Every event is delivered twice to each endpoint. */
  duplicate: boolean;
  /** New deliveries are discarded (never sent) until this is turned off. */
  drop: boolean;
  /** The deliveries of this many next events (that have an endpoint to go to) are discarded; counts down. */
  dropNext: number;
  /** New deliveries are held back; releasing sends them newest first (out of order). */
  hold: boolean;
  /** While holding, release automatically once this many deliveries are held (0: only on request). */
  holdBatch: number;
}

export const NO_FAULTS: WebhookFaults = { delayMs: 0, duplicate: false, drop: false, dropNext: 0, hold: false, holdBatch: 0 };

const FAULTS_KEY = 'webhook_faults';

export function loadFaults(store: Store): WebhookFaults {
  const raw = store.getMeta(FAULTS_KEY);
  return raw ? { ...NO_FAULTS, ...(JSON.parse(raw) as Partial<WebhookFaults>) } : { ...NO_FAULTS };
}

export function saveFaults(store: Store, faults: WebhookFaults): void {
  store.setMeta(FAULTS_KEY, JSON.stringify(faults));
}

function matches(endpoint: EndpointRow, event: EventBody, account: string | null): boolean {
  if (endpoint.livemode !== event.livemode || endpoint.body.status !== 'enabled') return false;
  if (endpoint.internal.connect !== (account !== null)) return false;
  return endpoint.body.enabled_events.includes('*') || endpoint.body.enabled_events.includes(event.type);
}

export class EventLog implements EventSink {
  /** Called after a delivery row is written, to wake the dispatcher once the transaction commits. */
  onDelivery: () => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
  ) {}

  emit(origin: Origin, type: string, object: object, previousAttributes?: Record<string, unknown>): void {
    const scope = origin.scope;
    // The object as it is now, without a copy: the event is written as JSON below, before the
    // caller can change it, and nothing keeps the event object itself.
    const event: EventBody = {
      id: newId('evt'),
      object: 'event',
      api_version: origin.apiVersion,
      created: unixSeconds(this.now()),
      data: previousAttributes ? { object, previous_attributes: previousAttributes } : { object },
      livemode: scope.livemode,
      pending_webhooks: 0,
      request: { id: origin.requestId, idempotency_key: origin.idempotencyKey },
      type,
    };
    if (scope.account !== null) event.account = scope.account;
    const endpoints = this.store.all<Stripe.WebhookEndpoint, EndpointInternal>('webhook_endpoint').filter((endpoint) => matches(endpoint, event, scope.account));
    const faults = loadFaults(this.store);
    const now = this.now();
    let pending = 0;
    const deliveries: [string, 'pending' | 'held' | 'dropped'][] = [];
    const dropThis = faults.drop || (faults.dropNext > 0 && endpoints.length > 0);
    if (!faults.drop && dropThis) saveFaults(this.store, { ...faults, dropNext: faults.dropNext - 1 });
    for (const endpoint of endpoints) {
      const status = dropThis ? 'dropped' : faults.hold ? 'held' : 'pending';
      const copies = faults.duplicate ? 2 : 1;
      for (let i = 0; i < copies; i++) deliveries.push([endpoint.id, status]);
      if (status !== 'dropped') pending++;
    }
    event.pending_webhooks = pending;
    this.store.insert<EventBody, Record<string, never>>('event', scope, event, {});
    for (const [endpointId, status] of deliveries) this.store.addDelivery(event.id, endpointId, status, now + faults.delayMs);
    if (faults.hold && faults.holdBatch > 0 && this.store.countHeld() >= faults.holdBatch) this.store.releaseHeldReversed(now);
    if (deliveries.length > 0) this.onDelivery();
  }

  retrieve(scope: Scope, id: string, kernel: Kernel): EventBody {
    return getScoped<EventBody, Record<string, never>>(kernel, 'event', scope, id, 'event', 'id').body;
  }

  list(scope: Scope, filters: { type?: string | undefined; types?: string[] | undefined }, page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined }): ListEnvelope<EventBody> {
    if (filters.types && filters.types.length > 0) {
      // A type set cannot be expressed as one equality filter: scan in pages until the page is full.
      const wanted = new Set(filters.types);
      const data: EventBody[] = [];
      let cursor = page.startingAfter;
      let more = true;
      while (data.length <= page.limit && more) {
        const chunk = this.store.list<EventBody, Record<string, never>>('event', scope, {}, { limit: 100, startingAfter: cursor });
        for (const row of chunk.data) if (wanted.has(row.body.type)) data.push(row.body);
        more = chunk.hasMore;
        cursor = chunk.data.at(-1)?.id;
      }
      return list('/v1/events', data.slice(0, page.limit), data.length > page.limit);
    }
    const result = this.store.list<EventBody, Record<string, never>>('event', scope, { type: filters.type }, page);
    return list('/v1/events', result.data.map((row) => row.body), result.hasMore);
  }
}

export interface EndpointCreateInput {
  url: string;
  enabled_events: string[];
  connect?: boolean | undefined;
  description?: string | null | undefined;
  metadata?: Metadata | '' | undefined;
  api_version?: string | undefined;
}

export interface EndpointUpdateInput {
  url?: string | undefined;
  enabled_events?: string[] | undefined;
  disabled?: boolean | undefined;
  description?: string | null | undefined;
  metadata?: Metadata | '' | undefined;
}

function platformScope(scope: Scope): Scope {
  return { livemode: scope.livemode, account: null };
}

function validateUrl(url: string): void {
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
  } catch {
    throw invalidRequest(`Invalid URL: ${url}. URLs must begin with http:// or https://.`, 'url', 'url_invalid');
  }
}

/** Webhook endpoints belong to the platform of one mode. */
export class WebhookEndpoints {
  constructor(private readonly kernel: Kernel) {}

  create(scope: Scope, input: EndpointCreateInput): Stripe.WebhookEndpoint {
    validateUrl(input.url);
    if (input.enabled_events.length === 0) throw invalidRequest('Missing required param: enabled_events.', 'enabled_events', 'parameter_missing');
    const secret = newSecret('whsec_');
    const body: Stripe.WebhookEndpoint = {
      id: newId('we'),
      object: 'webhook_endpoint',
      api_version: input.api_version ?? null,
      application: null,
      created: unixSeconds(this.kernel.now()),
      description: input.description ?? null,
      enabled_events: input.enabled_events,
      livemode: scope.livemode,
      metadata: mergeMetadata({}, input.metadata),
      status: 'enabled',
      url: input.url,
    };
    this.kernel.store.insert<Stripe.WebhookEndpoint, EndpointInternal>('webhook_endpoint', platformScope(scope), body, { secret, connect: input.connect ?? false });
    return { ...body, secret };
  }

  private get(scope: Scope, id: string): EndpointRow {
    return getScoped<Stripe.WebhookEndpoint, EndpointInternal>(this.kernel, 'webhook_endpoint', platformScope(scope), id, 'webhook_endpoint', 'id');
  }

  retrieve(scope: Scope, id: string): Stripe.WebhookEndpoint {
    return this.get(scope, id).body;
  }

  update(scope: Scope, id: string, input: EndpointUpdateInput): Stripe.WebhookEndpoint {
    const row = this.get(scope, id);
    if (input.url !== undefined) {
      validateUrl(input.url);
      row.body.url = input.url;
    }
    if (input.enabled_events !== undefined) row.body.enabled_events = input.enabled_events;
    if (input.disabled !== undefined) row.body.status = input.disabled ? 'disabled' : 'enabled';
    if (input.description !== undefined) row.body.description = input.description;
    row.body.metadata = mergeMetadata(row.body.metadata, input.metadata);
    this.kernel.store.save(row);
    return row.body;
  }

  remove(scope: Scope, id: string): { id: string; object: 'webhook_endpoint'; deleted: true } {
    const row = this.get(scope, id);
    this.kernel.store.remove(row.id);
    return { id: row.id, object: 'webhook_endpoint', deleted: true };
  }

  list(scope: Scope, page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined }): ListEnvelope<Stripe.WebhookEndpoint> {
    const result = this.kernel.store.list<Stripe.WebhookEndpoint, EndpointInternal>('webhook_endpoint', platformScope(scope), {}, page);
    return list('/v1/webhook_endpoints', result.data.map((row) => row.body), result.hasMore);
  }
}
