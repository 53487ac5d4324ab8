import type { Metrics } from '../operations/metrics.js';
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { Clock } from '../../shared/time.js';
import type { Notifications } from '../db/notify.js';
import { type EgressOptions, endpointRule } from './egress.js';
import { postWebhook } from './http.js';
import { parseRetryAfter } from './schedule.js';
import { signedHeaders } from '../../shared/webhook-signing.js';
import type { AttemptOutcome, ClaimedDelivery, WebhookQueue } from './queue.js';

export interface WebhookWorkerOptions {
  timeoutMs: number;
  egress: EgressOptions;
  /** Requests in flight in all. */
  maxInFlight?: number;
  /** Requests in flight to one endpoint: a dead or slow endpoint ties up only these. */
  perEndpoint?: number;
  /** Each attempt's latency and outcome; none by default. */
  metrics?: Metrics;
}

/**
 * 64 requests in flight saturate a local receiver and stay far below any file-descriptor limit;
 * 8 per endpoint is a fair share that lets a healthy receiver take a burst in parallel while a
 * black-hole endpoint can hold at most 8 slots, leaving the rest to everyone else.
 */
export const DEFAULT_MAX_IN_FLIGHT = 64;
export const DEFAULT_PER_ENDPOINT = 8;

/** A lease outlives the request it covers by this much, so a slow write of the outcome never lets a second worker send the same attempt. */
const LEASE_MARGIN_MS = 5_000;

/** On SIGTERM, in-flight requests get this long to finish before they are cut (their deliveries are then retried). */
const STOP_GRACE_MS = 5_000;

/** After a database error the loop waits this long before trying again, instead of spinning. */
const ERROR_BACKOFF_MS = 1_000;

/**
 * A delivery due now that no pass could claim is locked by another instance's claim (PostgreSQL)
 * for the moment of its transaction: look again this much later rather than at once.
 */
const CONTENDED_MS = 100;

/** The longest single timer: setTimeout's limit is 2^31-1 ms; a later deadline is simply re-read then. */
const MAX_SLEEP_MS = 60 * 60 * 1000;

/**
 * The delivery loop: fan out new events, record finished attempts, claim due deliveries into free
 * slots, send them. One loop per process; the database holds all state, so a SIGKILL loses nothing.
 *
 * Between passes it sleeps until the next delivery comes due (a retry, a lease running out), and
 * is woken earlier by the commit notices of new events (any merchant's), of deliveries made due
 * elsewhere (a resend, an endpoint enabled again, another instance's retry) and by its own
 * finished requests. With nothing to deliver it asks the database nothing.
 */
export class WebhookWorker {
  readonly #inFlight = new Map<string, { delivery: ClaimedDelivery; done: Promise<void> }>();
  readonly #perEndpoint = new Map<string, number>();
  #outcomes: AttemptOutcome[] = [];
  #wake: (() => void) | undefined;
  #wakeQueued = false;
  /** Set by every wake-up, cleared when a pass starts: a notice during a pass means one more pass. */
  #woken = false;
  readonly #unsubscribe: (() => void)[] = [];
  #stopped = false;
  #loop: Promise<void> | undefined;
  readonly #abort = new AbortController();
  readonly #maxInFlight: number;
  readonly #perEndpointLimit: number;
  /** Counts for tests and the benchmark. */
  readonly stats = { delivered: 0, failed: 0 };

