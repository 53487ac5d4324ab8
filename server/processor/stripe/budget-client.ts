import Stripe from 'stripe';
import { context, ROOT_CONTEXT, SpanKind, trace, type TextMapGetter, type TextMapSetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { noMetrics, type Metrics, type ProcessorOutcome } from '../../operations/metrics.js';
import { traced, type Telemetry } from '../../operations/observe.js';
import { type BudgetLedger, BudgetTimeoutError, MemoryLedger, type Priority, ProcessorBudget, accountKey, stripeLimits } from '../budget.js';

/**
 * The stripe package's HTTP client with the processor budget in front: every SDK call, whoever
 * makes it, waits for its account's budget (server/processor/budget.ts) before it is sent, and a 429
 * that still comes back (another application on the same Stripe account, limits Stripe lowered) is
 * retried here with backoff and jitter before the SDK sees it.
 */

/** Calls that move or release money and must not wait behind reads. */
const CRITICAL_CALLS = [
  /^POST \/v1\/payment_intents$/,
  /^POST \/v1\/payment_intents\/:id\/(confirm|capture|cancel)$/,
  /^POST \/v1\/terminal\/readers\/:id\/(process_payment_intent|set_reader_display|cancel_action)$/,
  /^POST \/v1\/refunds$/,
];

/**
 * An object id in a path: a lowercase prefix, an underscore and at least 8 base62 characters with a
 * digit or a capital (`pi_3Mtw…`, `tmr_Fo0…`, `acct_1N…`). Path words are lowercase with
 * underscores (`process_payment_intent`, `webhook_endpoints`), so they never match.
 */
const OBJECT_ID = /^[a-z][a-z0-9]*_(?=[A-Za-z0-9]*[A-Z0-9])[A-Za-z0-9]{8,}$/;

/**
 * The endpoint a request counts against, as Stripe counts them: method and path template, ids
 * replaced (`POST /v1/payment_intents/:id/confirm`). A capability's name is a path parameter too.
 */
export function endpointOf(method: string, path: string): string {
  const segments = (path.split('?')[0] ?? '').split('/');
  const template = segments.map((segment, i) => (OBJECT_ID.test(segment) || segments[i - 1] === 'capabilities' ? ':id' : segment));
  return `${method.toUpperCase()} ${template.join('/')}`;
}

export function priorityOf(endpoint: string): Priority {
  if (CRITICAL_CALLS.some((pattern) => pattern.test(endpoint))) return 'critical';
  return endpoint.startsWith('GET ') ? 'read' : 'write';
}

/**
 * 429s retried here before the SDK sees one. With the budget in front a 429 means someone else is
 * drawing on the account too; five backoffs (0.5 s doubling to 8 s, 8-15 s in all) ride out a burst
 * from elsewhere within the SDK's 20 s request timeout. A backoff that would end past that timeout
 * is not taken: the 429 goes back to the caller instead.
 */
const RATE_LIMIT_RETRIES = 5;
/** Half a second, as Stripe's SDKs start: long enough for a one-second window to slide noticeably. */
const BACKOFF_BASE_MS = 500;
const BACKOFF_MAX_MS = 8_000;

/** Exponential backoff with equal jitter: half the step fixed, half random, so retries from many calls spread out. */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  const step = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt);
  return step / 2 + random() * (step / 2);
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class BudgetedHttpClient implements Stripe.HttpClient {
  constructor(
    private readonly inner: Stripe.HttpClient,
    readonly budget: ProcessorBudget,
    private readonly wait: (ms: number) => Promise<void> = sleep,
    private readonly metrics: Metrics = noMetrics,
  ) {}

  getClientName(): string {
    return this.inner.getClientName();
  }

  async makeRequest(
    host: string,
    port: string,
    path: string,
    method: string,
    headers: Parameters<Stripe.HttpClient['makeRequest']>[4],
    requestData: string,
    protocol: string,
    timeout: number,
  ): Promise<Stripe.HttpClientResponse> {
    const endpoint = endpointOf(method, path);
    const priority = priorityOf(endpoint);
    // The SDK's timeout bounds the whole call: the wait for the budget, every attempt and every
    // backoff between them, so a processor that keeps refusing answers within it, never later.
    const deadline = performance.now() + timeout;
    for (let attempt = 0; ; attempt++) {
      const waitStarted = performance.now();
      try {
        await this.budget.acquire(endpoint, priority, Math.max(1, deadline - performance.now()));
      } catch (error) {
        if (error instanceof BudgetTimeoutError) {
          this.metrics.budgetExhausted(endpoint);
          return budgetRefusal(endpoint);
        }
        throw error;
      }
      this.metrics.budgetWaited(priority, (performance.now() - waitStarted) / 1000);
      const response = await this.inner.makeRequest(host, port, path, method, headers, requestData, protocol, Math.max(1, deadline - performance.now()));
      if (response.getStatusCode() !== 429) return response;
      this.metrics.processorRateLimited(endpoint);
      if (attempt >= RATE_LIMIT_RETRIES) return response;
      // A limit on one object's updates in the hour is not lifted by waiting seconds.
      if (response.getHeaders()['stripe-rate-limited-reason'] === 'resource-specific') return response;
      const backoff = backoffMs(attempt);
      // No time left for another try: the caller gets the 429 now rather than a timeout later.
      if (performance.now() + backoff >= deadline) return response;
      await discard(response);
      await this.wait(backoff);
    }
  }
}

/**
 * The answer for a call the budget held past its timeout: the rate limit's 429 as Stripe words it,
 * marked not to be retried. The call never left, so it is a rate limit and not a timeout (which
 * may or may not have arrived), and the SDK must not retry it: each retry would wait the whole
 * timeout again, and the caller's answer would come long after its own client gave up.
 */
