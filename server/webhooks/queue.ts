import { timeOrderedUuid } from '../../shared/ids.js';
import { toIsoTimestamp, type Clock } from '../../shared/time.js';
import type { EventsTable, Mode, WebhookAttemptsTable, WebhookDeliveriesTable, WebhookEndpointsTable } from '../db/schema.js';
import type { Db, Executor, Store, Trx } from '../db/store.js';
import { notifyOnCommit } from '../db/notify.js';
import { insertRows, PreparedLists } from '../db/prepared.js';
import { filterMatches, PENDING_DELIVERY, presentEndpoint } from './endpoints.js';
import { eventData, eventDataText, eventMode, eventRequest, recordEvent } from './outbox.js';
import type { Logger } from 'pino';
import { noMetrics, type Metrics } from '../operations/metrics.js';
import type { FieldCipher } from '../db/encryption.js';
import { nextAttemptAt, retryWindow } from './schedule.js';

/**
 * The database side of webhook delivery. Every step is done within a transaction (the worker's
 * pass runs several in one, to share its commit), so a process killed at any point leaves either
 * the step done or not started, and the next run carries on from the tables:
 *
 * 1. fan-out: new `events` rows (past each merchant's and mode's cursor) become one pending
 *    delivery per matching active endpoint of the same merchant and mode, and the cursor moves;
 * 2. claim: due deliveries are leased to this worker (next_attempt_at pushed to the lease's end, so
 *    a lease lost with its process simply comes due again);
 * 3. record: each attempt's outcome is stored, and the delivery is done, retried later, or given up.
 */

/** Events turned into deliveries per transaction: keeps each write short while a backlog drains. */
const FANOUT_BATCH = 500;
/** Merchant-and-mode pairs looked at per fan-out pass. */
const FANOUT_SCOPES = 100;
/**
 * Candidates read per claim beyond its slots: some are held back by ordering or by a busy
 * endpoint, and reading a few more avoids a second round trip. A small claim reads up to four
 * per slot; a large one (an endpoint drawing down a backlog) no more than this many extra, since
 * every candidate read is a row joined and returned, and the few held back are read by the next.
 */
const CANDIDATES_PER_SLOT = 4;
const CANDIDATES_EXTRA = 64;

export interface ClaimedDelivery {
  deliveryId: string;
  endpointId: string;
  /** The endpoint's mode: which egress rule its URL must satisfy. */
  mode: Mode;
  url: string;
  /** Current secret first; the previous one during a roll. */
  secrets: string[];
  eventId: string;
  eventCreatedAt: number;
  objectId: string | null;
  manual: boolean;
  attempts: number;
  /** The exact body sent on every attempt. */
  body: string;
  /** When the lease ends (epoch ms): past it another worker may claim the delivery, so it must not be sent late. */
  leaseEnd: number;
}

/** What one claim may take. */
export interface ClaimRequest {
  slots: number;
  /** Endpoints at their limit already: not looked at. */
  busy: ReadonlySet<string>;
  /** Deliveries this worker holds per endpoint (sending or about to). */
  held: ReadonlyMap<string, number>;
  /** How many deliveries this worker may hold for an endpoint. */
  limitOf: (endpointId: string) => number;
  leaseMs: number;
}

export interface AttemptOutcome {
  delivery: ClaimedDelivery;
  attemptedAt: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  retryAfterMs?: number | undefined;
}

export function isSuccess(statusCode: number | null): boolean {
  return statusCode !== null && statusCode >= 200 && statusCode < 300;
}

/**
 * The body of every delivery of an event: `{id, type, created_at, request, data}`. The stored data
 * is JSON.stringify's own text (server/webhooks/outbox.ts), so it goes in as it is: parsing it only
 * to write it out again gives back the same text, at a cost per delivery.
 */
export function eventBody(row: { id: string; type: string; created_at: number; data: string; request_id: string | null; idempotency_key: string | null }, cipher: FieldCipher): string {
  const head = JSON.stringify({ id: row.id, type: row.type, created_at: toIsoTimestamp(row.created_at), request: eventRequest(row) });
  return `${head.slice(0, -1)},"data":${eventDataText(cipher, row)}}`;
}

/**
 * Endpoints whose decrypted secrets are kept: a worker signs for a few endpoints at a time, and an
 * AES-GCM open per delivery is wasted work; past this many the cache simply starts over.
 */
