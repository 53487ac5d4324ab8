import { createHmac } from 'node:crypto';
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
      const response = await fetch(endpoint.body.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json; charset=utf-8',
          'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          'Stripe-Signature': header,
        },
        body: payload,
        signal: AbortSignal.any([AbortSignal.timeout(DELIVERY_TIMEOUT_MS), this.shutdown.signal]),
      });
      await response.arrayBuffer().catch(() => undefined);
      if (response.status < 200 || response.status >= 300) error = `HTTP ${response.status}`;
    } catch (cause) {
      error = cause instanceof Error ? cause.message : String(cause);
    }
    if (this.closed && error !== null) return;
    if (error === null) {
      this.store.transaction(() => {
        this.store.updateDelivery(delivery.id, { status: 'delivered', attempts, nextAt: delivery.nextAt, lastError: null });
        const fresh = this.store.find<EventBody, Record<string, never>>(event.id);
        if (fresh) {
          fresh.body.pending_webhooks = Math.max(0, fresh.body.pending_webhooks - 1);
          this.store.save(fresh);
        }
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
    for (const resolve of this.idleWaiters) resolve();
    this.idleWaiters = [];
  }
}
