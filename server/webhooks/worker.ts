import type { Metrics } from '../operations/metrics.js';
import type { Logger } from 'pino';
import type { Clock } from '../../shared/time.js';
import type { Notifications } from '../db/notify.js';
import { type EgressOptions, endpointRule } from './egress.js';
import { postWebhook } from './http.js';
import { parseRetryAfter } from './schedule.js';
import { signedHeaders } from '../../shared/webhook-signing.js';
import type { AttemptOutcome, ClaimedDelivery, ClaimRequest, WebhookQueue } from './queue.js';

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

/**
 * An endpoint that answered its last delivery with a 2xx gets up to this many times its in-flight
 * limit claimed at once: the next requests go out the moment earlier ones are answered, and one
 * commit stores and claims several rounds instead of one. How many rounds it gets is what its
 * answers' latency lets it send within half of READY_WAIT_MS, so a slow endpoint is not given more
 * than it can send before its claims must be given back. A failing or new endpoint gets only its
 * in-flight limit, so nothing waits behind a receiver that is down. 128 rounds of 8 are 1,024
 * deliveries, a fifth of a second of a fast local receiver: room for passes of RECORD_BATCH.
 */
const CLAIM_AHEAD = 128;

/**
 * An endpoint's latency is followed as a moving average with this weight for the newest answer:
 * a few dozen answers make it, so one slow answer does not shrink what is claimed ahead.
 */
const LATENCY_WEIGHT = 1 / 16;

/**
 * More is claimed for an endpoint once fewer than this share of what it may hold is left to send:
 * a pass takes a few milliseconds, and the deliveries still waiting keep its requests going
 * meanwhile, where claiming only when nearly nothing is left would leave the receiver idle.
 */
const REFILL_SHARE = 1 / 4;

/**
 * How long a delivery claimed ahead may wait for a free slot: its lease is this much longer, and a
 * delivery still waiting when less than a request's timeout and margin is left is given back
 * unsent, so no request ever outlives its lease. Kept short because every claim's lease carries
 * it, and on PostgreSQL a lease held by an instance that died runs out only then.
 */
const READY_WAIT_MS = 2_000;

/**
 * While an endpoint still has claimed deliveries to send, finished attempts are stored together:
 * after this many, or this long after the first. A crash in between only means those deliveries
 * are sent again (at least once), so the window is kept short. Each batch is a commit (an fsync
 * on SQLite, a few milliseconds during which nothing is sent) and a claim with a fixed cost of its
 * own: 512 make that a few percent of a backlog's sending time at most. Driven alone, a pass's
 * database work came to ~60 µs of CPU per delivery at 256 and ~48 µs at 512 (none less at 1,024).
 */
const RECORD_BATCH = 512;

