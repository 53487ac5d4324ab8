import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { client, type Json } from './helpers/api.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(...args: Parameters<typeof startTestServer>): Promise<TestServer> {
  const t = await startTestServer(...args);
  cleanups.push(() => t.stop());
  return t;
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

async function scrape(url: string, token?: string): Promise<string> {
  const res = await fetch(`${url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  expect(res.status).toBe(200);
  return res.text();
}

/** The sample lines of one metric whose labels include every one given. */
function samples(text: string, name: string, labels: Record<string, string | number> = {}): number[] {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return text
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .filter((line) => wanted.every((w) => line.includes(w)))
    .map((line) => Number(line.slice(line.lastIndexOf(' ') + 1)));
}

const total = (values: number[]): number => values.reduce((a, b) => a + b, 0);

describe('metrics', () => {
  it('counts and times requests, processor calls, deliveries and a 429 with their labels, on the operator listener', async () => {
    const t = await server({ metricsListen: '127.0.0.1:0', rateLimit: 30 });
    const metricsUrl = t.server.metricsUrl ?? '';
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const hooks = await receiver();
    const { keys } = await t.merchant();
    const api = client(t.url, keys.sk_test);
    await api.post('/v1/webhook-endpoints', { url: hooks.url, events: ['payment.succeeded'] });
    const paid = await api.post<{ data: { id: string } }>('/v1/transactions', { amount: 1250, payment_method: 'pm_card_visa', confirm: true });
    expect(paid.status).toBe(201);
    expect((await api.post('/v1/transactions', { amount: 700, payment_method: 'pm_card_chargeDeclined', confirm: true })).status).toBe(402);
    expect((await api.get(`/v1/transactions/${paid.body.data.id}`)).status).toBe(200);
    await eventually(() => (hooks.acceptedIds().length === 1 ? true : undefined));
    // The public listener does not serve them without a token.
    expect((await fetch(`${t.url}/metrics`)).status).toBe(404);
    // Keyless requests share the caller's address bucket: the 31st in the window is refused.
    let refused = 0;
    for (let i = 0; i < 31; i++) if ((await client(t.url).get('/v1/transactions')).status === 429) refused++;
    expect(refused).toBeGreaterThan(0);

    const text = await eventually(async () => {
      const body = await scrape(metricsUrl);
      return total(samples(body, 'pos_webhook_delivery_duration_count', { pos_outcome: 'delivered' })) >= 1 ? body : undefined;
    });
    const request = 'pos_http_server_duration_count';
    expect(total(samples(text, request, { http_route: '/v1/transactions', http_request_method: 'POST', http_response_status_code: 201, pos_mode: 'test' }))).toBe(1);
    expect(total(samples(text, request, { http_route: '/v1/transactions', http_request_method: 'POST', http_response_status_code: 402, pos_mode: 'test' }))).toBe(1);
    expect(total(samples(text, request, { http_route: '/v1/transactions/{id}', http_request_method: 'GET', http_response_status_code: 200 }))).toBe(1);
    expect(total(samples(text, request, { http_route: '/v1/transactions', http_response_status_code: 429, pos_mode: 'none' }))).toBe(refused);
    expect(samples(text, 'pos_http_server_duration_bucket', { http_route: '/v1/transactions', http_response_status_code: 201, le: '+Inf' })).toEqual([1]);

    const intents = 'POST /v1/payment_intents';
    expect(total(samples(text, 'pos_processor_calls_total', { pos_processor_endpoint: intents, pos_outcome: 'ok' }))).toBeGreaterThanOrEqual(1);
    expect(total(samples(text, 'pos_processor_calls_total', { pos_outcome: 'declined' }))).toBeGreaterThanOrEqual(1);
    expect(total(samples(text, 'pos_processor_call_duration_count', { pos_processor_endpoint: intents }))).toBeGreaterThanOrEqual(1);
    expect(total(samples(text, 'pos_processor_budget_wait_count', { pos_processor_priority: 'critical' }))).toBeGreaterThanOrEqual(1);
    expect(samples(text, 'pos_webhook_delivery_duration_bucket', { pos_outcome: 'delivered', le: '+Inf' })).toEqual([1]);
    expect(total(samples(text, 'pos_db_transaction_duration_count', { pos_outcome: 'commit' }))).toBeGreaterThan(0);
    expect(samples(text, 'pos_webhook_queue_depth')).toHaveLength(1);
    expect(samples(text, 'pos_webhook_queue_oldest_due_age')).toHaveLength(1);
    expect(samples(text, 'pos_event_streams_open')).toEqual([0]);
    expect(samples(text, 'pos_agent_connections')).toEqual([0]);
    expect(samples(text, 'nodejs_eventloop_delay', { nodejs_eventloop_delay_quantile: 'p99' })).toHaveLength(1);
    // Declared so alerts can be written before the first one happens.
    expect(text).toContain('# TYPE pos_processor_budget_exhausted_total counter');
    expect(text).toContain('# TYPE pos_idempotency_given_up_total counter');

  });

  it('serves /metrics on the public listener only with the token', async () => {
    const token = 'scrape-token-0123456789';
    const t = await server({}, {}, { POS_METRICS_TOKEN: token });
    expect((await fetch(`${t.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${t.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
    expect(await scrape(t.url, token)).toContain('# TYPE pos_processor_budget_exhausted_total counter');
  });
});

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
  /** OTLP status code: 2 is an error. */
  status?: { code?: number };
}

