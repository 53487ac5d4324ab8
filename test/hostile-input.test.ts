import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { MAX_INPUT_DEPTH } from '../server/http/input.js';
import { ErrorBodySchema } from '../shared/contract/common.js';
import { UPSTREAM_PATH } from '../shared/agent-upstream.js';
import { call, client, type Json } from './helpers/api.js';
import { seedDataDir } from './helpers/db.js';
import { adminMerchant, spawnServer, startTestServer, type TestServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';

/**
 * Input an attacker sends with any merchant's key: bodies nested thousands deep, path ids that are
 * not valid percent-encoding, strings that are not well-formed Unicode. Each is answered with a
 * 4xx naming the problem, nothing is written or sent to the processor, and the server goes on
 * answering everyone else.
 */

let t: TestServer;
let key: string;
const ADDRESS = { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'US' };
const LONE = '\ud800';

type ErrorBody = { error: { type: string; code?: string; param?: string; message: string } };

beforeAll(async () => {
  t = await startTestServer();
  key = (await t.merchant('Hostile Input Shop')).keys.sk_test;
  const api = client(t.url, key);
  expect((await api.post('/v1/terminal/locations', { display_name: 'Front counter', address: ADDRESS })).status).toBe(201);
});
afterAll(() => t.stop());

/** A raw request: the path goes out byte for byte (fetch would normalise it), the body as given. */
function raw(method: string, path: string, body?: string, headers: Record<string, string> = {}): Promise<{ status: number; body: unknown }> {
  const url = new URL(t.url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method, path, headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // pages answer HTML
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function stillAnswers(): Promise<void> {
  expect((await client(t.url).get('/healthz')).status).toBe(200);
  expect((await client(t.url, key).get('/v1/merchant')).status).toBe(200);
}

describe('deeply nested bodies', () => {
  it('answers a body of 4,000 nested brackets with 400 and keeps serving', async () => {
    const nest = '['.repeat(4_000) + ']'.repeat(4_000);
    for (const path of ['/v1/customers', '/v1/transactions', '/v1/terminal/locations']) {
      const res = await raw('POST', path, nest);
      expect(res.status, path).toBe(400);
      expect(ErrorBodySchema.safeParse(res.body).success, JSON.stringify(res.body)).toBe(true);
      expect((res.body as ErrorBody).error.code).toBe('parameter_invalid');
    }
    await stillAnswers();
  });

  it('names the top-level field a deep nest hangs from', async () => {
    const deep = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    const res = await raw('POST', '/v1/customers', `{"metadata":${deep}}`);
    expect(res.status).toBe(400);
    expect((res.body as ErrorBody).error).toMatchObject({ code: 'parameter_invalid', param: 'metadata' });
    await stillAnswers();
  });

  it('accepts nesting up to the limit and refuses one level more', async () => {
    const nested = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);
    // A body at the limit reaches the schema (an array is not an object there), one more does not.
    const at = await raw('POST', '/v1/customers', nested(MAX_INPUT_DEPTH));
    expect((at.body as ErrorBody).error.message).not.toMatch(/nested/);
    const over = await raw('POST', '/v1/customers', nested(MAX_INPUT_DEPTH + 1));
    expect((over.body as ErrorBody).error.message).toMatch(/nested more than 20 levels/);
  });

  it('answers the same nest on the hosted-page submit and the agent websocket without harm', async () => {
    const page = await raw('POST', '/checkout/cs_doesnotexist/start', '['.repeat(4_000) + ']'.repeat(4_000));
    expect(page.status).toBe(400);
    const ws = new WebSocket(t.url.replace('http', 'ws') + UPSTREAM_PATH, { headers: { authorization: `Bearer ${key}` } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    const replies: Json[] = [];
    ws.on('message', (data: Buffer) => replies.push(JSON.parse(data.toString()) as Json));
    const frames: (string | Buffer)[] = [
      '['.repeat(100_000) + ']'.repeat(100_000),
      'not json',
      Buffer.from([0xff, 0x00, 0xfe]),
      JSON.stringify({ type: 'hello', protocol: 1, agent_id: '00000000-0000-4000-8000-000000000000', name: LONE, version: '1', heartbeat_ms: 1000, cursor: null }),
      JSON.stringify([1, 2, 3]),
      'null',
    ];
    for (const frame of frames) ws.send(frame, { binary: Buffer.isBuffer(frame) });
    await expect.poll(() => replies.length, { timeout: 5_000 }).toBe(frames.length);
    for (const reply of replies) expect(reply).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'invalid_message' } });
    expect(JSON.stringify(replies[3])).toMatch(/name/);
    expect(ws.readyState).toBe(WebSocket.OPEN);
    // Past the 1 MB message cap the socket is closed (1009, message too big); nothing else is.
    const closed = new Promise<number>((resolve) => ws.once('close', (code: number) => resolve(code)));
    ws.send('x'.repeat(2 * 1024 * 1024));
    expect(await closed).toBe(1009);
    await stillAnswers();
  });
});

describe('malformed percent-escapes in path ids', () => {
  const ESCAPES = ['%', '%ff', '%C3%28', '%E0%A4%A', '%ED%A0%80'];
  const ROUTES: [string, (id: string) => string][] = [
    ['GET', (id) => `/v1/customers/${id}`],
    ['POST', (id) => `/v1/customers/${id}`],
    ['GET', (id) => `/v1/transactions/${id}`],
    ['POST', (id) => `/v1/transactions/${id}/capture`],
    ['POST', (id) => `/v1/transactions/${id}/cancel`],
    ['POST', (id) => `/v1/transactions/${id}/refunds`],
    ['GET', (id) => `/v1/transactions/${id}/refunds`],
    ['DELETE', (id) => `/v1/terminal/readers/${id}`],
    ['DELETE', (id) => `/v1/terminals/${id}`],
    ['GET', (id) => `/v1/checkout/sessions/${id}`],
    ['GET', (id) => `/v1/payment-links/${id}`],
    ['GET', (id) => `/v1/webhook-endpoints/${id}`],
    ['GET', (id) => `/v1/events/${id}`],
  ];

  it('answers 404 resource_missing on every id route', async () => {
    for (const escape of ESCAPES) {
      for (const [method, path] of ROUTES) {
        const res = await raw(method, path(escape), method === 'POST' ? '{}' : undefined);
        expect(res.status, `${method} ${path(escape)}`).toBe(404);
        expect(res.body, `${method} ${path(escape)}`).toMatchObject({ error: { type: 'invalid_request_error', code: 'resource_missing' } });
      }
    }
  });

  it('answers 404 on the public pages too', async () => {
    for (const escape of ESCAPES) {
      for (const path of [`/checkout/${escape}`, `/pay/${escape}`, `/receipts/${escape}`]) {
        expect((await raw('GET', path)).status, path).toBe(404);
      }
      expect((await raw('POST', `/checkout/${escape}/start`, '{}')).status).toBe(404);
    }
    await stillAnswers();
  });
});

describe('strings that are not well-formed text', () => {
  const api = () => client(t.url, key);
  const counts = async () => {
    const a = api();
    return {
      transactions: (await a.get<{ totalCount: number }>('/v1/transactions')).body.totalCount,
      customers: (await a.get<{ totalCount: number }>('/v1/customers')).body.totalCount,
      locations: (await a.get<{ data: unknown[] }>('/v1/terminal/locations')).body.data.length,
      readers: (await a.get<{ data: unknown[] }>('/v1/terminal/readers')).body.data.length,
    };
  };

  /** Sends `body` (JSON-encoded, so a lone surrogate travels as its `\ud800` escape) and expects a 400 naming `param`. */
  async function refused(path: string, body: Json, param: string): Promise<void> {
    const res = await call<ErrorBody>(t.url, 'POST', path, { key, body });
    expect(res.status, `${path} ${param}: ${JSON.stringify(res.body)}`).toBe(400);
    expect(res.body.error, path).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param });
  }

  it('refuses a lone surrogate in every field forwarded to the processor, before anything is written', async () => {
    const before = await counts();
    await refused('/v1/transactions', { amount: 1000, confirm: true, payment_method: `pm_card_visa${LONE}` }, 'payment_method');
    await refused('/v1/payment-intents', { amount: 1000, confirm: true, payment_method: LONE }, 'payment_method');
    await refused('/v1/transactions', { amount: 1000, description: `Coffee ${LONE}` }, 'description');
    await refused('/v1/transactions', { amount: 1000, metadata: { order: LONE } }, 'metadata[order]');
    await refused('/v1/transactions', { amount: 1000, metadata: { [`k${LONE}`]: 'v' } }, 'metadata[k\ufffd]');
    await refused('/v1/terminal/create-payment', { amount: 1000, description: LONE }, 'description');
    await refused('/v1/terminal/locations', { display_name: `Bar ${LONE}`, address: ADDRESS }, 'display_name');
    await refused('/v1/terminal/locations', { display_name: 'Bar', address: { ...ADDRESS, line1: LONE } }, 'address[line1]');
    await refused('/v1/terminal/locations', { display_name: 'Bar', address: { ...ADDRESS, city: '\udc00x' } }, 'address[city]');
    await refused('/v1/terminals', { name: `Till ${LONE}`, registration_code: 'simulated-wpe' }, 'name');
    await refused('/v1/terminals', { name: 'Till', registration_code: `simulated-wpe${LONE}` }, 'registration_code');
    await refused('/v1/checkout/sessions', { amount: 1000, customer_name: LONE }, 'customer_name');
    await refused('/v1/payment-links', { amount: 1000, description: LONE }, 'description');
    await refused('/v1/customers', { name: LONE }, 'name');
    expect(await counts()).toEqual(before);
  });

  it('refuses a lone surrogate in a refund reason and writes no refund', async () => {
    const paid = await api().post<{ data: { id: string; status: string } }>('/v1/transactions', { amount: 1000, confirm: true, payment_method: 'pm_card_visa' });
    expect(paid.status).toBe(201);
    await refused(`/v1/transactions/${paid.body.data.id}/refunds`, { reason: LONE }, 'reason');
    expect((await api().get<{ totalCount: number }>(`/v1/transactions/${paid.body.data.id}/refunds`)).body.totalCount).toBe(0);
  });

  it('refuses NUL and control characters, allowing tab and line breaks only in prose fields', async () => {
    const before = await counts();
    await refused('/v1/customers', { name: 'Ada\u0000' }, 'name');
    await refused('/v1/customers', { name: 'Ada\nLovelace' }, 'name');
    await refused('/v1/customers', { description: 'bell\u0007' }, 'description');
    await refused('/v1/customers', { description: 'c1\u0085' }, 'description');
    await refused('/v1/customers', { metadata: { 'a\u0000': 'b' } }, 'metadata[a\u0000]');
    await refused('/v1/customers', { metadata: { 'a\n': 'b' } }, 'metadata[a\n]');
    await refused('/v1/terminal/locations', { display_name: 'Bar\t', address: ADDRESS }, 'display_name');
    expect(await counts()).toEqual(before);
    const prose = await api().post<{ data: { description: string; metadata: Json } }>('/v1/customers', { name: 'Ada', description: 'line one\r\n\tline two', metadata: { note: 'a\nb' } });
    expect(prose.status).toBe(201);
    expect(prose.body.data.description).toBe('line one\r\n\tline two');
    const fine = await api().post('/v1/customers', { name: 'נועה 🙂 Zoë' });
    expect(fine.status).toBe(201);
  });

  it('checks query strings the same way', async () => {
    const res = await raw('GET', '/v1/events?type=%01');
    expect(res.status).toBe(400);
    expect((res.body as ErrorBody).error).toMatchObject({ code: 'parameter_invalid', param: 'type' });
    // qs leaves a malformed escape as it is: the value then fails its own schema, never the server.
    const bad = await raw('GET', '/v1/transactions?page=%ff');
    expect(bad.status).toBe(400);
  });

  it('checks the hosted-page submit the same way', async () => {
    const res = await raw('POST', '/checkout/cs_doesnotexist/start', JSON.stringify({ name: LONE }));
    expect(res.status).toBe(400);
    expect((res.body as ErrorBody).error).toMatchObject({ code: 'parameter_invalid', param: 'name' });
  });
});

describe('the real `pos server` process', () => {
  it('is still running and answering after a nested body, a malformed id and a lone surrogate', async () => {
    const dir = tempDir('pos-hostile-');
    seedDataDir(dir.path);
    const sk = (await adminMerchant(dir.path, 'Hostile Shop')).api_keys.sk_test;
    const server = await spawnServer(dir.path);
    try {
      let exited = false;
      void server.exited.then(() => (exited = true));
      const api = client(server.url, sk);
      const nest = await api.raw('POST', '/v1/customers', { rawBody: '['.repeat(4_000) + ']'.repeat(4_000), headers: { 'content-type': 'application/json' } });
      expect(nest.status).toBe(400);
      expect((await api.get('/v1/customers/%ff')).status).toBe(404);
      expect((await api.post('/v1/transactions', { amount: 1000, confirm: true, payment_method: LONE })).status).toBe(400);
      expect((await api.get('/v1/merchant')).status).toBe(200);
      expect(exited).toBe(false);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      dir.cleanup();
    }
  });
});
