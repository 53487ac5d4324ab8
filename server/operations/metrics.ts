import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createNoopMeter, type Attributes, type BatchObservableResult, type Counter, type Histogram, type Meter, type ObservableResult } from '@opentelemetry/api';

/**
 * Every instrument pos records, made once from a meter. Call sites say what happened in their own
 * words (`processorCall`, `webhookDelivered`); the names, units and labels an operator queries are
 * decided here and listed in docs/operations.md. A `Metrics` on the no-op meter (`noMetrics`)
 * records nothing, which is what tests and the benchmark's baseline get.
 *
 * Labels are bounded sets: a route template, never a path; a processor endpoint with its ids
 * replaced; an outcome word. An unbounded label would grow the scrape with every payment.
 */

/**
 * Request latency buckets, in seconds: from a cached read (a millisecond) to a create waiting on the
 * processor's whole timeout (20 s), about doubling, so p50/p99 are read within one bucket's width.
 */
const LATENCY_BUCKETS_S = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20];
/** A database transaction is a few milliseconds; past a second something holds a lock. */
const TRANSACTION_BUCKETS_S = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Budget waits are nothing while under Stripe's limits and up to the call's 20 s timeout past them. */
const WAIT_BUCKETS_S = [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20];
/** A webhook receiver has 15 s (DEFAULT_WEBHOOK_TIMEOUT_MS). */
const DELIVERY_BUCKETS_S = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];

/** How finely the event-loop delay is sampled: Node's default resolution, cheap (one timer). */
const EVENT_LOOP_RESOLUTION_MS = 20;

/** What the server's background state reads when a scrape or an export asks (one query each). */
export interface MetricSources {
  /** Pending webhook deliveries and when the oldest came due (null: none). */
  webhookBacklog(): Promise<{ depth: number; oldestDueAt: number | null }>;
  /** Readers whose presence says online, by mode. */
  readersOnline(): Promise<{ mode: string; count: number }[]>;
  /** Open event streams (`GET /v1/events/stream`) on this instance. */
  eventStreams(): number;
  /** Agents connected to this instance (after their hello). */
  agentConnections(): number;
  now(): number;
}

export type ProcessorOutcome = 'ok' | 'declined' | 'client_error' | 'rate_limited' | 'server_error' | 'network_error' | 'budget_exhausted';

export class Metrics {
  readonly #requests: Histogram;
  readonly #processorCalls: Counter;
  readonly #processorDuration: Histogram;
  readonly #rateLimited: Counter;
  readonly #budgetWait: Histogram;
  readonly #budgetExhausted: Counter;
  readonly #recoveries: Counter;
  readonly #givenUp: Counter;
  readonly #deliveries: Histogram;
  readonly #endpointsDisabled: Counter;
  readonly #transactions: Histogram;
  readonly #meter: Meter;

