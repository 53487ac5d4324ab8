import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type Stripe from 'stripe';
import type { DeliveryRow, Store } from '../../store.js';
import type { EndpointInternal, EventBody } from './events.js';

/**
 * Sends webhook deliveries one at a time, oldest due first, so a receiver sees events in the order
 * they happened unless a fault says otherwise. Every attempt's outcome is persisted; a restart picks
 * up whatever is still pending.
 */

/**
 * How long one delivery may take. Stripe gives endpoints a few seconds to answer; ten is generous
 * for a local receiver and keeps one hung endpoint from stalling the queue for long.
 */
const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * Retry backoff: 1 s doubling to at most 60 s. Stripe retries over three days; a simulator compresses
 * that so a developer sees the retries within a minute. Twelve attempts take about eight minutes.
 */
const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 60_000;
const MAX_ATTEMPTS = 12;
/** Node's setTimeout overflows past 2^31-1 ms; later wake-ups are re-armed when they fire. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Sends one signed POST and resolves with the status, or rejects with why there was none. Node's
 * own client over a kept-alive connection rather than `fetch`: deliveries go one after another to
 * the same few endpoints, and fetch's streams and per-request setup cost the simulator more CPU than
 * the rest of a delivery (measured with a CPU profile under payment load).
 */
function post(url: URL, headers: Record<string, string>, payload: string, agents: { http: http.Agent; https: https.Agent }, signal: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const secure = url.protocol === 'https:';
    const request = (secure ? https : http).request(
      url,
      { method: 'POST', headers: { ...headers, 'Content-Length': String(Buffer.byteLength(payload)) }, agent: secure ? agents.https : agents.http, signal },
      (response) => {
        response.on('error', reject);
        response.on('end', () => resolve(response.statusCode ?? 0));
        // Cut before its end (the receiver hung up, or the signal fired): no answer.
        response.on('close', () => {
          if (!response.complete) reject(new Error('the connection closed before the answer ended'));
        });
        response.resume();
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

export function signPayload(payload: string, secret: string, timestampSeconds: number): string {
  const signature = createHmac('sha256', secret).update(`${timestampSeconds}.${payload}`, 'utf8').digest('hex');
  return `t=${timestampSeconds},v1=${signature}`;
}

export class WebhookDispatcher {
  private running = false;
  private again = false;
  private closed = false;
  private wake: NodeJS.Timeout | null = null;
  private current: Promise<void> | null = null;
  private idleWaiters: (() => void)[] = [];
  /** Aborts the delivery in flight when the simulator closes; it stays pending for the next run. */
  private readonly shutdown = new AbortController();
  /** Connections kept open between deliveries; one at a time is all the dispatcher sends. */
  private readonly agents = { http: new http.Agent({ keepAlive: true, maxSockets: 1 }), https: new https.Agent({ keepAlive: true, maxSockets: 1 }) };

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly log: (line: string) => void,
  ) {}

  /** Something may be due: run the queue now (or once the running pass ends). */
  poke(): void {
    if (this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.current = this.run();
  }

  private async run(): Promise<void> {
    this.running = true;
    if (this.wake) clearTimeout(this.wake);
    this.wake = null;
    try {
      do {
        this.again = false;
        for (;;) {
          // A request's batch may still be open here (this runs after an answer came in): an event
          // goes out only once what made it is durable and its request has been answered.
          await this.store.durable();
          if (this.closed) return;
          const due = this.store.nextDueDelivery(this.now());
          if (!due) break;
          await this.attempt(due);
        }
      } while (this.again && !this.closed);
    } finally {
      this.running = false;
      this.current = null;
      this.arm();
    }
  }

  private arm(): void {
    if (this.closed) return;
    const next = this.store.earliestPendingDelivery();
    if (next === undefined) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
      return;
    }
    const delay = Math.min(Math.max(0, next - this.now()), MAX_TIMER_MS);
    this.wake = setTimeout(() => this.poke(), delay);
    this.wake.unref();
  }

  private async attempt(delivery: DeliveryRow): Promise<void> {
    const event = this.store.find<EventBody, Record<string, never>>(delivery.eventId);
    const endpoint = this.store.find<Stripe.WebhookEndpoint, EndpointInternal>(delivery.endpointId);
    const attempts = delivery.attempts + 1;
    if (!event || !endpoint) {
      this.store.updateDelivery(delivery.id, { status: 'failed', attempts, nextAt: delivery.nextAt, lastError: 'endpoint or event deleted' });
      return;
    }
    const payload = JSON.stringify(event.body, null, 2);
    const header = signPayload(payload, endpoint.internal.secret, Math.floor(this.now() / 1000));
    let error: string | null = null;
    try {
      const status = await post(
        new URL(endpoint.body.url),
        {
          'Content-Type': 'application/json; charset=utf-8',
          'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          'Stripe-Signature': header,
        },
        payload,
        this.agents,
        AbortSignal.any([AbortSignal.timeout(DELIVERY_TIMEOUT_MS), this.shutdown.signal]),
      );
      if (status < 200 || status >= 300) error = `HTTP ${status}`;
    } catch (cause) {
      error = cause instanceof Error ? cause.message : String(cause);
    }
    if (this.closed && error !== null) return;
    if (error === null) {
      this.store.transaction(() => {
        this.store.updateDelivery(delivery.id, { status: 'delivered', attempts, nextAt: delivery.nextAt, lastError: null });
        this.store.eventDelivered(event.id);
      });
      return;
    }
    const giveUp = attempts >= MAX_ATTEMPTS;
    const backoff = Math.min(RETRY_BASE_MS * 2 ** (attempts - 1), RETRY_MAX_MS);
    this.log(`webhook ${event.body.type} ${event.id} -> ${endpoint.body.url} failed (${error}); ${giveUp ? 'giving up' : `retry in ${backoff} ms`}`);
    this.store.updateDelivery(delivery.id, { status: giveUp ? 'failed' : 'pending', attempts, nextAt: this.now() + backoff, lastError: error });
  }

  /** Resolves once nothing is due or waiting for a retry (tests). */
  idle(): Promise<void> {
    if (!this.running && this.store.earliestPendingDelivery() === undefined) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.wake) clearTimeout(this.wake);
    this.shutdown.abort();
    await this.current;
    this.agents.http.destroy();
    this.agents.https.destroy();
    for (const resolve of this.idleWaiters) resolve();
    this.idleWaiters = [];
  }
}
