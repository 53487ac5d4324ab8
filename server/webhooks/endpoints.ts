import { sql } from 'kysely';
import { isUuid, newIdentity } from '../../shared/ids.js';
import { toIsoOrNull, toIsoTimestamp, type Clock } from '../../shared/time.js';
import type { WebhookDeliveryStatus, WebhookEndpointsTable } from '../db/schema.js';
import type { Executor, Store } from '../db/store.js';
import { notifyOnCommit } from '../db/notify.js';
import { invalid, notFound } from '../errors.js';
import type { CreateWebhookEndpointInput, UpdateWebhookEndpointInput, WebhookEndpoint } from '../../shared/contract/webhooks.js';
import { readCount } from '../db/counters.js';
import { offsetPage, type Page, type PageRequest } from '../pagination.js';
import type { Scope } from '../accounts/scope.js';
import { type EgressOptions, endpointRule, refuseUrl } from './egress.js';
import { newSigningSecret } from '../../shared/webhook-signing.js';
import type { FieldCipher } from '../db/encryption.js';

/**
 * `status = 'pending'` written out, not bound: the webhook queue's indexes hold pending deliveries
 * only (migration 0043), and SQLite uses a partial index only for a query that names its predicate.
 */
export const PENDING_DELIVERY = sql.lit<WebhookDeliveryStatus>('pending');

/** Stripe's limit per account and mode: more endpoints than this is a misconfiguration, not a need. */
export const MAX_ENDPOINTS = 16;

/**
 * After a roll the old secret keeps signing, as a second signature, for 24 h: a full business day
 * to deploy the new secret to every receiver (Stripe's default grace).
 */
export const SECRET_ROLL_GRACE_MS = 24 * 60 * 60 * 1000;

export function presentEndpoint(row: WebhookEndpointsTable, secret?: string): WebhookEndpoint {
  return {
    id: row.id,
    reference: row.reference,
    object: 'webhook_endpoint',
    url: row.url,
    description: row.description,
    events: JSON.parse(row.events) as string[],
    status: row.status,
    is_test: row.mode === 'test',
    disabled_reason: row.disabled_reason,
    disabled_at: toIsoOrNull(row.disabled_at),
    failing_since: toIsoOrNull(row.failing_since),
    previous_secret_expires_at: toIsoOrNull(row.previous_secret_expires_at),
    ...(secret ? { secret } : {}),
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
  };
}

/** Does an endpoint's filter (`*`, `payment.*`, `payment.succeeded`) take this event type? */
export function filterMatches(filter: readonly string[], type: string): boolean {
  return filter.some((f) => f === '*' || f === type || (f.endsWith('.*') && type.startsWith(f.slice(0, -1))));
}

export async function findEndpointRow(db: Executor, scope: Scope, idOrReference: string): Promise<WebhookEndpointsTable | undefined> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('merchant_id', '=', scope.merchantId)
    .where('mode', '=', scope.mode)
    .where('deleted_at', 'is', null)
    .where(isUuid(idOrReference) ? 'id' : 'reference', '=', idOrReference)
    .executeTakeFirst();
}