/** Endpoints remembered as healthy: past this many the set starts over (each earns its place back with one 2xx). */
const HEALTHY_ENDPOINTS = 10_000;
const RECORD_DELAY_MS = 100;

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
  /** Claimed, not yet sent, by endpoint, in the order claimed. */
  readonly #ready = new Map<string, ClaimedDelivery[]>();
  #readyCount = 0;
  /** Endpoints whose last attempt here succeeded, with their answers' average latency (ms): they may have more claimed ahead. */
  readonly #healthy = new Map<string, number>();
  #outcomes: AttemptOutcome[] = [];
  /** Claimed deliveries not sent after all, given back with the next pass. */
  #released: ClaimedDelivery[] = [];
  #recordTimer: NodeJS.Timeout | undefined;
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
  }

  async start(): Promise<void> {
    const released = await this.queue.releaseStaleClaims();
    if (released) this.logger.info({ released }, 'webhook deliveries left in flight by the previous run will be sent again');
    this.#unsubscribe.push(this.notifications.subscribe({ topic: 'webhook_fanout' }, () => this.nudge()));
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
        const held = this.#held();
        const free = this.#claimable(held);
        const claim: ClaimRequest | undefined =
          free > 0 ? { slots: free, busy: this.#busy(held), held, limitOf: (id) => this.#limitOf(id), leaseMs: this.options.timeoutMs + LEASE_MARGIN_MS + READY_WAIT_MS } : undefined;
        const { claimed: deliveries, woken } = await this.#pass(claim, true);
        for (const delivery of deliveries) this.#hold(delivery);
        this.#pumpAll();
        const claimed = deliveries.length;
        const now = this.clock.now();
        if ((((free > 0 && claimed === free) || woken > 0) && this.#readyCount === 0 && this.#claimable(this.#held()) > 0) || this.#released.length > 0) {
          // A full batch means more is probably due, and deliveries given back or woken after the
          // commit are due now: go round again at once. While claimed deliveries wait to be sent,
          // their answers call the next pass.
          wakeAt = now;
        } else if (free <= 0 || this.#readyCount > 0) {
          // Holding all it may, or still sending what it claimed: finished requests wake the loop.
          wakeAt = null;
        } else {
          const due = await this.queue.nextDueAt(this.#busy(this.#held()));
          wakeAt = due !== null && due <= now && claimed === 0 ? now + CONTENDED_MS : due;
        }
      } catch (err) {
        if (this.#stopped) break;
        this.logger.warn({ err }, 'webhook delivery pass failed');
        wakeAt = this.clock.now() + ERROR_BACKOFF_MS;
      }
      // Notices heard, or outcomes that want storing now, while the loop was busy are seen to at once.
      if (this.#woken) continue;
      await this.#sleep(wakeAt === null ? null : wakeAt - this.clock.now());
    }
  }

  /** Stores the outcomes so far, gives back what will not be sent, fans out new events, and claims `claim`: one transaction. */
  async #pass(claim?: ClaimRequest, fanOut = false): Promise<{ claimed: ClaimedDelivery[]; woken: number }> {
    clearTimeout(this.#recordTimer);
    this.#recordTimer = undefined;
    const outcomes = this.#outcomes;
    const released = this.#released;
    this.#outcomes = [];
    this.#released = [];
    try {
      return await this.queue.pass({ outcomes, released, claim, fanOut });
    } catch (err) {
      this.#outcomes = outcomes.concat(this.#outcomes);
      this.#released = released.concat(this.#released);
      throw err;
    }
  }

  #limitOf(endpointId: string): number {
    const latency = this.#healthy.get(endpointId);
    if (latency === undefined) return this.#perEndpointLimit;
    // One round of the endpoint's in-flight limit goes out per latency.
    const rounds = Math.floor(READY_WAIT_MS / 2 / Math.max(latency, 1));
    return this.#perEndpointLimit * Math.min(CLAIM_AHEAD, Math.max(1, rounds));
  }

  /** Claimed deliveries an endpoint may have left waiting before more are claimed for it. */
  #refillBelow(endpointId: string): number {
    return Math.max(this.#perEndpointLimit, Math.floor(this.#limitOf(endpointId) * REFILL_SHARE));
  }

  /** Deliveries held per endpoint: in flight plus claimed and waiting. */
  #held(): Map<string, number> {
    const held = new Map(this.#perEndpoint);
    for (const [id, list] of this.#ready) held.set(id, (held.get(id) ?? 0) + list.length);
    return held;
  }

  #hold(delivery: ClaimedDelivery): void {
    const list = this.#ready.get(delivery.endpointId);
    if (list) list.push(delivery);
    else this.#ready.set(delivery.endpointId, [delivery]);
    this.#readyCount += 1;
  }

  /** Sends what an endpoint holds while it and the worker have free slots. */
  #pump(endpointId: string): void {
    const list = this.#ready.get(endpointId);
    while (list && list.length > 0 && this.#inFlight.size < this.#maxInFlight && (this.#perEndpoint.get(endpointId) ?? 0) < this.#perEndpointLimit) {
      const delivery = list.shift()!;
      this.#readyCount -= 1;
      // Not enough lease left for a whole request: give it back rather than risk a second sender.
      if (delivery.leaseEnd - this.clock.now() < this.options.timeoutMs + LEASE_MARGIN_MS) this.#released.push(delivery);
      else this.#send(delivery);
    }
    if (list && list.length === 0) this.#ready.delete(endpointId);
  }

  #pumpAll(): void {
    for (const endpointId of [...this.#ready.keys()]) this.#pump(endpointId);
  }

  /** Gives back everything an endpoint holds unsent. */
  #releaseReady(endpointId: string): void {
    const list = this.#ready.get(endpointId);
    if (!list) return;
    this.#ready.delete(endpointId);
    this.#readyCount -= list.length;
    this.#released.push(...list);
  }

  /** Stores outcomes at once, or soon while the endpoint has more to send anyway. */
  #recordSoon(endpointId: string, now: boolean): void {
    const ready = this.#ready.get(endpointId)?.length ?? 0;
    if (now || this.#outcomes.length >= RECORD_BATCH || ready < this.#refillBelow(endpointId) || this.#released.length > 0) {
      this.nudge();
      return;
    }
    this.#recordTimer ??= setTimeout(() => {
      this.#recordTimer = undefined;
      this.nudge();
    }, RECORD_DELAY_MS);
  }

  /** Endpoints holding all this worker may hold for them. */
  #busy(held: ReadonlyMap<string, number>): Set<string> {
    return new Set([...held].filter(([id, n]) => n >= this.#limitOf(id)).map(([id]) => id));
  }

  /**
   * What one claim may take: the free in-flight slots (for any endpoint), plus what healthy
   * endpoints may hold beyond their in-flight limit. Asking for no more than can be taken keeps
   * the claim's reads small.
   */
  #claimable(held: ReadonlyMap<string, number>): number {
    let slots = Math.max(0, this.#maxInFlight - this.#inFlight.size - this.#readyCount);
    for (const [id, n] of held) if (this.#healthy.has(id)) slots += Math.max(0, this.#limitOf(id) - Math.max(this.#perEndpointLimit, n));
    return slots;
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
    const done = postWebhook(delivery.url, headers, delivery.body, this.options.timeoutMs, endpointRule(delivery.mode, this.options.egress), this.#abort.signal).then((result) => {
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
      if (delivered) {
        const latency = this.#healthy.get(delivery.endpointId);
        if (latency === undefined && this.#healthy.size >= HEALTHY_ENDPOINTS) this.#healthy.clear();
        this.#healthy.set(delivery.endpointId, latency === undefined ? result.latencyMs : latency + (result.latencyMs - latency) * LATENCY_WEIGHT);
      } else {
        // A failing endpoint sends nothing more until its failure is stored (and maybe disables it).
        this.#healthy.delete(delivery.endpointId);
        this.#releaseReady(delivery.endpointId);
      }
      if (!this.#stopped) {
        this.#pump(delivery.endpointId);
        // A slot of the worker's own freed: others may be waiting for one.
        if (this.#readyCount > 0 && this.#inFlight.size < this.#maxInFlight) this.#pumpAll();
      }
      this.#recordSoon(delivery.endpointId, !delivered);
    });
    this.#inFlight.set(delivery.deliveryId, { delivery, done });
  }

  /** Stops claiming, lets in-flight requests finish (up to a grace), and stores their outcomes. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    for (const unsubscribe of this.#unsubscribe.splice(0)) unsubscribe();
    this.nudge();
    await this.#loop;
    for (const endpointId of [...this.#ready.keys()]) this.#releaseReady(endpointId);
    const pending = [...this.#inFlight.values()].map((f) => f.done);
    const grace = new Promise<void>((resolve) => setTimeout(resolve, Math.min(STOP_GRACE_MS, this.options.timeoutMs)).unref());
    await Promise.race([Promise.all(pending), grace]);
    this.#abort.abort();
    await Promise.all(pending);
    try {
      await this.#pass();
    } catch (err) {
      this.logger.warn({ err }, 'could not store the last webhook outcomes; those deliveries will be sent again');
    }
  }
}
