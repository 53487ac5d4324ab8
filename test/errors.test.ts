import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRoutes } from '../server/app.js';
import { ErrorBodySchema } from '../shared/contract/common.js';
import { call, client, type Json } from './helpers/api.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let t: TestServer;
let key: string;

beforeAll(async () => {
  t = await startTestServer();
  key = (await t.merchant()).keys.sk_test;
});
afterAll(() => t.stop());

function expectErrorBody(body: unknown): void {
  expect(ErrorBodySchema.safeParse(body).success, JSON.stringify(body)).toBe(true);
}

describe('error bodies (spec §7)', () => {
  it('answers unknown routes and methods with 404 resource_missing', async () => {
    const api = client(t.url, key);
    for (const [method, path] of [
      ['GET', '/v1/nothing-here'],
      ['DELETE', '/v1/merchant'],
      ['PUT', '/v1/customers'],
      ['GET', '/'],
      ['GET', '/v2/merchant'],
    ] as const) {
      const res = await api.raw<Json>(method, path);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toMatchObject({ error: { type: 'invalid_request_error', code: 'resource_missing' } });
    }
  });

  it('answers unknown ids with 404 resource_missing', async () => {
    const api = client(t.url, key);
    for (const id of ['00000000-0000-4000-8000-000000000000', 'cus_doesnotexist', 'x']) {
      const res = await api.get<Json>(`/v1/customers/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: { code: 'resource_missing' } });
    }
  });

  it('answers malformed JSON with 400, a non-JSON body with 415, an oversized body with 413', async () => {
    const api = client(t.url, key);
    const bad = await api.raw<Json>('POST', '/v1/customers', { rawBody: '{"name": ', headers: { 'content-type': 'application/json' } });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_json' } });
    const form = await api.raw<Json>('POST', '/v1/customers', { rawBody: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(form.status).toBe(415);
    const big = await api.raw<Json>('POST', '/v1/customers', { body: { description: 'x'.repeat(300 * 1024) } });
    expect(big.status).toBe(413);
    expectErrorBody(big.body);
  });

  it('names the param of wrong types, out-of-range values and unknown fields', async () => {
    const api = client(t.url, key);
    const cases: [unknown, string, string][] = [
      [{ name: 42 }, 'name', 'parameter_invalid'],
      [{ email: 'not-an-email' }, 'email', 'parameter_invalid'],
      [{ metadata: { k: 1 } }, 'metadata[k]', 'parameter_invalid'],
      [{ metadata: 'x' }, 'metadata', 'parameter_invalid'],
      [{ status: 'succeeded' }, 'status', 'parameter_unknown'],
      [{ is_test: false }, 'is_test', 'parameter_unknown'],
      [{ amount_refunded: 5 }, 'amount_refunded', 'parameter_unknown'],
      [{ platform_fee_cents: 0 }, 'platform_fee_cents', 'parameter_unknown'],
      [{ id: '00000000-0000-4000-8000-000000000000' }, 'id', 'parameter_unknown'],
      [[1, 2], '', 'parameter_invalid'],
    ];
    for (const [body, param, code] of cases) {
      const res = await api.post<{ error: Json }>('/v1/customers', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.type).toBe('invalid_request_error');
      expect(res.body.error.code).toBe(code);
      if (param) expect(res.body.error.param).toBe(param);
    }
    const list = await api.get<{ error: Json }>('/v1/customers?size=101');
    expect(list.status).toBe(400);
    expect(list.body.error.param).toBe('size');
    const unknownQuery = await api.get<{ error: Json }>('/v1/customers?sort=asc');
    expect(unknownQuery.status).toBe(400);
    expect(unknownQuery.body.error.param).toBe('sort');
  });

  // Each garbage id, body and query reaches every route at least once; they are paired in turn
  // rather than multiplied, since a path id and a body are parsed apart and their product only
  // repeated the same refusals (over ten thousand requests, a minute of the suite).
  it('answers every route with a 4xx and the error body, never a 500, whatever the input', async () => {
    const garbageBodies: string[] = [
      '',
      'null',
      'true',
      '"string"',
      '12345678901234567890123456789',
      '[]',
      '[{}]',
      '{}',
      '{"__proto__": {"admin": true}}',
      '{"constructor": {"prototype": {"x": 1}}}',
      '{"amount": -1, "currency": "💸", "metadata": {"": ""}}',
      '{"amount": 1e309}',
      '{"amount": "50", "size": null, "page": {}}',
      '{"name": {"$gt": ""}}',
      JSON.stringify({ deep: JSON.parse('['.repeat(500) + ']'.repeat(500)) }),
      '\u0000\u0001\u0002',
      '{"a":' + '"x"'.repeat(3) + '}',
      '\ufeff{"name":"bom"}',
    ];
    const garbageIds = ['%00', '..%2F..%2Fetc%2Fpasswd', 'a'.repeat(5000), "' OR 1=1 --", '%F0%9F%92%B8', '-1', '0'];
    const garbageQueries = ['?page=0', '?page=-1', '?page=abc', '?size=0', '?size=1e3', '?per_page=x', '?page[]=1', '?size[a]=1', '?%00=1', `?page=${'9'.repeat(400)}`];
    // Another content type is refused before any body is read: once per route is enough.
    const sends: { body: string; contentType: string }[] = [...garbageBodies.map((body) => ({ body, contentType: 'application/json' })), { body: '{"name":"x"}', contentType: 'text/plain' }];
    let requests = 0;
    for (const doc of apiRoutes) {
      const pathWith = (i: number) => doc.path.replace('{id}', garbageIds[i % garbageIds.length] ?? '');
      // As many requests as the longest list, so every id, query and body is sent at least once.
      const count = Math.max(doc.path.includes('{id}') ? garbageIds.length : 1, doc.method === 'get' ? garbageQueries.length : sends.length);
      for (let i = 0; i < count; i++) {
        const send = doc.method === 'get' ? undefined : sends[i % sends.length];
        const path = pathWith(i) + (doc.method === 'get' ? garbageQueries[i % garbageQueries.length] : '');
        const res = await call(t.url, doc.method.toUpperCase(), path, { key, ...(send ? { rawBody: send.body, headers: { 'content-type': send.contentType } } : {}) });
        requests += 1;
        expect(res.status, `${doc.method} ${path} ${send?.body.slice(0, 40)}`).toBeLessThan(500);
        if (res.status >= 400) expectErrorBody(res.body);
      }
    }
    expect(requests).toBeGreaterThan(100);
    // Nothing above slipped a prototype-polluting key into a live object.
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});