export class WebhookEndpointService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly egress: EgressOptions,
    private readonly cipher: FieldCipher,
  ) {}

  /** A broken URL is `url_invalid`; a valid one this server will not deliver to is `parameter_invalid`. */
  #checkUrl(scope: Scope, url: string): void {
    const refused = refuseUrl(url, endpointRule(scope.mode, this.egress));
    if (refused) throw invalid('url', `Invalid url: it ${refused.why}`, refused.malformed ? 'url_invalid' : 'parameter_invalid');
  }

  async create(scope: Scope, input: CreateWebhookEndpointInput): Promise<WebhookEndpoint> {
    this.#checkUrl(scope, input.url);
    const secret = newSigningSecret();
    const row = await this.store.transaction(async (trx) => {
      const existing = await trx
        .selectFrom('webhook_endpoints')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('merchant_id', '=', scope.merchantId)
        .where('mode', '=', scope.mode)
        .where('deleted_at', 'is', null)
        .executeTakeFirstOrThrow();
      if (existing.n >= MAX_ENDPOINTS) throw invalid(undefined, `At most ${MAX_ENDPOINTS} webhook endpoints per mode`, 'webhook_endpoint_limit');
      const now = this.clock.now();
      const { id, reference } = newIdentity('webhookEndpoint');
      const values: WebhookEndpointsTable = {
        id,
        reference,
        merchant_id: scope.merchantId,
        mode: scope.mode,
        url: input.url,
        description: input.description ?? null,
        events: JSON.stringify(input.events ?? ['*']),
        status: 'active',
        secret: this.cipher.seal('webhook_endpoints.secret', id, secret),
        previous_secret: null,
        previous_secret_expires_at: null,
        // Events already written are not sent to an endpoint made after them.
        from_seq: await readCount(trx, scope.merchantId, scope.mode, 'events'),
        failing_since: null,
        disabled_reason: null,
        disabled_at: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      };
      await trx.insertInto('webhook_endpoints').values(values).execute();
      return values;
    });
    return presentEndpoint(row, secret);
  }

  async list(scope: Scope, request: PageRequest): Promise<Page<WebhookEndpoint>> {
    const base = this.store.db
      .selectFrom('webhook_endpoints')
      .where('merchant_id', '=', scope.merchantId)
      .where('mode', '=', scope.mode)
      .where('deleted_at', 'is', null);
    return offsetPage(base, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id'), request, (r) => presentEndpoint(r));
  }

  async get(scope: Scope, idOrReference: string): Promise<WebhookEndpoint> {
    const row = await findEndpointRow(this.store.db, scope, idOrReference);
    if (!row) throw notFound('id', 'webhook endpoint');
    return presentEndpoint(row);
  }

  async update(scope: Scope, idOrReference: string, input: UpdateWebhookEndpointInput): Promise<WebhookEndpoint> {
    if (input.url !== undefined) this.#checkUrl(scope, input.url);
    const row = await this.store.transaction(async (trx) => {
      const current = await findEndpointRow(trx, scope, idOrReference);
      if (!current) throw notFound('id', 'webhook endpoint');
      const now = this.clock.now();
      const next: WebhookEndpointsTable = { ...current, updated_at: now };
      if (input.url !== undefined) next.url = input.url;
      if (input.events !== undefined) next.events = JSON.stringify(input.events);
      if (input.description !== undefined) next.description = input.description;
      if (input.status === 'disabled' && current.status !== 'disabled') {
        Object.assign(next, { status: 'disabled', disabled_reason: 'disabled by the merchant', disabled_at: now });
      } else if (input.status === 'enabled' && current.status !== 'active') {
        Object.assign(next, { status: 'active', disabled_reason: null, disabled_at: null, failing_since: null });
      }
      await trx
        .updateTable('webhook_endpoints')
        .set({
          url: next.url,
          events: next.events,
          description: next.description,
          status: next.status,
          disabled_reason: next.disabled_reason,
          disabled_at: next.disabled_at,
          failing_since: next.failing_since,
          updated_at: now,
        })
        .where('id', '=', current.id)
        .execute();
      if (next.status === 'active' && current.status !== 'active') {
        // Deliveries held while it was disabled go out now, with their retry window intact.
        await trx
          .updateTable('webhook_deliveries')
          .set({ next_attempt_at: now })
          .where('endpoint_id', '=', current.id)
          .where('status', '=', PENDING_DELIVERY)
          .where('claimed_at', 'is', null)
          .execute();
        notifyOnCommit(trx, { topic: 'webhook_deliveries' });
      }
      return next;
    });
    return presentEndpoint(row);
  }

  /** Deleting stops deliveries; the endpoint's past attempts stay in the event log. */
  async delete(scope: Scope, idOrReference: string): Promise<{ id: string; object: 'webhook_endpoint'; deleted: true }> {
    const id = await this.store.transaction(async (trx) => {
      const current = await findEndpointRow(trx, scope, idOrReference);
      if (!current) throw notFound('id', 'webhook endpoint');
      const now = this.clock.now();
      await trx.updateTable('webhook_endpoints').set({ deleted_at: now, status: 'disabled', updated_at: now }).where('id', '=', current.id).execute();
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', last_error: 'endpoint deleted', completed_at: now, updated_at: now, claimed_at: null })
        .where('endpoint_id', '=', current.id)
        .where('status', '=', PENDING_DELIVERY)
        .execute();
      return current.id;
    });
    return { id, object: 'webhook_endpoint', deleted: true };
  }

  /** A new secret, shown once; the old one keeps signing alongside it for SECRET_ROLL_GRACE_MS. */
  async rollSecret(scope: Scope, idOrReference: string): Promise<WebhookEndpoint> {
    const secret = newSigningSecret();
    const row = await this.store.transaction(async (trx) => {
      const current = await findEndpointRow(trx, scope, idOrReference);
      if (!current) throw notFound('id', 'webhook endpoint');
      const now = this.clock.now();
      // Each sealed value is bound to its column: the old secret is opened and sealed again as the previous one.
      const previous = this.cipher.seal('webhook_endpoints.previous_secret', current.id, this.cipher.open('webhook_endpoints.secret', current.id, current.secret));
      const next: WebhookEndpointsTable = {
        ...current,
        secret: this.cipher.seal('webhook_endpoints.secret', current.id, secret),
        previous_secret: previous,
        previous_secret_expires_at: now + SECRET_ROLL_GRACE_MS,
        updated_at: now,
      };
      await trx
        .updateTable('webhook_endpoints')
        .set({ secret: next.secret, previous_secret: next.previous_secret, previous_secret_expires_at: next.previous_secret_expires_at, updated_at: now })
        .where('id', '=', current.id)
        .execute();
      return next;
    });
    return presentEndpoint(row, secret);
  }
}
