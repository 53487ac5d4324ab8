import type { Logger } from 'pino';
import type { Services } from '../services.js';
import type { Leases } from '../db/leases.js';
import type { Notifications } from '../db/notify.js';

/**
 * The background pass that makes the server converge without help: it finishes idempotent
 * requests left half-done, asks the processor about payments, refunds, disputes and payouts no
 * event has settled (the polling fallback), and sweeps. Expired idempotency keys are pruned with
 * the rest of what is past its retention (server/retention.ts).
 */
export interface ReconcilerOptions {
  /**
   * 5 s: an event normally settles a payment within a second, so the poll only matters when
   * events are lost, and five seconds of extra delay is then acceptable at a counter.
   */
  intervalMs: number;
  /** Instances on one database take turns: only the lease holder runs a pass. */
  leases: Leases;
  /** True on the embedded store, where no other process can hold an idempotency key. */
  singleProcess: boolean;
  /** Commit notices: on the embedded store, a quiet reconciler is woken back to its interval by any new event. */
  notifications?: Notifications;
}

const LEASE = 'reconciler';

/**
 * How long an instance counts as alive after it last said so. At least 30 s: longer than any pause
 * a busy event loop takes, so a live instance's idempotency locks are never taken over.
 */
const PRESENCE_MIN_TTL_MS = 30_000;

/** How long an instance's presence lease lasts: three reconciler intervals, at least PRESENCE_MIN_TTL_MS. */
export function presenceTtlMs(intervalMs: number): number {
  return Math.max(PRESENCE_MIN_TTL_MS, 3 * intervalMs);
}

/**
 * On the embedded store, passes that find nothing to do stretch the interval, doubling up to this
 * many intervals (a minute at the default 5 s): a shop's server with nothing open then asks its
 * database about ten statements a minute instead of two a second. Anything that could need a pass
 * writes an event first (a payment, a refund, a checkout session), and any event's commit brings
 * the interval back at once. What waits longer meanwhile: a checkout session's expiry and the stale
 * terminal sweep, by at most this long. Several instances (PostgreSQL) keep the interval: their
 * presence renewal rides on the pass, and a crashed peer's locks must be taken over in seconds.
 */
const QUIET_MAX_INTERVALS = 12;
const QUIET_MAX_MS = 60_000;

export class Reconciler {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;
  /** The wait before the next pass; longer than the interval only while passes find nothing. */
  #delayMs: number;
  #dueAt = 0;
  #unsubscribe: (() => void) | undefined;
  /** Counts for tests and the benchmark. */
  readonly stats = { passes: 0 };

  constructor(
    private readonly services: Services,
    private readonly logger: Logger,
    private readonly options: ReconcilerOptions,
  ) {
    this.#delayMs = options.intervalMs;
  }

  /** The longest wait between passes: the interval itself where instances share the database. */
  get #quietMaxMs(): number {
    const { intervalMs, singleProcess, notifications } = this.options;
    return singleProcess && notifications ? Math.max(intervalMs, Math.min(QUIET_MAX_MS, QUIET_MAX_INTERVALS * intervalMs)) : intervalMs;
  }

  /** The start-up recovery pass, then the periodic loop. */
  async start(): Promise<void> {
    await this.#renewPresence();
    const recovered = await this.services.idempotency.recover({ includeLocked: this.options.singleProcess, limit: 10_000 });
    if (recovered) this.logger.info({ recovered }, 'finished requests left half-done by the previous run');
    if (this.#quietMaxMs > this.options.intervalMs) this.#unsubscribe = this.options.notifications?.subscribeTopic('events', () => this.#busyAgain());
    this.#schedule();
  }

  /** Something was written: a quiet reconciler comes back to its interval. */
  #busyAgain(): void {
    this.#delayMs = this.options.intervalMs;
    if (this.#running || this.#stopped || this.#dueAt - Date.now() <= this.options.intervalMs) return;
    clearTimeout(this.#timer);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#dueAt = Date.now() + this.#delayMs;
    this.#timer = setTimeout(() => {
      this.#running = this.#renewPresence()
        .then(() => this.runOnce())
        .then((found) => {
          this.stats.passes += 1;
          this.#delayMs = found > 0 ? this.options.intervalMs : Math.min(this.#quietMaxMs, this.#delayMs * 2);
        })
        .catch((err: unknown) => {
          this.#delayMs = this.options.intervalMs;
          this.logger.warn({ err }, 'reconciler pass failed');
        })
        .finally(() => {
          this.#running = undefined;
          this.#schedule();
        });
    }, this.#delayMs);
    this.#timer.unref();
  }

  /** One pass; answers how many things it found to recover, poll, sweep or expire (0: all quiet). */
  async runOnce(): Promise<number> {
    // Three intervals: a holder that missed two passes (stuck, or gone) hands the sweeps over.
    if (!(await this.options.leases.acquire(LEASE, 3 * this.options.intervalMs))) return 0;
    let found = 0;
    found += await this.services.idempotency.recover();
    found += await this.services.transactions.pollOpen();
    found += await this.services.refunds.pollPending();
    found += await this.services.disputes.pollOpen();
    found += await this.services.payouts.pollOpen();
    found += await this.services.terminal.sweep();
    found += await this.services.checkout.expireDue();
    return found;
  }

  #renewPresence(): Promise<boolean> {
    return this.options.leases.renewPresence(presenceTtlMs(this.options.intervalMs));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#unsubscribe?.();
    if (this.#timer) clearTimeout(this.#timer);
    await this.#running;
    await this.options.leases.release(LEASE).catch(() => undefined);
    await this.options.leases.release(`instance:${this.options.leases.holder}`).catch(() => undefined);
  }
}