  constructor(meter: Meter) {
    this.#meter = meter;
    this.#requests = meter.createHistogram('pos.http.server.duration', {
      description: 'API requests: count and latency by route template, method, status and mode',
      unit: 's',
      advice: { explicitBucketBoundaries: LATENCY_BUCKETS_S },
    });
    this.#processorCalls = meter.createCounter('pos.processor.calls', { description: "Calls to the processor's API by endpoint and outcome" });
    this.#processorDuration = meter.createHistogram('pos.processor.call.duration', {
      description: "Processor call latency, the budget wait and retries of 429s included, by endpoint and outcome",
      unit: 's',
      advice: { explicitBucketBoundaries: LATENCY_BUCKETS_S },
    });
    this.#rateLimited = meter.createCounter('pos.processor.rate_limited', { description: 'Processor answers of 429, by endpoint (each one, retried or not)' });
    this.#budgetWait = meter.createHistogram('pos.processor.budget.wait', {
      description: "Time calls waited for the account's rate budget before they were sent, by priority",
      unit: 's',
      advice: { explicitBucketBoundaries: WAIT_BUCKETS_S },
    });
    this.#budgetExhausted = meter.createCounter('pos.processor.budget.exhausted', { description: 'Calls that waited their whole timeout for the rate budget and were never sent' });
    this.#recoveries = meter.createCounter('pos.idempotency.recoveries', { description: 'Idempotent requests resumed from a recovery point by the recovery pass, by operation' });
    this.#givenUp = meter.createCounter('pos.idempotency.given_up', { description: 'Idempotent requests given up after their retries, by operation' });
    this.#deliveries = meter.createHistogram('pos.webhook.delivery.duration', {
      description: 'Webhook delivery attempts: count and latency by outcome',
      unit: 's',
      advice: { explicitBucketBoundaries: DELIVERY_BUCKETS_S },
    });
    this.#endpointsDisabled = meter.createCounter('pos.webhook.endpoints_disabled', { description: 'Webhook endpoints disabled for failing, by reason' });
    // The counters alerts watch are exported from the start, at zero: an alert on a series that does
    // not exist yet cannot tell "none happened" from "not scraped".
    for (const counter of [this.#rateLimited, this.#budgetExhausted, this.#recoveries, this.#givenUp, this.#endpointsDisabled]) counter.add(0);
    this.#transactions = meter.createHistogram('pos.db.transaction.duration', {
      description: 'Database transaction time, by dialect and outcome',
      unit: 's',
      advice: { explicitBucketBoundaries: TRANSACTION_BUCKETS_S },
    });
  }

  request(route: string, method: string, status: number, mode: string, seconds: number): void {
    this.#requests.record(seconds, { 'http.route': route, 'http.request.method': method, 'http.response.status_code': status, 'pos.mode': mode });
  }

  processorCall(endpoint: string, outcome: ProcessorOutcome, seconds: number): void {
    const attributes = { 'pos.processor.endpoint': endpoint, 'pos.outcome': outcome };
    this.#processorCalls.add(1, attributes);
    this.#processorDuration.record(seconds, attributes);
  }

  processorRateLimited(endpoint: string): void {
    this.#rateLimited.add(1, { 'pos.processor.endpoint': endpoint });
  }

  budgetWaited(priority: string, seconds: number): void {
    this.#budgetWait.record(seconds, { 'pos.processor.priority': priority });
  }

  budgetExhausted(endpoint: string): void {
    this.#budgetExhausted.add(1, { 'pos.processor.endpoint': endpoint });
  }

  recovered(operation: string): void {
    this.#recoveries.add(1, { 'pos.operation': operation });
  }

  givenUp(operation: string): void {
    this.#givenUp.add(1, { 'pos.operation': operation });
  }

  /** `outcome`: `delivered`, `failed` (an answer outside 2xx) or `no_answer` (timeout, refused, blocked). */
  webhookAttempt(outcome: 'delivered' | 'failed' | 'no_answer', seconds: number): void {
    this.#deliveries.record(seconds, { 'pos.outcome': outcome });
  }

  endpointDisabled(reason: 'gone' | 'failing'): void {
    this.#endpointsDisabled.add(1, { 'pos.reason': reason });
  }

  transaction(dialect: string, outcome: 'commit' | 'rollback', seconds: number): void {
    this.#transactions.record(seconds, { 'db.system': dialect, 'pos.outcome': outcome });
  }

  /**
   * The gauges read when metrics are collected rather than kept up to date on every change: the
   * webhook backlog, readers online, open streams and agent connections, and the event loop's delay.
   * Returns what stops them.
   */
  observe(sources: MetricSources): () => void {
    const m = this.#meter;
    const depth = m.createObservableGauge('pos.webhook.queue.depth', { description: 'Webhook deliveries pending' });
    const oldest = m.createObservableGauge('pos.webhook.queue.oldest_due_age', { description: 'How long the oldest pending delivery has been due', unit: 's' });
    const readers = m.createObservableGauge('pos.terminal.readers_online', { description: 'Readers online as their agents report, by mode' });
    const streams = m.createObservableGauge('pos.event_streams.open', { description: 'Event streams open on this instance' });
    const agents = m.createObservableGauge('pos.agent.connections', { description: 'Agents connected to this instance' });
    const loop = m.createObservableGauge('nodejs.eventloop.delay', { description: 'Event-loop delay since the last collection, by percentile', unit: 's' });
    const histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
    histogram.enable();
    const backlog = async (result: BatchObservableResult): Promise<void> => {
      const { depth: pending, oldestDueAt } = await sources.webhookBacklog();
      result.observe(depth, pending);
      result.observe(oldest, oldestDueAt === null ? 0 : Math.max(0, (sources.now() - oldestDueAt) / 1000));
    };
    m.addBatchObservableCallback(backlog, [depth, oldest]);
    const online = async (result: ObservableResult): Promise<void> => {
      for (const row of await sources.readersOnline()) result.observe(row.count, { 'pos.mode': row.mode });
    };
    const open = (result: ObservableResult): void => result.observe(sources.eventStreams());
    const connected = (result: ObservableResult): void => result.observe(sources.agentConnections());
    const delay = (result: ObservableResult): void => {
      const ns = (p: number): number => histogram.percentile(p) / 1e9;
      const at = (q: string): Attributes => ({ 'nodejs.eventloop.delay.quantile': q });
      result.observe(ns(50), at('p50'));
      result.observe(ns(99), at('p99'));
      result.observe(histogram.max / 1e9, at('max'));
      histogram.reset();
    };
    readers.addCallback(online);
    streams.addCallback(open);
    agents.addCallback(connected);
    loop.addCallback(delay);
    return () => {
      m.removeBatchObservableCallback(backlog, [depth, oldest]);
      readers.removeCallback(online);
      streams.removeCallback(open);
      agents.removeCallback(connected);
      loop.removeCallback(delay);
      histogram.disable();
    };
  }
}

/** Records nothing: what code gets when no telemetry was configured (unit tests, POS_TELEMETRY=off). */
export const noMetrics = new Metrics(createNoopMeter());
