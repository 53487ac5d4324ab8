import { SimError } from '../errors.js';

/**
 * Stripe's published rate limits (https://docs.stripe.com/rate-limits), enforced per platform
 * account and mode. The simulator has one platform, so its windows are per mode; a request made on
 * behalf of a connected account (`Stripe-Account`) counts against the platform, as on Stripe.
 *
 * Each limit is a sliding window: at most N requests admitted in any span of one window. That is the
 * strictest reading of "N requests per second" (a token bucket of N also admits a burst of N right
 * after N spread over the previous second), so a client that stays within these limits stays
 * within Stripe's whatever algorithm Stripe runs. Refused requests do not occupy the window: a
 * client retrying with backoff is admitted once the window has room.
 */

export type Mode = 'test' | 'live';

/** Why a request was refused, sent as Stripe sends it in `Stripe-Rate-Limited-Reason`. */
export type RateLimitReason = 'global-rate' | 'endpoint-rate' | 'resource-specific';

export interface RateLimitSettings {
  /** Requests per second over every endpoint: Stripe allows 100 in live mode, 25 in test mode. */
  globalPerSecond: Record<Mode, number>;
  /** Requests per second to one endpoint (method + path template) unless Stripe notes otherwise: 25. */
  endpointPerSecond: number;
  /** Update requests per PaymentIntent per hour: Stripe's documented 1,000. */
  paymentIntentUpdatesPerHour: number;
}

export const STRIPE_RATE_LIMITS: RateLimitSettings = {
  globalPerSecond: { live: 100, test: 25 },
  endpointPerSecond: 25,
  paymentIntentUpdatesPerHour: 1_000,
};

const SECOND_MS = 1_000;
const HOUR_MS = 3_600_000;

/**
 * Windows of keys that went quiet (PaymentIntents nobody updates any more) are dropped every this
 * many admitted requests: often enough to bound memory by the objects of the last hour, rarely
 * enough that the sweep costs nothing per request.
 */
const SWEEP_EVERY = 10_000;

/** Admission times within the last window, oldest first. */
class SlidingWindow {
  readonly #times: number[] = [];

  constructor(readonly spanMs: number) {}

  #expire(now: number): void {
    let stale = 0;
    while (stale < this.#times.length && this.#times[stale]! <= now - this.spanMs) stale += 1;
    if (stale > 0) this.#times.splice(0, stale);
  }

  hasRoom(now: number, limit: number): boolean {
    this.#expire(now);
    return this.#times.length < limit;
  }

  add(now: number): void {
    this.#times.push(now);
  }

  isEmpty(now: number): boolean {
    this.#expire(now);
    return this.#times.length === 0;
  }
}

export interface EndpointCount {
  mode: Mode;
  /** Method and path template, e.g. `POST /v1/payment_intents/:id/confirm`. */
  endpoint: string;
  /** Every authenticated request to it, refused ones included. */
  requests: number;
  /** Requests answered 429. */
  rateLimited: number;
}

export interface RateLimitReport {
  enabled: boolean;
  /** Endpoints answered 429 on every request until lifted (`*`: all of them), whether or not the limits are enforced. */
  throttled: string[];
  limits: RateLimitSettings;
  requests: number;
  rateLimited: number;
  endpoints: EndpointCount[];
}

export interface RateLimitedRequest {
  mode: Mode;
  /** Method and path template. */
  endpoint: string;
  /** The PaymentIntent a POST to `/v1/payment_intents/:id…` updates; null otherwise. */
  paymentIntent: string | null;
}

export class RateLimits {
  enabled: boolean;
  readonly settings: RateLimitSettings;
  readonly #windows = new Map<string, SlidingWindow>();
  readonly #counts = new Map<string, EndpointCount>();
  #admitted = 0;
  /**
   * Endpoints refused outright: the processor throttling a client for as long as a test needs (an
   * outage of capacity, limits lowered), not something Stripe's published windows produce alone.
   */
  #throttled = new Set<string>();

