import type { Logger } from 'pino';
import type { Clock } from '../shared/time.js';
import { addToCounter, readCount } from './db/counters.js';
import type { Leases } from './db/leases.js';
import type { Mode } from './db/schema.js';
import type { Store } from './db/store.js';
import type { IdempotencyService } from './idempotency/keys.js';

const DAY_MS = 86_400_000;

/** How long each kind of row is kept (docs/operations.md, "Retention"); idempotency keys keep their own `expires_at`. */
export interface RetentionPeriods {
  eventsMs: number;
  deliveriesMs: number;
  processorEventsMs: number;
}

export const DEFAULT_RETENTION: RetentionPeriods = { eventsMs: 30 * DAY_MS, deliveriesMs: 30 * DAY_MS, processorEventsMs: 30 * DAY_MS };

export function retentionOf(config: { retainEventsDays: number; retainDeliveriesDays: number; retainProcessorEventsDays: number }): RetentionPeriods {
  return { eventsMs: config.retainEventsDays * DAY_MS, deliveriesMs: config.retainDeliveriesDays * DAY_MS, processorEventsMs: config.retainProcessorEventsDays * DAY_MS };
}

/**
 * Rows deleted per transaction. On SQLite a unit runs inside the shared group commit and blocks the
 * event loop while it runs: 200 events with their deliveries and attempts are a few milliseconds of
 * deleting, about one request's worth, and the pass yields to the event loop between batches.
 */
export const PRUNE_BATCH = 200;

/** A pass runs hourly: a day's rows past their period are gone within the hour, and an idle store is asked nothing more often. */
const PASS_EVERY_MS = 60 * 60 * 1000;

/** Long enough for a pass over a backlog of millions of rows; renewed after every batch, so a dead holder hands over within it. */
const LEASE_TTL_MS = 10 * 60 * 1000;
const LEASE = 'retention';

export interface PruneReport {
  events: number;
  deliveries: number;
  processorEvents: number;
  idempotencyKeys: number;
}

/**
 * Deletes what is past its retention period, oldest first, in small transactions with the event loop
 * let through between them, on SQLite and PostgreSQL alike: events (with their webhook deliveries
 * and attempts), finished webhook deliveries, the processor's events (kept to recognise a redelivery)
 * and finished idempotency keys. On several instances one holds the `retention` lease and prunes.
 *
 * Events are pruned per merchant and mode in `seq` order, and the number pruned is kept in the
 * `events:pruned` counter: the event list counts and pages from it (server/webhooks/events.ts).
 */