/** A collector's OTLP/HTTP traces endpoint on port 0, keeping every span it is sent (JSON encoding). */
async function startCollector(): Promise<{ url: string; spans: OtlpSpan[]; close(): Promise<void> }> {
  const spans: OtlpSpan[] = [];
  const collector: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
        for (const r of body.resourceSpans) for (const s of r.scopeSpans) spans.push(...s.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((resolve) => collector.close(() => resolve())),
  };
}

const attribute = (span: OtlpSpan, key: string): string | undefined => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue !== undefined ? String(value.intValue) : undefined);
};

describe('traces', () => {
  it('sends the spans of one create to an OTLP collector, continuing the caller’s traceparent, the processor call inside', async () => {
    const collector = await startCollector();
    cleanups.push(() => collector.close());
    const t = await server({}, {}, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    const { keys } = await t.merchant();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await client(t.url, keys.sk_test).post<{ data: { id: string } }>('/v1/transactions', { amount: 1250, payment_method: 'pm_card_visa', confirm: true }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
    expect(res.status).toBe(201);
    await t.server.telemetry.flush();

    const ofTrace = await eventually(() => {
      const found = collector.spans.filter((s) => s.traceId.toLowerCase() === traceId);
      return found.some((s) => s.name === 'POST /v1/transactions') ? found : undefined;
    });
    const byId = new Map(ofTrace.map((s) => [s.spanId, s]));
    const root = ofTrace.find((s) => s.name === 'POST /v1/transactions');
    expect(root?.parentSpanId).toBe('00f067aa0ba902b7');
    expect(root && attribute(root, 'http.response.status_code')).toBe('201');
    const create = ofTrace.find((s) => s.name === 'processor POST /v1/payment_intents');
    expect(create && attribute(create, 'pos.processor.request_id')).toMatch(/^req_/);
    // route → domain (the idempotent operation and its step) → processor call.
    const chain: string[] = [];
    for (let s = create; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined) chain.unshift(s.name);
    expect(chain[0]).toBe('POST /v1/transactions');
    expect(chain.some((name) => name.startsWith('idempotency '))).toBe(true);
    expect(chain.at(-1)).toBe('processor POST /v1/payment_intents');
    // The database's units of work are in the same trace, under the request.
    expect(ofTrace.filter((s) => s.name === 'db.transaction').length).toBeGreaterThan(0);
    // Each unit of work and each processor call (the merchant's first payment creates its connected
    // account too) hangs under the operation that made it, though each starts after an await.
    const operation = ofTrace.find((s) => s.name === 'idempotency create_payment');
    const children = ofTrace.filter((s) => s.name === 'db.transaction' || s.name.startsWith('processor '));
    expect(children.map((s) => s.name)).toContain('processor POST /v1/accounts');
    for (const child of children) expect(child.parentSpanId).toBe(operation?.spanId);
  });
});

describe('traces of requests that make several processor calls', () => {
  it('puts every processor call of a location created with tipping under its request, each made after an await', async () => {
    const collector = await startCollector();
    cleanups.push(() => collector.close());
    const t = await server({}, {}, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    const { keys } = await t.merchant();
    const traceId = '7d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a';
    const address = { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' };
    const res = await client(t.url, keys.sk_test).post('/v1/terminal/locations', { display_name: 'Front', address, tipping: { percentages: [10, 15, 20] } }, { traceparent: `00-${traceId}-1a2b3c4d5e6f7a8b-01` });
    expect(res.status).toBe(201);
    await t.server.telemetry.flush();

    const ofTrace = await eventually(() => {
      const found = collector.spans.filter((s) => s.traceId.toLowerCase() === traceId);
      return found.some((s) => s.name === 'POST /v1/terminal/locations') ? found : undefined;
    });
    const request = ofTrace.find((s) => s.name === 'POST /v1/terminal/locations');
    const calls = ofTrace.filter((s) => s.name.startsWith('processor '));
    // The location, its tipping configuration, and the configuration assigned to the location.
    expect(calls.map((s) => s.name).sort()).toEqual(['processor POST /v1/terminal/configurations', 'processor POST /v1/terminal/locations', 'processor POST /v1/terminal/locations/:id']);
    const byId = new Map(ofTrace.map((s) => [s.spanId, s]));
    for (const call of calls) {
      let s: OtlpSpan | undefined = call;
      while (s && s !== request) s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined;
      expect(s, call.name).toBe(request);
    }
    // None of them started a trace of its own.
    expect(collector.spans.filter((s) => s.name.startsWith('processor POST /v1/terminal/') && s.traceId.toLowerCase() !== traceId)).toEqual([]);
  });
});

describe('traces of refused and throttled calls', () => {
  it('keeps a declined payment and a throttled one each in its own request’s trace, the failed processor call under the operation', async () => {
    const collector = await startCollector();
    cleanups.push(() => collector.close());
    // Short, so the throttled call gives up (its 429 retries included) well inside the test.
    const t = await server({ processorTimeoutMs: 1_500 }, {}, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    const sim = t.stack.simulator!;
    const { keys } = await t.merchant();
    const api = client(t.url, keys.sk_test);
    // The connected account is made first, so each traced request below makes one processor call.
    expect((await api.post('/v1/transactions', { amount: 500, payment_method: 'pm_card_visa', confirm: true })).status).toBe(201);

    const traceOf = async (traceId: string, status: number) => {
      await t.server.telemetry.flush();
      return eventually(() => {
        const found = collector.spans.filter((s) => s.traceId.toLowerCase() === traceId);
        return found.some((s) => s.name === 'POST /v1/transactions' && attribute(s, 'http.response.status_code') === String(status)) ? found : undefined;
      });
    };
    const underOperation = (spans: OtlpSpan[]) => {
      const operation = spans.find((s) => s.name === 'idempotency create_payment');
      const request = spans.find((s) => s.name === 'POST /v1/transactions');
      expect(operation?.parentSpanId).toBe(request?.spanId);
      const calls = spans.filter((s) => s.name === 'processor POST /v1/payment_intents');
      expect(calls.length).toBeGreaterThan(0);
      for (const call of calls) expect(call.parentSpanId).toBe(operation?.spanId);
      return calls;
    };

    const declinedTrace = '0af7651916cd43dd8448eb211c80319c';
    const declined = await api.post('/v1/transactions', { amount: 700, payment_method: 'pm_card_chargeDeclined', confirm: true }, { traceparent: `00-${declinedTrace}-b7ad6b7169203331-01` });
    expect(declined.status).toBe(402);
    const [refusal] = underOperation(await traceOf(declinedTrace, 402));
    expect(refusal && attribute(refusal, 'http.response.status_code')).toBe('402');

    await sim.control.throttle(['*']);
    try {
      const throttledTrace = '5b8aa5a2d2c872e8321cf37308d69df2';
      const throttled = await api.post('/v1/transactions', { amount: 900, payment_method: 'pm_card_visa', confirm: true }, { traceparent: `00-${throttledTrace}-c3e1f0a1b2d3e4f5-01`, 'idempotency-key': 'traced-throttle' });
      expect(throttled.status).toBe(502);
      const spans = await traceOf(throttledTrace, 502);
      const calls = underOperation(spans);
      // The call that never got through is marked failed, whether its last answer was a 429 or none.
      expect(calls.some((c) => c.status?.code === 2 || attribute(c, 'http.response.status_code') === '429')).toBe(true);
      expect(spans.find((s) => s.name === 'POST /v1/transactions')?.status?.code).toBe(2);
    } finally {
      await sim.control.throttle([]);
    }
    // The same key, once the processor answers again, finishes the payment.
    expect((await api.post('/v1/transactions', { amount: 900, payment_method: 'pm_card_visa', confirm: true }, { 'idempotency-key': 'traced-throttle' })).status).toBe(201);
  });
});

describe('/readyz', () => {
  it('is 200 when the database, its migrations and the processor are fine, and 503 while draining', async () => {
    const t = await server({ metricsListen: '127.0.0.1:0' });
    const ready = await eventually(async () => {
      const res = await client(t.url).get<Json>('/readyz');
      return res.status === 200 ? res : undefined;
    });
    expect(ready.body).toMatchObject({ status: 'ready', checks: { database: 'ok', migrations: 'current', processor: 'ok', draining: false }, reasons: [] });
    expect((await client(t.url).get('/healthz')).status).toBe(200);

    const metricsUrl = t.server.metricsUrl ?? '';
    t.server.readiness.drain();
    const draining = await client(metricsUrl).get<Json>('/readyz');
    expect(draining.status).toBe(503);
    expect(draining.body).toMatchObject({ status: 'not_ready', checks: { draining: true } });
    expect(JSON.stringify(draining.body.reasons)).toContain('draining');
    // Liveness is not readiness: the process still answers.
    expect((await client(metricsUrl).get('/healthz')).status).toBe(200);
  });
});

describe('webhook_endpoint.disabled', () => {
  it('tells the merchant’s other endpoints, logs it and counts it when an endpoint is disabled', async () => {
    const t = await server({ metricsListen: '127.0.0.1:0', webhookRetryScale: 0.001 });
    const [gone, other] = [await receiver(), await receiver()];
    gone.answer = () => 410;
    const { keys } = await t.merchant();
    const api = client(t.url, keys.sk_test);
    const dead = await api.post<{ data: { id: string } }>('/v1/webhook-endpoints', { url: gone.url, events: ['payment.created'] });
    await api.post('/v1/webhook-endpoints', { url: other.url, events: ['webhook_endpoint.disabled'] });
    expect((await api.post('/v1/transactions', { amount: 1250, payment_method: 'pm_card_visa', confirm: true })).status).toBe(201);

    const notice = await eventually(() => other.received.find((r) => r.type === 'webhook_endpoint.disabled'));
    expect(notice.event.data).toMatchObject({ id: dead.body.data.id, object: 'webhook_endpoint', status: 'disabled', is_test: true });
    expect(String(notice.event.data.disabled_reason)).toMatch(/410 Gone/);
    // The disabled endpoint is not sent its own notice, and nothing more at all.
    expect(gone.received.map((r) => r.type)).toEqual(['payment.created']);
    const text = await scrape(t.server.metricsUrl ?? '');
    expect(samples(text, 'pos_webhook_endpoints_disabled_total', { pos_reason: 'gone' })).toEqual([1]);
  });
});
