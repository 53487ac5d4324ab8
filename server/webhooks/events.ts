import { toIsoOrNull, toIsoTimestamp, type Clock } from '../../shared/time.js';
import type { EventsTable } from '../db/schema.js';
import { followNotices, notifyOnCommit } from '../db/notify.js';
import type { Store } from '../db/store.js';
import { conflict, notFound } from '../errors.js';
import type { EventDetail, WebhookDelivery, WebhookEvent } from '../../shared/contract/webhooks.js';
import { readCount } from '../db/counters.js';
import { offsetPage, type Page, type PageRequest, seqPage, toPage } from '../pagination.js';
import type { Scope } from '../accounts/scope.js';
import { findEndpointRow } from './endpoints.js';
import { eventData, eventMode, eventRequest } from './outbox.js';
import type { FieldCipher } from '../db/encryption.js';
import { newDelivery } from './queue.js';

/** The event columns an event's JSON is made of. */
export const EVENT_COLUMNS = ['id', 'type', 'created_at', 'data', 'request_id', 'idempotency_key'] as const;

export function presentEvent(row: Pick<EventsTable, (typeof EVENT_COLUMNS)[number]>, cipher: FieldCipher): WebhookEvent {
  const data = eventData(cipher, row);
  return { id: row.id, type: row.type, mode: eventMode(data), created_at: toIsoTimestamp(row.created_at), request: eventRequest(row), data };
}

/** A page of the event log, with how far back the log reaches (docs/webhooks.md, "Retention"). */
export type EventPage = Page<WebhookEvent> & { retention_days: number; available_since: string };

/** Events written per read while a stream catches up. */
const STREAM_BATCH = 100;

/** Events are looked up by their `evt_` id only: anything else cannot be one. */
const EVENT_ID = /^evt_[A-Za-z0-9]{1,64}$/;

