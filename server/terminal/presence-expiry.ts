import type { Logger } from 'pino';
import type { Clock } from '../../shared/time.js';
import type { Notifications } from '../db/notify.js';
import type { AgentService } from './agents.js';

/** After a failed pass the next try comes this much later: a database that just failed likely fails again at once; a second late is nothing to presence measured in heartbeats. */
const RETRY_MS = 1_000;

/** setTimeout's largest delay (about 24.8 days); a later deadline is looked at again then. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Presence expiry without a sweep: one timer per process, set for the earliest presence deadline in
 * the database (any instance's readers). A heartbeat anywhere that makes a new or earlier deadline
 * sends the `presence` notice, and the timer is set again. When the timer fires, lapsed readers go
 * offline (with their `terminal.reader.offline` events) and the timer is set for the next deadline.
 *
 * With no reader online there is no timer at all. With agents heartbeating, deadlines only move
 * later, so the timer fires about once per (TTL − heartbeat interval), 10 s with the defaults, finds
 * nothing, and reads the next deadline: two short reads per process, whatever the number of agents
 * or readers. A reader goes offline within milliseconds of its deadline rather than at the next tick
 * of a sweep. On PostgreSQL every instance's timer fires at the same deadline; the expiry's
 * conditional update lets exactly one of them take each reader offline.
 */
export class PresenceExpiry {
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  /** The pass in progress, for stop() to wait on. */
  #pass: Promise<void> = Promise.resolve();
  #again = false;
  #stopped = true;
  #unsubscribe: (() => void) | undefined;

  constructor(
    private readonly agents: AgentService,
    private readonly notifications: Notifications,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Expires what lapsed while no process was running, and follows the deadlines from then on. */
  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#unsubscribe = this.notifications.subscribe({ topic: 'presence' }, () => this.#run());
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
            await this.agents.expire();
            this.#schedule(await this.agents.nextPresenceDeadline());
          } catch (err) {
            this.logger.warn({ err }, 'presence expiry pass failed; trying again shortly');
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
    // Expiry takes deadlines strictly before now: one millisecond past the deadline it is due.
    const delay = Math.min(Math.max(0, deadline - this.clock.now() + 1), MAX_TIMER_MS);
    this.#timer = setTimeout(() => this.#run(), delay);
    this.#timer.unref();
  }
}
