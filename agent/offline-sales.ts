import type Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { ApiConnectionError, ApiRequestError } from '../shared/api/errors.js';
import type { CreateTransactionParams, Transaction } from '../shared/api/types.js';
import type { Clock } from '../shared/time.js';
import type { OfflineSale } from './state.js';

/**
 * Cash sales kept while the server is out of reach: at most 500, a busy day and a half at one till,
 * and none older than 72 hours (Stripe Terminal's own bound on payments stored offline). Past
 * either the till stops taking sales offline and says why: a longer outage is one to fix, and every
 * sale in this queue is money the books do not have yet.
 */
export const MAX_OFFLINE_SALES = 500;
export const MAX_OFFLINE_AGE_MS = 72 * 3_600_000;

/** What the queue needs of the API: one call, so tests can hand it anything that answers like it. */
export interface SaleRecorder {
  createTransaction(body: CreateTransactionParams, options: { idempotencyKey?: string }): Promise<{ data: Transaction }>;
}

export interface OfflineSummary {
  /** Sales not yet on the server. */
  waiting: number;
  oldest_taken_at: string | null;
  /** Sales the server refused for good: kept for staff to record by hand, never retried. */
  refused: number;
}

/** The server did not answer, or answered that it cannot now: the sale stays queued and is sent again. */
export function isTransient(err: unknown): boolean {
  if (err instanceof ApiConnectionError) return true;
  if (!(err instanceof ApiRequestError)) return true;
  // 409 idempotency_key_in_use: the same sale is being recorded by a request still in flight.
  return err.status === 0 || err.status >= 500 || err.status === 429 || (err.status === 409 && err.code === 'idempotency_key_in_use');
}

export class OfflineLimitReached extends Error {}

/**
 * The queue of offline cash sales in the agent's SQLite file: each one committed (fsync'd) before
 * its drawer opens, sent in the order taken with its own idempotency key, so a sale is recorded
 * once however often the sending is cut short (a restart, a lost answer, a power cut).
 */
export class OfflineSales {
  #syncing: Promise<number> | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly agentId: string,
    private readonly clock: Clock,
    private readonly recorder: SaleRecorder,
    private readonly logger: Logger,
    /** Told whenever the queue changes (a sale taken, synced or refused). */
    private readonly changed: (summary: OfflineSummary) => void = () => {},
  ) {}

  summary(): OfflineSummary {
    const row = this.db.prepare("SELECT count(*) AS waiting, min(taken_at) AS oldest FROM offline_sales WHERE status = 'queued'").get() as { waiting: number; oldest: number | null };
    const refused = (this.db.prepare("SELECT count(*) AS n FROM offline_sales WHERE status = 'refused'").get() as { n: number }).n;
    return { waiting: row.waiting, oldest_taken_at: row.oldest === null ? null : new Date(row.oldest).toISOString(), refused };
  }

  /** Sales waiting, oldest first. */
  waiting(): OfflineSale[] {
    return this.db.prepare("SELECT * FROM offline_sales WHERE status = 'queued' ORDER BY seq").all() as OfflineSale[];
  }

  findByKey(idempotencyKey: string): OfflineSale | undefined {
    return this.db.prepare('SELECT * FROM offline_sales WHERE idempotency_key = ?').get(idempotencyKey) as OfflineSale | undefined;
  }

  find(localReference: string): OfflineSale | undefined {
    return this.db.prepare('SELECT * FROM offline_sales WHERE local_reference = ?').get(localReference) as OfflineSale | undefined;
  }

  /** Why no more sales can be taken offline now, in words for the counter; null while they can. */
  limitReached(): string | null {
    const { waiting, oldest_taken_at: oldest } = this.summary();
    if (waiting >= MAX_OFFLINE_SALES) return `Offline limit reached: ${waiting} cash sales are waiting to sync (at most ${MAX_OFFLINE_SALES}). Reconnect the server before taking more sales`;
    if (oldest !== null && this.clock.now() - Date.parse(oldest) >= MAX_OFFLINE_AGE_MS) {
      return `Offline limit reached: a cash sale has waited ${MAX_OFFLINE_AGE_MS / 3_600_000} hours to sync. Reconnect the server before taking more sales`;
    }
    return null;
  }

  /**
   * Keeps a sale, committed before this returns; throws OfflineLimitReached past the bound. The
   * sale's time is its `taken_at`: the server books it on the day it was taken.
   */
  take(request: CreateTransactionParams, idempotencyKey: string): OfflineSale {
    const limit = this.limitReached();
    if (limit) throw new OfflineLimitReached(limit);
    const now = this.clock.now();
    const sale = this.db.transaction(() => {
      // The seq is the row's own: read after the insert, so the reference and the order agree.
      const placeholder = `pending-${idempotencyKey}`;
      const { lastInsertRowid } = this.db
        .prepare('INSERT INTO offline_sales (local_reference, idempotency_key, request, taken_at) VALUES (?, ?, ?, ?)')
        .run(placeholder, idempotencyKey, '{}', now);
      const seq = Number(lastInsertRowid);
      const reference = `OFF-${this.agentId.slice(0, 4).toUpperCase()}-${String(seq).padStart(4, '0')}`;
      const body: CreateTransactionParams = { ...request, taken_at: new Date(now).toISOString(), offline_reference: reference };
      this.db.prepare('UPDATE offline_sales SET local_reference = ?, request = ? WHERE seq = ?').run(reference, JSON.stringify(body), seq);
      return this.db.prepare('SELECT * FROM offline_sales WHERE seq = ?').get(seq) as OfflineSale;
    })();
    this.logger.info({ event: 'offline_sale', local_reference: sale.local_reference, amount: request.amount }, 'cash sale kept offline until the server is back');
    this.changed(this.summary());
    return sale;
  }

  /**
   * Sends the waiting sales in order, one at a time; stops at the first the server cannot take now
   * (tried again at the next call). One pass at a time: a second call joins the running one.
   * Returns how many were recorded.
   */
  sync(): Promise<number> {
    this.#syncing ??= this.#pass().finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }

  /** Waits for a running pass to end (before the file closes). */
  async idle(): Promise<void> {
    await this.#syncing?.catch(() => 0);
  }

  async #pass(): Promise<number> {
    let synced = 0;
    for (;;) {
      const next = this.db.prepare("SELECT * FROM offline_sales WHERE status = 'queued' ORDER BY seq LIMIT 1").get() as OfflineSale | undefined;
      if (!next) return synced;
      let txn: Transaction;
      try {
        txn = (await this.recorder.createTransaction(JSON.parse(next.request) as CreateTransactionParams, { idempotencyKey: next.idempotency_key })).data;
      } catch (err) {
        if (isTransient(err)) {
          this.logger.info({ local_reference: next.local_reference, err: err instanceof Error ? err.message : String(err) }, 'offline sales wait for the server');
          return synced;
        }
        const message = err instanceof Error ? err.message : String(err);
        this.db.prepare("UPDATE offline_sales SET status = 'refused', error = ? WHERE seq = ?").run(message, next.seq);
        this.logger.error({ local_reference: next.local_reference, err: message }, 'the server refused an offline cash sale: record it by hand from its receipt');
        this.changed(this.summary());
        continue;
      }
      this.db.prepare("UPDATE offline_sales SET status = 'synced', transaction_id = ?, synced_at = ? WHERE seq = ?").run(txn.id, this.clock.now(), next.seq);
      synced += 1;
      this.logger.info({ event: 'offline_sale_synced', local_reference: next.local_reference, transaction: txn.reference }, 'offline cash sale recorded on the server');
      this.changed(this.summary());
    }
  }
}