/** The event log (spec §6): what was emitted, and what became of each delivery. */
export class EventService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly cipher: FieldCipher,
    /** How long events are kept: the list says how far back it reaches (server/retention.ts). */
    private readonly retention: { eventsMs: number } = { eventsMs: 30 * 86_400_000 },
  ) {}

  #present = (row: Pick<EventsTable, (typeof EVENT_COLUMNS)[number]>): WebhookEvent => presentEvent(row, this.cipher);

  /**
   * `visible` is the event types the caller may see (server/accounts/visibility.ts), or `all`. The
   * filter is in the query, so pages and counts are of visible events only.
   */
  async list(scope: Scope, request: PageRequest, type?: string, visible: readonly string[] | 'all' = 'all'): Promise<EventPage> {
    const reach = { retention_days: Math.round(this.retention.eventsMs / 86_400_000), available_since: toIsoTimestamp(this.clock.now() - this.retention.eventsMs) };
    return { ...(await this.#list(scope, request, type, visible)), ...reach };
  }

  async #list(scope: Scope, request: PageRequest, type: string | undefined, visible: readonly string[] | 'all'): Promise<Page<WebhookEvent>> {
    const db = this.store.db;
    if (type === undefined && visible === 'all') {
      // Retention deletes each scope's oldest events, 1…pruned: the list is of the rest.
      const pruned = await readCount(db, scope.merchantId, scope.mode, 'events:pruned');
      return seqPage(db, 'events', scope, request, this.#present, undefined, pruned);
    }
    const types = type === undefined ? visible : visible === 'all' || visible.includes(type) ? [type] : [];
    if (types === 'all' || types.length === 0) return toPage([], 0, request);
    const base = db.selectFrom('events').where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode).where('type', 'in', types);
    return offsetPage(base, (q) => q.select(EVENT_COLUMNS).orderBy('seq', 'desc'), request, this.#present);
  }

  async #row(scope: Scope, id: string, visible: readonly string[] | 'all' = 'all'): Promise<EventsTable> {
    const row = EVENT_ID.test(id)
      ? await this.store.db.selectFrom('events').selectAll().where('id', '=', id).where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode).executeTakeFirst()
      : undefined;
    // An event the caller may not see is as unknown as one that does not exist.
    if (!row || (visible !== 'all' && !visible.includes(row.type))) throw notFound('id', 'event');
    return row;
  }

  async get(scope: Scope, id: string, visible: readonly string[] | 'all' = 'all'): Promise<EventDetail> {
    const row = await this.#row(scope, id, visible);
    const deliveries = await this.store.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select(['d.id', 'd.endpoint_id', 'e.url', 'd.status', 'd.manual', 'd.attempts', 'd.next_attempt_at', 'd.created_at'])
      .where('d.event_id', '=', row.id)
      .orderBy('d.created_at')
      .orderBy('d.id')
      .execute();
    const attempts =
      deliveries.length === 0
        ? []
        : await this.store.db
            .selectFrom('webhook_attempts')
            .selectAll()
            .where(
              'delivery_id',
              'in',
              deliveries.map((d) => d.id),
            )
            .orderBy('attempted_at')
            .execute();
    const presented: WebhookDelivery[] = deliveries.map((d) => ({
      id: d.id,
      endpoint_id: d.endpoint_id,
      endpoint_url: d.url,
      status: d.status,
      manual: Boolean(d.manual),
      attempt_count: d.attempts,
      next_attempt_at: d.status === 'pending' ? toIsoOrNull(d.next_attempt_at) : null,
      attempts: attempts
        .filter((a) => a.delivery_id === d.id)
        .map((a) => ({
          attempted_at: toIsoTimestamp(a.attempted_at),
          status_code: a.status_code,
          latency_ms: a.latency_ms,
          error: a.error,
        })),
    }));
    return { ...this.#present(row), deliveries: presented };
  }

  /** One more delivery of the event to one endpoint, now, outside the retry schedule (a single attempt). */
  async resend(scope: Scope, id: string, endpointIdOrReference: string): Promise<EventDetail> {
    const event = await this.#row(scope, id);
    await this.store.transaction(async (trx) => {
      const endpoint = await findEndpointRow(trx, scope, endpointIdOrReference);
      if (!endpoint) throw notFound('endpoint_id', 'webhook endpoint');
      if (endpoint.status !== 'active') throw conflict('endpoint_disabled', 'The webhook endpoint is disabled: enable it first');
      if (endpoint.mode === 'live' && eventMode(eventData(this.cipher, event)) !== 'live') {
        throw conflict('event_mode_unknown', 'The event does not say it is live (its data has no is_test): it is never sent to a live endpoint');
      }
      await trx.insertInto('webhook_deliveries').values(newDelivery(event.id, endpoint.id, event.object_id, event.seq, true, this.clock.now())).execute();
      notifyOnCommit(trx, { topic: 'webhook_deliveries' });
    });
    return this.get(scope, id);
  }

  /** The newest event's seq in the scope: a stream starts after it. */
  async currentSeq(scope: Scope): Promise<number> {
    return readCount(this.store.db, scope.merchantId, scope.mode, 'events');
  }

  /** The seq of an event the client saw last (SSE Last-Event-ID), if it is one of the scope's. */
  async seqOf(scope: Scope, id: string): Promise<number | undefined> {
    if (!EVENT_ID.test(id)) return undefined;
    const row = await this.store.db.selectFrom('events').select('seq').where('id', '=', id).where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode).executeTakeFirst();
    return row ? row.seq : undefined;
  }

  async after(scope: Scope, seq: number, limit: number, visible: readonly string[] | 'all' = 'all'): Promise<(WebhookEvent & { seq: number })[]> {
    if (visible !== 'all' && visible.length === 0) return [];
    let query = this.store.db
      .selectFrom('events')
      .select([...EVENT_COLUMNS, 'seq'])
      .where('merchant_id', '=', scope.merchantId)
      .where('mode', '=', scope.mode)
      .where('seq', '>', seq);
    if (visible !== 'all') query = query.where('type', 'in', visible);
    const rows = await query.orderBy('seq').limit(limit).execute();
    return rows.map((r) => ({ ...this.#present(r), seq: r.seq }));
  }

  /**
   * Follows the scope's events after `seq` (an event stream): `deliver` gets them in order, in
   * batches, now and after each commit that wrote more; nothing is read while nothing is written.
   * `failed` hears of a read that failed (the read is retried unless the caller stops). Only events
   * of the `visible` types are read. Returns stop.
   */
  follow(scope: Scope, seq: number, deliver: (events: WebhookEvent[]) => void, failed: (error: unknown) => void, visible: readonly string[] | 'all' = 'all'): () => void {
    let cursor = seq;
    const notice = { topic: 'events', merchantId: scope.merchantId, mode: scope.mode } as const;
    return followNotices(
      this.store.notifications,
      notice,
      async () => {
        const batch = await this.after(scope, cursor, STREAM_BATCH, visible);
        if (batch.length === 0) return false;
        cursor = batch[batch.length - 1]!.seq;
        deliver(batch.map(({ seq: _seq, ...event }) => event));
        return batch.length === STREAM_BATCH;
      },
      failed,
    );
  }
}

/** Open event streams, so a stopping server can end them instead of waiting for clients to leave. */
export class EventStreams {
  readonly #open = new Set<() => void>();

  add(close: () => void): () => void {
    this.#open.add(close);
    return () => this.#open.delete(close);
  }

  get size(): number {
    return this.#open.size;
  }

  closeAll(): void {
    for (const close of [...this.#open]) close();
    this.#open.clear();
  }
}