function budgetRefusal(endpoint: string): Stripe.HttpClientResponse {
  const body = {
    error: {
      type: 'invalid_request_error',
      code: 'rate_limit',
      message: `Request rate limit exceeded: the call (${endpoint}) waited its whole timeout for the processor's rate budget and was not sent.`,
    },
  };
  const headers = { 'stripe-should-retry': 'false', 'content-type': 'application/json' };
  return {
    getStatusCode: () => 429,
    getHeaders: () => headers,
    getRawResponse: () => undefined,
    toStream: (done: () => void) => {
      done();
      return undefined;
    },
    toJSON: () => Promise.resolve(body),
  };
}

async function discard(response: Stripe.HttpClientResponse): Promise<void> {
  if (response.dispose) {
    response.dispose();
    return;
  }
  await Promise.resolve(response.toJSON()).catch(() => undefined);
}

/**
 * On SQLite one process is the whole server, so its budgets live in memory, one per account and
 * shared by every gateway the process builds on that key (a restarted server in a test, two servers
 * on one simulator). On PostgreSQL the windows are in the database every instance shares, and each
 * gateway keeps only its own queue.
 */
const inProcess = new Map<string, ProcessorBudget>();
const memory = new MemoryLedger();

/**
 * The HTTP client to give the stripe package for a platform key: on a shared ledger (every
 * instance's, `sharedBudgetLedger`), or this process's when there is none.
 */
export function budgetedHttpClient(secretKey: string, ledger?: BudgetLedger, metrics: Metrics = noMetrics): Stripe.HttpClient {
  const { account, mode } = accountKey(secretKey);
  let budget: ProcessorBudget | undefined;
  if (ledger) {
    budget = new ProcessorBudget(ledger, account, stripeLimits(mode));
  } else {
    budget = inProcess.get(account);
    if (!budget) {
      budget = new ProcessorBudget(memory, account, stripeLimits(mode));
      inProcess.set(account, budget);
    }
  }
  return new BudgetedHttpClient(Stripe.createNodeHttpClient(), budget, sleep, metrics);
}

/** What a processor answer's status says happened, as the calls metric labels it. */
function outcomeOf(status: number): ProcessorOutcome {
  if (status < 400) return 'ok';
  if (status === 402) return 'declined';
  if (status === 429) return 'rate_limited';
  return status >= 500 ? 'server_error' : 'client_error';
}

type RequestHeaders = Parameters<Stripe.HttpClient['makeRequest']>[4];

const propagator = new W3CTraceContextPropagator();
const headerGetter: TextMapGetter<RequestHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'number' ? String(value) : value;
  },
};
const headerSetter: TextMapSetter<RequestHeaders> = { set: (carrier, key, value) => void (carrier[key] = value) };

/**
 * The SDK's API-key authentication, which also writes the caller's trace context into the
 * request's `traceparent`. The SDK calls it synchronously inside the resource call (`create`,
 * `retrieve`…), while the caller's context is still the active one (the port's calls are made in
 * their `ProcessorScope`'s trace: stripe/processor.ts `call`); it reaches the HTTP client only after a promise, when
 * nothing is active any more, so the client span takes its parent from that header. A retry the SDK
 * schedules on a timer sends no caller context: its span starts a trace of its own.
 */
export function tracingAuthenticator(secretKey: string): NonNullable<Stripe.StripeConfig['authenticator']> {
  const authorization = `Bearer ${secretKey}`;
  return (request) => {
    request.headers.Authorization = authorization;
    const active = context.active();
    if (trace.getSpanContext(active)) propagator.inject(active, request.headers, headerSetter);
    return Promise.resolve();
  };
}

/**
 * Every processor call as one client span (its endpoint, status and the processor's `Request-Id`,
 * which Stripe's support asks for) and counted and timed by endpoint and outcome. Outermost, so the
 * budget wait and the retries of 429s are inside the call's time, as the caller waited them. The
 * span's parent is the `traceparent` the caller's context wrote (`tracingAuthenticator`), and the
 * header sent on names the call's own span, as OpenTelemetry's HTTP instrumentation does.
 */
export class InstrumentedHttpClient implements Stripe.HttpClient {
  constructor(
    private readonly inner: Stripe.HttpClient,
    private readonly telemetry: Pick<Telemetry, 'metrics' | 'tracer'>,
  ) {}

  getClientName(): string {
    return this.inner.getClientName();
  }

  makeRequest(...args: Parameters<Stripe.HttpClient['makeRequest']>): Promise<Stripe.HttpClientResponse> {
    const [, , path, method] = args;
    const endpoint = endpointOf(method, path);
    const { metrics, tracer } = this.telemetry;
    const started = performance.now();
    const headers = args[4];
    const parent = tracer && headers.traceparent !== undefined ? propagator.extract(ROOT_CONTEXT, headers, headerGetter) : undefined;
    return traced(
      tracer,
      `processor ${endpoint}`,
      async (span) => {
        if (span) propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, headerSetter);
        let response: Stripe.HttpClientResponse;
        try {
          response = await this.inner.makeRequest(...args);
        } catch (err) {
          metrics.processorCall(endpoint, 'network_error', (performance.now() - started) / 1000);
          throw err;
        }
        const status = response.getStatusCode();
        metrics.processorCall(endpoint, outcomeOf(status), (performance.now() - started) / 1000);
        if (span?.isRecording()) {
          const requestId = response.getHeaders()['request-id'];
          span.setAttributes({ 'http.response.status_code': status, ...(typeof requestId === 'string' ? { 'pos.processor.request_id': requestId } : {}) });
        }
        return response;
      },
      { kind: SpanKind.CLIENT, attributes: { 'pos.processor.endpoint': endpoint, 'http.request.method': method }, leaf: true, parent },
    );
  }
}
