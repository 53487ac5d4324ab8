import type { Logger } from 'pino';
import type { Clock } from '../../shared/time.js';
import type { Notice, Notifications } from './notify.js';

/** After a failed pass the next try comes this much later: a database that just failed likely fails again at once. */
const RETRY_MS = 1_000;

/** setTimeout's largest delay (about 24.8 days); a later deadline is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What a deadline timer does: the work that is due, and the next deadline after it. */
export interface DeadlineWork {
  /**
   * The notice that says a new or earlier deadline may exist (any process's commit). None where
   * nothing can make a deadline earlier than the one `next` gave (new rows only fall due later).
   */
  notice?: Notice;
  /** Does whatever is due now. */
  pass(): Promise<unknown>;
  /** The earliest deadline left in the database (ms since the epoch), or undefined when none. */
  next(): Promise<number | undefined>;
  /** Milliseconds after a deadline at which it counts as due (1 where due means strictly past it). */
  slackMs: number;
  /** Names the work in the warning a failed pass logs. */
  name: string;
}

/**
 * Work done at deadlines kept in the database, without a sweep: one timer per process, set for the
 * earliest deadline. A commit that makes a new or earlier deadline sends `work.notice` and the timer
 * is set again; when it fires, the pass runs and the timer is set for the next deadline. With no
 * deadline anywhere there is no timer and no query. Several processes on one PostgreSQL database
 * fire at the same deadline; each pass's own conditional updates let one of them do each piece.
 */
export class DeadlineTimer {
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  /** The pass in progress, for stop() to wait on. */
  #pass: Promise<void> = Promise.resolve();
  #again = false;
  #stopped = true;
  #unsubscribe: (() => void) | undefined;

  constructor(
    private readonly work: DeadlineWork,
    private readonly notifications: Notifications,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Does what fell due while no process was running, and follows the deadlines from then on. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    if (this.work.notice) this.#unsubscribe = this.notifications.subscribe(this.work.notice, () => this.#run());
    this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#unsubscribe?.();
    await this.#pass;
  }

  /** One pass at a time; a notice during a pass makes one more after it. */
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
            await this.work.pass();
            this.#schedule(await this.work.next());
          } catch (err) {
            this.logger.warn({ err }, `${this.work.name} pass failed; trying again shortly`);
            this.#schedule(this.clock.now() + RETRY_MS);
          }
        } while (this.#again && !this.#stopped);
      } finally {
        // In the same step as the loop's last check, so a notice can never fall between the two.
        this.#running = false;
      }
    })();
  }

  #schedule(deadline: number | undefined): void {
    clearTimeout(this.#timer);
    if (deadline === undefined || this.#stopped) return;
    const delay = Math.min(Math.max(0, deadline - this.clock.now() + this.work.slackMs), MAX_TIMER_MS);
    this.#timer = setTimeout(() => this.#run(), delay);
    this.#timer.unref();
  }
}