const SECRET_CACHE_ENDPOINTS = 1_000;

/**
 * Ids per `IN (...)` list: well under SQLite's bound-parameter limit, and short statements for
 * PostgreSQL; a power of two, the longest length lists are compiled at (server/db/prepared.ts).
 */
const IN_CHUNK = 512;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** A claimed delivery as read: what it is sent with, from its endpoint and its event. */
type ClaimedRow = Pick<WebhookDeliveriesTable, 'endpoint_id' | 'object_id' | 'manual' | 'attempts'> &
  Pick<WebhookEndpointsTable, 'url' | 'mode' | 'secret' | 'previous_secret' | 'previous_secret_expires_at'> &
  Pick<EventsTable, 'type' | 'created_at' | 'data' | 'request_id' | 'idempotency_key'> & { delivery_id: string; event_id: string };

interface CandidateArgs {
  now: number;
  limit: number;
}
type Candidate = ClaimedRow & Pick<WebhookDeliveriesTable, 'event_seq'>;

/** Completed deliveries whose successors may go now: object ids by endpoint. */
type Finished = Map<string, Set<string>>;

/** Notes a completed delivery that keeps its object's order; false for one that does not (a resend, an event about no object). */
function finish(finished: Finished, d: ClaimedDelivery): boolean {
  if (d.manual || d.objectId === null) return false;
  const objects = finished.get(d.endpointId);
  if (objects) objects.add(d.objectId);
  else finished.set(d.endpointId, new Set([d.objectId]));
  return true;
}

/** An endpoint this batch disabled, told to the operator once its transaction committed. */
interface Disabled {
  endpointId: string;
  merchantId: string;
  mode: Mode;
  url: string;
  reason: 'gone' | 'failing';
  words: string;
}

export class WebhookQueue {
  /** Decrypted secrets by endpoint, valid while the stored ciphertexts are the same (a roll changes them). */
  readonly #secrets = new Map<string, { sealed: string; previous: string | null; secret: string; previousSecret: string | null }>();

  /*
   * The statements every pass runs, compiled once (per length of their lists) instead of built for
   * each pass: for a backlog, building them cost more than SQLite took to run them.
   */

  /**
   * Due deliveries to active endpoints, oldest due first, locked on PostgreSQL, with what each is
   * sent with (its endpoint and its event): most candidates are taken, and reading them again by id
   * once leased cost more than reading the few left over.
   */
  readonly #candidatesQuery = (db: Db, arg: <K extends keyof CandidateArgs>(name: K) => CandidateArgs[K]) =>
    db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .innerJoin('events as v', 'v.id', 'd.event_id')
      .select([
        'd.id as delivery_id',
        'd.endpoint_id',
        'd.object_id',
        'd.event_seq',
        'd.manual',
        'd.attempts',
        'e.url',
        'e.mode',
        'e.secret',
        'e.previous_secret',
        'e.previous_secret_expires_at',
        'v.id as event_id',
        'v.type',
        'v.created_at',
        'v.data',
        'v.request_id',
        'v.idempotency_key',
      ])
      .where('d.status', '=', PENDING_DELIVERY)
      .where('d.next_attempt_at', '<=', arg('now'))
      .where('e.status', '=', 'active')
      .orderBy('d.next_attempt_at')
      .limit(arg('limit'))
      .$if(this.store.dialect === 'postgres', (qb) => qb.forUpdate('d').skipLocked());
  readonly #candidates = new PreparedLists<CandidateArgs, never, Candidate>((db, arg) => this.#candidatesQuery(db, arg));
  /** The same, leaving out the `busy` endpoints. */
  readonly #candidatesNotBusy = new PreparedLists<CandidateArgs, 'busy', Candidate>((db, arg, list) => this.#candidatesQuery(db, arg).where('d.endpoint_id', 'not in', list('busy')));