export class Retention {
  #timer: NodeJS.Timeout | undefined;
  #first: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly idempotency: IdempotencyService,
    readonly periods: RetentionPeriods = DEFAULT_RETENTION,
    private readonly leases?: Leases,
  ) {}

  /** The oldest event the log still guarantees to hold: anything older may have been pruned. */
  eventsAvailableSince(now = this.clock.now()): number {
    return now - this.periods.eventsMs;
  }

  start(): void {
    const pass = () => {
      if (this.#running || this.#stopped) return;
      this.#running = this.runOnce()
        .then((report) => {
          const total = report.events + report.deliveries + report.processorEvents + report.idempotencyKeys;
          if (total > 0) this.logger.info({ pruned: report }, 'pruned rows past their retention');
        })
        .catch((err: unknown) => this.logger.warn({ err }, 'pruning failed; the next pass tries again'))
        .finally(() => (this.#running = undefined));
    };
    // The first pass shortly after the start: not in the way of the start, not an hour away.
    const first = setTimeout(pass, 60_000);
    first.unref();
    this.#timer = setInterval(pass, PASS_EVERY_MS);
    this.#timer.unref();
    this.#first = first;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#first);
    clearInterval(this.#timer);
    await this.#running;
    await this.leases?.release(LEASE).catch(() => undefined);
  }

  /** One pass: prunes everything past its period, batch by batch; answers how many rows of each kind went. */
  async runOnce(): Promise<PruneReport> {
    const report: PruneReport = { events: 0, deliveries: 0, processorEvents: 0, idempotencyKeys: 0 };
    if (!(await this.#holdLease())) return report;
    const now = this.clock.now();
    report.deliveries += await this.#drain(() => this.#pruneDeliveries(now - this.periods.deliveriesMs));
    for (const scope of await this.#eventScopes()) {
      report.events += await this.#drain(() => this.#pruneEvents(scope.merchantId, scope.mode, now - this.periods.eventsMs));
    }
    report.processorEvents += await this.#drain(() => this.#pruneProcessorEvents(now - this.periods.processorEventsMs));
    report.idempotencyKeys += await this.#drain(() => this.idempotency.purgeExpired());
    return report;
  }

  async #holdLease(): Promise<boolean> {
    return this.leases ? this.leases.acquire(LEASE, LEASE_TTL_MS) : true;
  }

  /** Runs `batch` until it deletes nothing, yielding to the event loop between batches. */
  async #drain(batch: () => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      if (this.#stopped) return total;
      const deleted = await batch();
      total += deleted;
      if (deleted === 0) return total;
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (!(await this.#holdLease())) return total;
    }
  }

  async #eventScopes(): Promise<{ merchantId: string; mode: Mode }[]> {
    const rows = await this.store.db.selectFrom('counters').select(['merchant_id', 'mode']).where('name', '=', 'events').execute();
    return rows.map((r) => ({ merchantId: r.merchant_id, mode: r.mode }));
  }

  /** The oldest events of one merchant and mode, up to the first one still inside its period. */
  async #pruneEvents(merchantId: string, mode: Mode, cutoff: number): Promise<number> {
    return this.store.transaction(async (trx) => {
      const pruned = await readCount(trx, merchantId, mode, 'events:pruned');
      const oldest = await trx
        .selectFrom('events')
        .select(['id', 'seq', 'created_at'])
        .where('merchant_id', '=', merchantId)
        .where('mode', '=', mode)
        .where('seq', '>', pruned)
        .orderBy('seq')
        .limit(PRUNE_BATCH)
        .execute();
      // In seq order and only up to the first that is young enough, so the pruned part is always
      // the prefix 1…pruned that the list skips, even where clocks of instances disagree a little.
      const young = oldest.findIndex((e) => e.created_at >= cutoff);
      const gone = young === -1 ? oldest : oldest.slice(0, young);
      const last = gone.at(-1);
      if (!last) return 0;
      const ids = gone.map((e) => e.id);
      const deliveries = trx.selectFrom('webhook_deliveries').select('id').where('event_id', 'in', ids);
      await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveries).execute();
      await trx.deleteFrom('webhook_deliveries').where('event_id', 'in', ids).execute();
      await trx.deleteFrom('events').where('id', 'in', ids).execute();
      await addToCounter(trx, merchantId, mode, 'events:pruned', last.seq - pruned);
      return gone.length;
    });
  }

  /** Finished deliveries (succeeded, failed, given up) completed before the cutoff, with their attempts. */
  async #pruneDeliveries(cutoff: number): Promise<number> {
    return this.store.transaction(async (trx) => {
      const rows = await trx.selectFrom('webhook_deliveries').select('id').where('completed_at', '<', cutoff).where('status', '!=', 'pending').limit(PRUNE_BATCH).execute();
      if (rows.length === 0) return 0;
      const ids = rows.map((r) => r.id);
      await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', ids).execute();
      await trx.deleteFrom('webhook_deliveries').where('id', 'in', ids).execute();
      return ids.length;
    });
  }

  async #pruneProcessorEvents(cutoff: number): Promise<number> {
    return this.store.transaction(async (trx) => {
      const rows = await trx.selectFrom('processor_events').select('id').where('received_at', '<', cutoff).limit(PRUNE_BATCH).execute();
      if (rows.length === 0) return 0;
      await trx
        .deleteFrom('processor_events')
        .where(
          'id',
          'in',
          rows.map((r) => r.id),
        )
        .execute();
      return rows.length;
    });
  }
}