  constructor(
    private readonly queue: WebhookQueue,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly notifications: Notifications,
    private readonly options: WebhookWorkerOptions,
  ) {
    this.#maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
    this.#perEndpointLimit = options.perEndpoint ?? DEFAULT_PER_ENDPOINT;
    // Every request in flight listens for the shutdown abort.
    setMaxListeners(this.#maxInFlight + 10, this.#abort.signal);
  }

  async start(): Promise<void> {
    const released = await this.queue.releaseStaleClaims();
    if (released) this.logger.info({ released }, 'webhook deliveries left in flight by the previous run will be sent again');
    this.#unsubscribe.push(this.notifications.subscribeTopic('events', () => this.nudge()));
    this.#unsubscribe.push(this.notifications.subscribe({ topic: 'webhook_deliveries' }, () => this.nudge()));
    this.#loop = this.#run();
  }

  /** Asks the loop to look for work now rather than at its next deadline. */
  nudge(): void {
    this.#woken = true;
    // Woken from setImmediate, after every I/O callback of this turn has run: the answers that
    // arrived together are then recorded in one transaction rather than one pass each.
    if (this.#wakeQueued) return;
    this.#wakeQueued = true;
    setImmediate(() => {
      this.#wakeQueued = false;
      this.#wake?.();
    });
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      this.#woken = false;
      /** When to look again (epoch ms); null: only when woken. */
      let wakeAt: number | null;
      try {
        await this.#flush();
        await this.queue.fanOut();
        let claimed = 0;
        const free = this.#maxInFlight - this.#inFlight.size;
        if (free > 0) {
          const deliveries = await this.queue.claim(free, this.#busy(), this.#perEndpoint, this.#perEndpointLimit, this.options.timeoutMs + LEASE_MARGIN_MS);
          for (const delivery of deliveries) this.#send(delivery);
          claimed = deliveries.length;
        }
        const now = this.clock.now();
        if (free > 0 && claimed === free) {
          // A full batch means more is probably due: go round again at once.
          wakeAt = now;
        } else if (free <= 0) {
          // Every slot is taken: a finished request wakes the loop.
          wakeAt = null;
        } else {
          const due = await this.queue.nextDueAt(this.#busy());
          wakeAt = due !== null && due <= now && claimed === 0 ? now + CONTENDED_MS : due;
        }
      } catch (err) {
        if (this.#stopped) break;
        this.logger.warn({ err }, 'webhook delivery pass failed');
        wakeAt = this.clock.now() + ERROR_BACKOFF_MS;
      }
      // Outcomes that arrived, or notices heard, while the loop was busy are seen to at once.
      if (this.#outcomes.length > 0 || this.#woken) continue;
      await this.#sleep(wakeAt === null ? null : wakeAt - this.clock.now());
    }
  }

  /** Endpoints at their limit of requests in flight. */
  #busy(): Set<string> {
    return new Set([...this.#perEndpoint].filter(([, n]) => n >= this.#perEndpointLimit).map(([id]) => id));
  }

  #sleep(ms: number | null): Promise<void> {
    return new Promise<void>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        this.#wake = undefined;
        resolve();
      };
      if (ms !== null) timer = setTimeout(done, Math.min(Math.max(0, ms), MAX_SLEEP_MS));
      this.#wake = done;
    });
  }

  #send(delivery: ClaimedDelivery): void {
    const attemptedAt = this.clock.now();
    this.#perEndpoint.set(delivery.endpointId, (this.#perEndpoint.get(delivery.endpointId) ?? 0) + 1);
    // A fresh timestamp and signature on every attempt; the id (the event's) never changes.
    const headers = signedHeaders(delivery.secrets, delivery.eventId, attemptedAt, delivery.body);
    const done = postWebhook(delivery.url, { ...headers }, delivery.body, this.options.timeoutMs, endpointRule(delivery.mode, this.options.egress), this.#abort.signal).then((result) => {
      this.#inFlight.delete(delivery.deliveryId);
      const n = (this.#perEndpoint.get(delivery.endpointId) ?? 1) - 1;
      if (n <= 0) this.#perEndpoint.delete(delivery.endpointId);
      else this.#perEndpoint.set(delivery.endpointId, n);
      // Cut short by our own shutdown: not the receiver's failure; the lease is released at the next start.
      if (this.#abort.signal.aborted && result.statusCode === null) return;
      const delivered = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
      if (delivered) this.stats.delivered += 1;
      else this.stats.failed += 1;
      this.options.metrics?.webhookAttempt(delivered ? 'delivered' : result.statusCode === null ? 'no_answer' : 'failed', result.latencyMs / 1000);
      this.#outcomes.push({
        delivery,
        attemptedAt,
        statusCode: result.statusCode,
        latencyMs: result.latencyMs,
        error: result.error,
        retryAfterMs: parseRetryAfter(result.retryAfter, this.clock.now()),
      });
      this.nudge();
    });
    this.#inFlight.set(delivery.deliveryId, { delivery, done });
  }

  async #flush(): Promise<void> {
    if (this.#outcomes.length === 0) return;
    const batch = this.#outcomes;
    this.#outcomes = [];
    try {
      await this.queue.record(batch);
    } catch (err) {
      this.#outcomes = batch.concat(this.#outcomes);
      throw err;
    }
  }

  /** Stops claiming, lets in-flight requests finish (up to a grace), and stores their outcomes. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    this.nudge();
    await this.#loop;
    const pending = [...this.#inFlight.values()].map((f) => f.done);
    const grace = new Promise<void>((resolve) => setTimeout(resolve, Math.min(STOP_GRACE_MS, this.options.timeoutMs)).unref());
    await Promise.race([Promise.all(pending), grace]);
    this.#abort.abort();
    await Promise.all(pending);
    try {
      await this.#flush();
    } catch (err) {
      this.logger.warn({ err }, 'could not store the last webhook outcomes; those deliveries will be sent again');
    }
  }
}