  readonly #firstPendingOf = new PreparedLists<object, 'endpoints' | 'objects', { endpoint_id: string; object_id: string | null; first_seq: number }>((db, _arg, list) =>
    db
      .selectFrom('webhook_deliveries')
      .select(['endpoint_id', 'object_id', (eb) => eb.fn.min('event_seq').as('first_seq')])
      .where('status', '=', PENDING_DELIVERY)
      .where('manual', '=', 0)
      .where('endpoint_id', 'in', list('endpoints'))
      .where('object_id', 'in', list('objects'))
      .groupBy(['endpoint_id', 'object_id']),
  );

  /** Pushes deliveries' next attempt to `at`; with `claimedAt`, leases them (claimed_at is then not null). */
  readonly #postpone = new PreparedLists<{ at: number }, 'ids', never>((db, arg, list) => db.updateTable('webhook_deliveries').set({ next_attempt_at: arg('at') }).where('id', 'in', list('ids')));
  readonly #lease = new PreparedLists<{ at: number; claimedAt: number }, 'ids', never>((db, arg, list) =>
    db.updateTable('webhook_deliveries').set({ claimed_at: arg('claimedAt'), next_attempt_at: arg('at') }).where('id', 'in', list('ids')),
  );

  readonly #markDelivered = new PreparedLists<{ attempts: number; statusCode: number | null; error: string | null; now: number }, 'ids', never>((db, arg, list) =>
    db
      .updateTable('webhook_deliveries')
      .set({ attempts: arg('attempts'), claimed_at: null, last_status_code: arg('statusCode'), last_error: arg('error'), updated_at: arg('now'), status: 'delivered', completed_at: arg('now') })
      .where('id', 'in', list('ids')),
  );

  readonly #notFailing = new PreparedLists<object, 'ids', never>((db, _arg, list) =>
    db.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', 'in', list('ids')).where('failing_since', 'is not', null),
  );

  readonly #wakeSuccessorsStatement = new PreparedLists<{ endpointId: string; now: number }, 'objects', never>((db, arg, list) =>
    db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: arg('now') })
      .where('endpoint_id', '=', arg('endpointId'))
      .where('object_id', 'in', list('objects'))
      .where('status', '=', PENDING_DELIVERY)
      .where('manual', '=', 0)
      .where('attempts', '=', 0)
      .where('claimed_at', 'is', null),
  );

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly scale: number,
    private readonly cipher: FieldCipher,
    /** Where a disabled endpoint is told besides its merchant's other endpoints; none in unit tests. */
    private readonly operator: { logger?: Logger; metrics: Metrics } = { metrics: noMetrics },
  ) {}

  /** Turns new events into deliveries, a transaction per merchant and mode; returns how many deliveries it made. */
  async fanOut(): Promise<number> {
    let made = 0;
    for (const scope of await this.#behind()) made += await this.store.transaction((trx) => this.#fanOutScope(trx, scope.merchant_id, scope.mode));
    return made;
  }

  /** Merchant-and-mode pairs with events their fan-out has not seen. */
  #behind(): Promise<{ merchant_id: string; mode: Mode }[]> {
    return this.store.db
      .selectFrom('counters as c')
      .leftJoin('webhook_cursors as w', (join) => join.onRef('w.merchant_id', '=', 'c.merchant_id').onRef('w.mode', '=', 'c.mode'))
      .select(['c.merchant_id', 'c.mode'])
      .where('c.name', '=', 'events')
      .where((eb) => eb.or([eb('w.last_seq', 'is', null), eb('c.value', '>', eb.ref('w.last_seq'))]))
      .limit(FANOUT_SCOPES)
      .execute();
  }

  async #fanOutScope(trx: Trx, merchantId: string, mode: Mode): Promise<number> {
    await trx
      .insertInto('webhook_cursors')
      .values({ merchant_id: merchantId, mode, last_seq: 0 })
      .onConflict((oc) => oc.columns(['merchant_id', 'mode']).doNothing())
      .execute();
    const cursor = await trx
      .selectFrom('webhook_cursors')
      .select('last_seq')
      .where('merchant_id', '=', merchantId)
      .where('mode', '=', mode)
      .$if(this.store.dialect === 'postgres', (qb) => qb.forUpdate())
      .executeTakeFirstOrThrow();
    const from = cursor.last_seq;
    const endpoints = await trx
      .selectFrom('webhook_endpoints')
      .select(['id', 'events', 'from_seq'])
      .where('merchant_id', '=', merchantId)
      .where('mode', '=', mode)
      .where('status', '=', 'active')
      .where('deleted_at', 'is', null)
      .execute();
    let lastSeq: number;
    const rows: WebhookDeliveriesTable[] = [];
    if (endpoints.length === 0) {
      // Nobody listens: skip straight to the newest event instead of reading the backlog.
      const counter = await trx.selectFrom('counters').select('value').where('merchant_id', '=', merchantId).where('mode', '=', mode).where('name', '=', 'events').executeTakeFirst();
      lastSeq = Number(counter?.value ?? from);
    } else {
      const events = await trx
        .selectFrom('events')
        .select(['id', 'seq', 'type', 'object_id', 'data'])
        .where('merchant_id', '=', merchantId)
        .where('mode', '=', mode)
        .where('seq', '>', from)
        .orderBy('seq')
        .limit(FANOUT_BATCH)
        .execute();
      if (events.length === 0) return 0;
      lastSeq = Number(events[events.length - 1]?.seq);
      const now = this.clock.now();
      const filters = endpoints.map((e) => ({ id: e.id, fromSeq: Number(e.from_seq), filter: JSON.parse(e.events) as string[] }));
      for (const event of events) {
        // Spec §6.6: an event whose data does not say it is live (stored without is_test) never goes to a live endpoint.
        if (mode === 'live' && eventMode(eventData(this.cipher, event)) !== 'live') continue;
        const seq = event.seq;
        for (const endpoint of filters) {
          if (seq <= endpoint.fromSeq || !filterMatches(endpoint.filter, event.type)) continue;
          rows.push(newDelivery(event.id, endpoint.id, event.object_id, seq, false, now));
        }
      }
    }
    await insertRows(trx, 'webhook_deliveries', rows);
    if (lastSeq > from) await trx.updateTable('webhook_cursors').set({ last_seq: lastSeq }).where('merchant_id', '=', merchantId).where('mode', '=', mode).execute();
    return rows.length;
  }

  /**
   * After a crash of the only worker on an SQLite data dir, nothing holds its leases any more: they
   * are released at once instead of waiting for them to run out. (With PostgreSQL several workers
   * may share the queue, so there leases simply expire.)
   */
  async releaseStaleClaims(): Promise<number> {
    if (this.store.dialect !== 'sqlite') return 0;
    const now = this.clock.now();
    const result = await this.store.db
      .updateTable('webhook_deliveries')
      .set({ claimed_at: null, next_attempt_at: now })
      .where('status', '=', PENDING_DELIVERY)
      .where('claimed_at', 'is not', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /**
   * Leases up to `slots` due deliveries. Skips endpoints in `busy` (at their concurrency limit), and
   * holds back a delivery while an earlier event about the same object is still pending to the same
   * endpoint: `payment.created` reaches an endpoint before that payment's later events.
   */
  async claim(request: ClaimRequest): Promise<ClaimedDelivery[]> {
    return (await this.pass({ outcomes: [], released: [], claim: request })).claimed;
  }

  /**
   * One step of the worker in one transaction, so one commit: stores finished attempts' outcomes,
   * gives back deliveries claimed but not sent, with `fanOut` turns new events into deliveries
   * first (as `fanOut()` does, sharing the commit on SQLite), and claims more.
   * `woken`: deliveries made due just after the commit (successors of the completions), for the
   * caller to claim at once.
   */
  async pass(work: { outcomes: readonly AttemptOutcome[]; released: readonly ClaimedDelivery[]; claim?: ClaimRequest | undefined; fanOut?: boolean }): Promise<{ claimed: ClaimedDelivery[]; woken: number }> {
    // On PostgreSQL each scope's fan-out commits on its own, before the claim: a delivery fanned
    // out and held back for an earlier event in one transaction would be invisible to the wake
    // another instance runs once it has completed that earlier event (#wakeSuccessorsAfterCommit),
    // and would then wait for its lease to run out. On SQLite one process runs every transaction
    // alone, so the fan-out shares the pass's commit.
    const separate = work.fanOut === true && this.store.dialect !== 'sqlite';
    if (separate) await this.fanOut();
    const behind = work.fanOut && !separate ? await this.#behind() : [];
    if (work.outcomes.length === 0 && work.released.length === 0 && (!work.claim || work.claim.slots <= 0) && behind.length === 0) return { claimed: [], woken: 0 };
    const disabled: Disabled[] = [];
    const finished: Finished = new Map();
    const claimed = await this.store.transaction(async (trx) => {
      const now = this.clock.now();
      if (work.outcomes.length > 0) await this.#recordIn(trx, work.outcomes, now, disabled, finished);
      if (work.released.length > 0) await this.#release(trx, work.released, now);
      for (const scope of behind) await this.#fanOutScope(trx, scope.merchant_id, scope.mode);
      return work.claim && work.claim.slots > 0 ? this.#claimIn(trx, work.claim) : [];
    });
    this.#tellDisabled(disabled);
    const woken = finished.size > 0 ? await this.#wakeSuccessorsAfterCommit(finished) : 0;
    return { claimed, woken };
  }

  /**
   * Wakes, once the completions are committed, the successors another instance held back while
   * they were not (PostgreSQL only). The wake inside the transaction cannot see a successor that
   * another instance fanned out after it ran and then claimed before the commit: that instance
   * still read the predecessor as pending and set its successor to wait for a lease. Any such
   * claim locked the successor before the commit, so this statement, after it, either sees the
   * wait or waits for that claim's commit and then sees it. With one process on SQLite every
   * transaction runs alone and the wake inside it is enough. A failure here costs only time: the
   * successor's lease-length recheck still comes.
   */
  async #wakeSuccessorsAfterCommit(finished: Finished): Promise<number> {
    if (this.store.dialect !== 'postgres') return 0;
    let woken = 0;
    try {
      const now = this.clock.now();
      for (const [endpointId, objectIds] of finished) {
        for (const part of chunks([...objectIds], IN_CHUNK)) woken += await this.#wakeSuccessorsOf(this.store.db, endpointId, part, now);
      }
    } catch (err) {
      this.operator.logger?.warn({ err }, 'could not wake webhook deliveries waiting for ones just completed; they go at their lease-length recheck');
    }
    return woken;
  }

  async #claimIn(trx: Trx, { slots, busy, held, limitOf, leaseMs }: ClaimRequest): Promise<ClaimedDelivery[]> {
    const now = this.clock.now();
    const args = { now, limit: slots + Math.min(slots * (CANDIDATES_PER_SLOT - 1), CANDIDATES_EXTRA) };
    const { rows: candidates } = busy.size > 0 ? await this.#candidatesNotBusy.execute(trx, args, { busy: [...busy] }) : await this.#candidates.execute(trx, args, {});
    if (candidates.length === 0) return [];

    const taken: Candidate[] = [];
    const waiting: string[] = [];
    const load = new Map(held);
    let rest = candidates;
    // Candidates are taken up to each endpoint's limit first, and only those are checked for an
    // earlier pending event about the same object: the check costs a lookup per object, and most
    // candidates are beyond what the endpoints can take. A candidate held back frees its place.
    while (taken.length < slots && rest.length > 0) {
      const tentative: typeof candidates = [];
      const later: typeof candidates = [];
      for (const c of rest) {
        const n = load.get(c.endpoint_id) ?? 0;
        if (taken.length + tentative.length >= slots || n >= limitOf(c.endpoint_id)) {
          later.push(c);
          continue;
        }
        load.set(c.endpoint_id, n + 1);
        tentative.push(c);
      }
      if (tentative.length === 0) break;
      rest = later;
      const firstPending = await this.#firstPending(trx, tentative);
      for (const c of tentative) {
        const head = c.manual || c.object_id === null ? undefined : firstPending.get(`${c.endpoint_id}|${c.object_id}`);
        if (head !== undefined && head < c.event_seq) {
          waiting.push(c.delivery_id);
          load.set(c.endpoint_id, (load.get(c.endpoint_id) ?? 1) - 1);
        } else taken.push(c);
      }
    }
    // Held back by an earlier event: woken when that one completes (see #wakeSuccessors); the
    // lease-length recheck is only a safety net.
    for (const part of chunks(waiting, IN_CHUNK)) await this.#postpone.execute(trx, { at: now + leaseMs }, { ids: part });
    if (taken.length === 0) return [];
    for (const part of chunks(taken.map((c) => c.delivery_id), IN_CHUNK)) await this.#lease.execute(trx, { at: now + leaseMs, claimedAt: now }, { ids: part });
    return taken.map((r) => {
      const keys = this.#openSecrets(r.endpoint_id, r.secret, r.previous_secret);
      const secrets = [keys.secret];
      if (keys.previousSecret !== null && r.previous_secret_expires_at !== null && r.previous_secret_expires_at > now) secrets.push(keys.previousSecret);
      return {
        deliveryId: r.delivery_id,
        endpointId: r.endpoint_id,
        mode: r.mode,
        url: r.url,
        secrets,
        eventId: r.event_id,
        eventCreatedAt: r.created_at,
        objectId: r.object_id,
        manual: Boolean(r.manual),
        attempts: r.attempts,
        body: eventBody({ id: r.event_id, type: r.type, created_at: r.created_at, data: r.data, request_id: r.request_id, idempotency_key: r.idempotency_key }, this.cipher),
        leaseEnd: now + leaseMs,
      };
    });
  }

  /** The earliest pending event per endpoint and object among `candidates` that keep their order. */
  async #firstPending(trx: Trx, candidates: readonly { endpoint_id: string; object_id: string | null; manual: number }[]): Promise<Map<string, number>> {
    const firstPending = new Map<string, number>();
    const ordered = candidates.filter((c) => !c.manual && c.object_id !== null);
    if (ordered.length === 0) return firstPending;
    const { rows: heads } = await this.#firstPendingOf.execute(
      trx,
      {},
      { endpoints: [...new Set(ordered.map((c) => c.endpoint_id))], objects: [...new Set(ordered.map((c) => c.object_id as string))] },
    );
    for (const h of heads) firstPending.set(`${h.endpoint_id}|${h.object_id}`, h.first_seq);
    return firstPending;
  }

  #openSecrets(endpointId: string, sealed: string, previous: string | null): { secret: string; previousSecret: string | null } {
    const cached = this.#secrets.get(endpointId);
    if (cached && cached.sealed === sealed && cached.previous === previous) return cached;
    if (this.#secrets.size >= SECRET_CACHE_ENDPOINTS) this.#secrets.clear();
    const opened = {
      sealed,
      previous,
      secret: this.cipher.open('webhook_endpoints.secret', endpointId, sealed),
      previousSecret: previous ? this.cipher.open('webhook_endpoints.previous_secret', endpointId, previous) : null,
    };
    this.#secrets.set(endpointId, opened);
    return opened;
  }

  /**
   * Claimed deliveries this worker will not send after all: due again at once. Only while the lease
   * is still ours (the row still carries our deadline): a lease that ran out may be another's now.
   */
  async #release(trx: Trx, released: readonly ClaimedDelivery[], now: number): Promise<void> {
    const byLease = new Map<number, string[]>();
    for (const d of released) byLease.set(d.leaseEnd, [...(byLease.get(d.leaseEnd) ?? []), d.deliveryId]);
    for (const [leaseEnd, ids] of byLease) {
      for (const part of chunks(ids, IN_CHUNK)) {
        await trx
          .updateTable('webhook_deliveries')
          .set({ claimed_at: null, next_attempt_at: now })
          .where('id', 'in', part)
          .where('status', '=', PENDING_DELIVERY)
          .where('next_attempt_at', '=', leaseEnd)
          .execute();
      }
    }
    notifyOnCommit(trx, { topic: 'webhook_deliveries' });
  }

  /**
   * When the next delivery this worker could claim comes due (epoch ms), or null when none is
   * pending: the worker sleeps until then or until a notice. Endpoints in `busy` are left out: a
   * request of theirs finishing wakes the worker anyway.
   */
  async nextDueAt(busy: ReadonlySet<string>): Promise<number | null> {
    const row = await this.store.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .select((eb) => eb.fn.min('d.next_attempt_at').as('at'))
      .where('d.status', '=', PENDING_DELIVERY)
      .where('e.status', '=', 'active')
      .$if(busy.size > 0, (qb) => qb.where('d.endpoint_id', 'not in', [...busy]))
      .executeTakeFirst();
    return row?.at === null || row?.at === undefined ? null : Number(row.at);
  }

  /** Stores a batch of attempt outcomes in one transaction. */
  async record(outcomes: readonly AttemptOutcome[]): Promise<void> {
    await this.pass({ outcomes, released: [] });
  }

  async #recordIn(trx: Trx, outcomes: readonly AttemptOutcome[], now: number, disabled: Disabled[], finished: Finished): Promise<void> {
    // A batch with a failure in it goes one outcome at a time, in order: a failure and a success
    // on one endpoint must leave its failing_since as their order says.
    if (outcomes.every((o) => isSuccess(o.statusCode))) await this.#recordDelivered(trx, outcomes, now, finished);
    else for (const o of outcomes) await this.#recordOne(trx, o, now, disabled, finished);
  }

  /** Successful attempts, the common case, in a few statements for the whole batch. */
  async #recordDelivered(trx: Trx, outcomes: readonly AttemptOutcome[], now: number, finished: Finished): Promise<void> {
    await insertRows(
      trx,
      'webhook_attempts',
      outcomes.map((o) => this.#attemptRow(o)),
    );
    const groups = new Map<string, { attempts: number; statusCode: number | null; error: string | null; ids: string[] }>();
    for (const o of outcomes) {
      const attempts = o.delivery.attempts + 1;
      const key = JSON.stringify([attempts, o.statusCode, o.error]);
      const group = groups.get(key) ?? { attempts, statusCode: o.statusCode, error: o.error, ids: [] };
      group.ids.push(o.delivery.deliveryId);
      groups.set(key, group);
    }
    for (const g of groups.values()) {
      for (const part of chunks(g.ids, IN_CHUNK)) await this.#markDelivered.execute(trx, { attempts: g.attempts, statusCode: g.statusCode, error: g.error, now }, { ids: part });
    }
    const endpoints = [...new Set(outcomes.map((o) => o.delivery.endpointId))];
    for (const part of chunks(endpoints, IN_CHUNK)) await this.#notFailing.execute(trx, {}, { ids: part });
    for (const { delivery: d } of outcomes) finish(finished, d);
    for (const [endpointId, objectIds] of finished) {
      for (const part of chunks([...objectIds], IN_CHUNK)) await this.#wakeSuccessorsOf(trx, endpointId, part, now);
    }
  }

  #attemptRow(o: AttemptOutcome): WebhookAttemptsTable {
    const d = o.delivery;
    return {
      id: timeOrderedUuid(o.attemptedAt),
      delivery_id: d.deliveryId,
      event_id: d.eventId,
      endpoint_id: d.endpointId,
      attempted_at: o.attemptedAt,
      status_code: o.statusCode,
      latency_ms: Math.round(o.latencyMs),
      error: o.error,
    };
  }

  #tellDisabled(disabled: readonly Disabled[]): void {
    for (const d of disabled) {
      this.operator.metrics.endpointDisabled(d.reason);
      this.operator.logger?.warn({ endpoint_id: d.endpointId, merchant_id: d.merchantId, mode: d.mode, url: d.url, reason: d.words }, 'webhook endpoint disabled: its deliveries failed');
    }
  }

  /** Pending deliveries and when the oldest of them came due: the backlog an operator watches. */
  async backlog(): Promise<{ depth: number; oldestDueAt: number | null }> {
    const row = await this.store.db
      .selectFrom('webhook_deliveries')
      .select((eb) => [eb.fn.countAll<number | string | bigint>().as('depth'), eb.fn.min('next_attempt_at').as('oldest')])
      .where('status', '=', PENDING_DELIVERY)
      .executeTakeFirst();
    const oldest = row?.oldest;
    return { depth: Number(row?.depth ?? 0), oldestDueAt: oldest === null || oldest === undefined ? null : Number(oldest) };
  }

  async #recordOne(trx: Trx, o: AttemptOutcome, now: number, disabled: Disabled[], finished: Finished): Promise<void> {
    const d = o.delivery;
    await trx.insertInto('webhook_attempts').values(this.#attemptRow(o)).execute();
    const attempts = d.attempts + 1;
    const common = { attempts, claimed_at: null, last_status_code: o.statusCode, last_error: o.error, updated_at: now };
    const endpoint = await trx.selectFrom('webhook_endpoints').select(['status', 'failing_since']).where('id', '=', d.endpointId).executeTakeFirst();

    if (isSuccess(o.statusCode)) {
      await trx.updateTable('webhook_deliveries').set({ ...common, status: 'delivered', completed_at: now }).where('id', '=', d.deliveryId).execute();
      if (endpoint?.failing_since !== null) await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', d.endpointId).execute();
      await this.#wakeSuccessors(trx, d, now, finished);
      return;
    }

    const what = o.statusCode !== null ? `HTTP ${o.statusCode}${o.error ? ` (${o.error})` : ''}` : (o.error ?? 'no answer');
    if (o.statusCode === 410) {
      // 410 Gone: the receiver says this endpoint no longer exists.
      await this.#disable(trx, d.endpointId, `the endpoint answered 410 Gone at ${toIsoTimestamp(o.attemptedAt)}`, now, 'gone', disabled);
    } else if (endpoint && endpoint.status === 'active') {
      const since = endpoint.failing_since === null ? o.attemptedAt : endpoint.failing_since;
      if (endpoint.failing_since === null) await trx.updateTable('webhook_endpoints').set({ failing_since: since }).where('id', '=', d.endpointId).execute();
      if (o.attemptedAt - since >= retryWindow(this.scale)) {
        await this.#disable(trx, d.endpointId, `every delivery failed since ${toIsoTimestamp(since)}; last attempt: ${what}`, now, 'failing', disabled);
      }
    }

    const next = d.manual || o.statusCode === 410 ? null : nextAttemptAt({ now, eventCreatedAt: d.eventCreatedAt, failures: attempts, scale: this.scale, retryAfterMs: o.retryAfterMs });
    if (next === null) {
      await trx.updateTable('webhook_deliveries').set({ ...common, status: 'failed', completed_at: now }).where('id', '=', d.deliveryId).execute();
      await this.#wakeSuccessors(trx, d, now, finished);
      if (!d.manual && endpoint?.status === 'active' && endpoint.failing_since !== null) {
        // Given up after its whole retry window, and the endpoint failed every attempt since this
        // delivery's first: the endpoint has been failing for the window too.
        const first = await trx.selectFrom('webhook_attempts').select((eb) => eb.fn.min('attempted_at').as('at')).where('delivery_id', '=', d.deliveryId).executeTakeFirst();
        if (first?.at !== null && first?.at !== undefined && endpoint.failing_since <= first.at) {
          await this.#disable(trx, d.endpointId, `every delivery failed since ${toIsoTimestamp(endpoint.failing_since)}; last attempt: ${what}`, now, 'failing', disabled);
        }
      }
    } else {
      await trx.updateTable('webhook_deliveries').set({ ...common, next_attempt_at: next }).where('id', '=', d.deliveryId).execute();
      // Other instances sleep until the deadlines they last read: this retry may come due before any of them.
      notifyOnCommit(trx, { topic: 'webhook_deliveries' });
    }
  }

  /**
   * Disables an endpoint still active and tells its merchant's other endpoints, as Svix's operational
   * webhooks and Stripe's emails do: `webhook_endpoint.disabled`, in the same transaction, reaches
   * every other active endpoint of the merchant and mode whose filter takes it (this one is no longer
   * active, so it is not sent its own notice).
   */
  async #disable(trx: Trx, endpointId: string, reason: string, now: number, kind: Disabled['reason'], disabled: Disabled[]): Promise<void> {
    const result = await trx
      .updateTable('webhook_endpoints')
      .set({ status: 'disabled', disabled_reason: reason, disabled_at: now, updated_at: now })
      .where('id', '=', endpointId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return;
    const row = await trx.selectFrom('webhook_endpoints').selectAll().where('id', '=', endpointId).executeTakeFirstOrThrow();
    await recordEvent(trx, { merchantId: row.merchant_id, mode: row.mode }, 'webhook_endpoint.disabled', row.id, { ...presentEndpoint(row) }, now);
    disabled.push({ endpointId, merchantId: row.merchant_id, mode: row.mode, url: row.url, reason: kind, words: reason });
  }

  /** Deliveries that waited for this one (same endpoint and object, later events) may go now. */
  async #wakeSuccessors(trx: Trx, d: ClaimedDelivery, now: number, finished: Finished): Promise<void> {
    if (!finish(finished, d)) return;
    await this.#wakeSuccessorsOf(trx, d.endpointId, [d.objectId as string], now);
  }

  /**
   * How many it woke. Every successor still waiting is written, even one already due: on
   * PostgreSQL an UPDATE waits for a row another transaction holds only when the row as it last
   * committed matches, and a claim about to make it wait has not committed yet.
   */
  async #wakeSuccessorsOf(db: Executor, endpointId: string, objectIds: readonly string[], now: number): Promise<number> {
    return this.#wakeSuccessorsStatement.affected(db, { endpointId, now }, { objects: objectIds });
  }
}

export function newDelivery(eventId: string, endpointId: string, objectId: string | null, seq: number, manual: boolean, now: number): WebhookDeliveriesTable {
  return {
    id: timeOrderedUuid(now),
    event_id: eventId,
    endpoint_id: endpointId,
    object_id: objectId,
    event_seq: seq,
    manual: manual ? 1 : 0,
    status: 'pending',
    attempts: 0,
    next_attempt_at: now,
    claimed_at: null,
    last_status_code: null,
    last_error: null,
    created_at: now,
    updated_at: now,
    completed_at: null,
  };
}
