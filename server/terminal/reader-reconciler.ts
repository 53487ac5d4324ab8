import type { Logger } from 'pino';
import type { Clock } from '../../shared/time.js';
import type { Notifications } from '../db/notify.js';
import type { ReaderActions } from './reader-actions.js';

/** After a failed pass the next try comes this much later: a database that just failed likely fails again at once. */
const RETRY_MS = 1_000;

/** setTimeout's largest delay (about 24.8 days); a later deadline is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Reader reconciliation without a sweep, like presence expiry: one timer per process, set for the
 * earliest `action_check_at` in the database. A change that makes a new or earlier deadline sends the
 * `reader_checks` notice and the timer is set again; when it fires, the overdue readers are read
 * once each (server/terminal/reader-actions.ts) and the timer is set for the next deadline. With no
 * action in progress anywhere there is no timer and no query.
 */
export class ReaderReconciler {
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #pass: Promise<void> = Promise.resolve();
  #again = false;
  #stopped = true;
  #unsubscribe: (() => void) | undefined;

  constructor(
    private readonly actions: ReaderActions,
    private readonly notifications: Notifications,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#unsubscribe = this.notifications.subscribe({ topic: 'reader_checks' }, () => this.#run());
    this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#unsubscribe?.();
    await this.#pass;
  }

  #run(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#running = true;
    this.#pass = (async () => {
      try {
        do {
          this.#again = false;
          try {
            await this.actions.reconcile();
            this.#schedule(await this.actions.nextCheck());
          } catch (err) {
            this.logger.warn({ err }, 'reader reconciliation pass failed; trying again shortly');
            this.#schedule(this.clock.now() + RETRY_MS);
          }
        } while (this.#again && !this.#stopped);
      } finally {
        this.#running = false;
      }
    })();
  }

  #schedule(deadline: number | undefined): void {
    clearTimeout(this.#timer);
    if (deadline === undefined || this.#stopped) return;
    const delay = Math.min(Math.max(0, deadline - this.clock.now()), MAX_TIMER_MS);
    this.#timer = setTimeout(() => this.#run(), delay);
    this.#timer.unref();
  }
}
