import type { Logger } from 'pino';
import type { Services } from '../services.js';
import type { Leases } from '../db/leases.js';

/**
 * The background pass that makes the server converge without help: it finishes idempotent
 * requests left half-done, asks the processor about payments, refunds, disputes and payouts no
 * event has settled (the polling fallback), and purges expired idempotency keys.
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
}

const LEASE = 'reconciler';

/**
 * How long an instance counts as alive after it last said so. At least 30 s: longer than any pause
 * a busy event loop takes, so a live instance's idempotency locks are never taken over.
 */
const PRESENCE_MIN_TTL_MS = 30_000;

/** Expired keys are purged at most this often: retention is a day, so hourly is plenty. */
const PURGE_EVERY_MS = 60 * 60 * 1000;

export class Reconciler {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #lastPurge = 0;
  #stopped = false;

  constructor(
    private readonly services: Services,
    private readonly logger: Logger,
    private readonly options: ReconcilerOptions,
  ) {}

  /** The start-up recovery pass, then the periodic loop. */
  async start(): Promise<void> {
    await this.#renewPresence();
    const recovered = await this.services.idempotency.recover({ includeLocked: this.options.singleProcess, limit: 10_000 });
    if (recovered) this.logger.info({ recovered }, 'finished requests left half-done by the previous run');
    this.#schedule();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.#renewPresence()
        .then(() => this.runOnce())
        .catch((err: unknown) => this.logger.warn({ err }, 'reconciler pass failed'))
        .finally(() => {
          this.#running = undefined;
          this.#schedule();
        });
    }, this.options.intervalMs);
    this.#timer.unref();
  }

  async runOnce(now = Date.now()): Promise<void> {
    // Three intervals: a holder that missed two passes (stuck, or gone) hands the sweeps over.
    if (!(await this.options.leases.acquire(LEASE, 3 * this.options.intervalMs))) return;
    await this.services.idempotency.recover();
    await this.services.transactions.pollOpen();
    await this.services.refunds.pollPending();
    await this.services.disputes.pollOpen();
    await this.services.payouts.pollOpen();
    await this.services.terminal.sweep();
    await this.services.checkout.expireDue();
    if (now - this.#lastPurge > PURGE_EVERY_MS) {
      this.#lastPurge = now;
      await this.services.idempotency.purgeExpired();
    }
  }

  #renewPresence(): Promise<boolean> {
    return this.options.leases.renewPresence(Math.max(PRESENCE_MIN_TTL_MS, 3 * this.options.intervalMs));
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#running;
    await this.options.leases.release(LEASE).catch(() => undefined);
    await this.options.leases.release(`instance:${this.options.leases.holder}`).catch(() => undefined);
  }
}