  constructor(enabled: boolean, settings: RateLimitSettings = STRIPE_RATE_LIMITS) {
    this.enabled = enabled;
    this.settings = settings;
  }

  #window(key: string, spanMs: number): SlidingWindow {
    let window = this.#windows.get(key);
    if (!window) {
      window = new SlidingWindow(spanMs);
      this.#windows.set(key, window);
    }
    return window;
  }

  /**
   * Counts the request and admits it, or returns why it is refused. While limits are off every
   * request is counted and admitted, and none occupies a window.
   */
  admit(request: RateLimitedRequest, now: number): RateLimitReason | null {
    const countKey = `${request.mode} ${request.endpoint}`;
    let count = this.#counts.get(countKey);
    if (!count) {
      count = { mode: request.mode, endpoint: request.endpoint, requests: 0, rateLimited: 0 };
      this.#counts.set(countKey, count);
    }
    count.requests += 1;
    if (this.#throttled.has('*') || this.#throttled.has(request.endpoint)) {
      count.rateLimited += 1;
      return 'endpoint-rate';
    }
    if (!this.enabled) return null;

    const checks: [SlidingWindow, number, RateLimitReason][] = [];
    if (request.paymentIntent !== null) {
      checks.push([this.#window(`${request.mode} pi ${request.paymentIntent}`, HOUR_MS), this.settings.paymentIntentUpdatesPerHour, 'resource-specific']);
    }
    checks.push([this.#window(countKey, SECOND_MS), this.settings.endpointPerSecond, 'endpoint-rate']);
    checks.push([this.#window(request.mode, SECOND_MS), this.settings.globalPerSecond[request.mode], 'global-rate']);
    for (const [window, limit, reason] of checks) {
      if (!window.hasRoom(now, limit)) {
        count.rateLimited += 1;
        return reason;
      }
    }
    for (const [window] of checks) window.add(now);
    if (++this.#admitted % SWEEP_EVERY === 0) this.#sweep(now);
    return null;
  }

  #sweep(now: number): void {
    for (const [key, window] of this.#windows) if (window.isEmpty(now)) this.#windows.delete(key);
  }

  /**
   * Answers every request to these endpoints (method and path template, `*` for all) with 429 until
   * called again with others or none. Refused requests occupy no window, as any 429.
   */
  throttle(endpoints: string[]): void {
    this.#throttled = new Set(endpoints);
  }

  /** Forgets counts and windows: a test or a benchmark phase starts from zero. */
  reset(): void {
    this.#windows.clear();
    this.#counts.clear();
  }

  report(): RateLimitReport {
    const endpoints = [...this.#counts.values()].map((c) => ({ ...c })).sort((a, b) => a.mode.localeCompare(b.mode) || a.endpoint.localeCompare(b.endpoint));
    return {
      enabled: this.enabled,
      throttled: [...this.#throttled].sort(),
      limits: this.settings,
      requests: endpoints.reduce((sum, c) => sum + c.requests, 0),
      rateLimited: endpoints.reduce((sum, c) => sum + c.rateLimited, 0),
      endpoints,
    };
  }
}

/**
 * Stripe's answer to a rate-limited request: 429, type `invalid_request_error`, code `rate_limit`
 * (the stripe package raises `StripeRateLimitError` for any 429). `Stripe-Should-Retry: false`
 * because Stripe's SDKs deliberately leave rate-limit 429s to the caller (only lock timeouts are
 * retried at once: retrying a rate limit immediately only adds to the load that caused it).
 */
export class RateLimitError extends SimError {
  constructor(readonly reason: RateLimitReason) {
    super(
      429,
      'invalid_request_error',
      reason === 'resource-specific'
        ? 'This object has received too many update requests in the last hour; you can learn more about rate limits at https://stripe.com/docs/rate-limits.'
        : 'Request rate limit exceeded. You can learn more about rate limits here https://stripe.com/docs/rate-limits.',
      { code: 'rate_limit' },
    );
  }

  headers(): Record<string, string> {
    return { 'Stripe-Should-Retry': 'false', 'Stripe-Rate-Limited-Reason': this.reason };
  }
}
