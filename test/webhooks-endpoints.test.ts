import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, type Json } from './helpers/api.js';
import { startTestServer, type TestServer } from './helpers/server.js';

interface Endpoint {
  id: string;
  reference: string;
  url: string;
  status: string;
  is_test: boolean;
  events: string[];
  secret?: string;
  description: string | null;
  disabled_reason: string | null;
  previous_secret_expires_at: string | null;
}

let t: TestServer;
let testKey: string;
let liveKey: string;

beforeAll(async () => {
  t = await startTestServer();
  const m = await t.merchant();
  testKey = m.keys.sk_test;
  liveKey = m.keys.sk_live;
});
afterAll(() => t.stop());

describe('webhook endpoints (spec §4.8)', () => {
  it('creates an endpoint bound to the key’s mode, with a secret shown once', async () => {
    const api = client(t.url, testKey);
    const res = await api.post<{ data: Endpoint }>('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/hooks', description: 'orders' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ url: 'http://127.0.0.1:9/hooks', is_test: true, status: 'active', events: ['*'], description: 'orders' });
    expect(res.body.data.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(res.body.data.reference).toMatch(/^we_/);

    const got = await api.get<{ data: Endpoint }>(`/v1/webhook-endpoints/${res.body.data.reference}`);
    expect(got.status).toBe(200);
    expect(got.body.data.id).toBe(res.body.data.id);
    expect(got.body.data.secret).toBeUndefined();

    const live = await client(t.url, liveKey).post<{ data: Endpoint }>('/v1/webhook-endpoints', { url: 'https://example.com/hooks' });
    expect(live.body.data.is_test).toBe(false);
    // The other mode never sees it.
    expect((await client(t.url, liveKey).get(`/v1/webhook-endpoints/${res.body.data.id}`)).status).toBe(404);
    const list = await client(t.url, liveKey).get<{ data: Endpoint[]; totalCount: number }>('/v1/webhook-endpoints');
    expect(list.body.data.map((e) => e.id)).toEqual([live.body.data.id]);
  });

  it('refuses invalid URLs and filters with 400', async () => {
    const api = client(t.url, testKey);
    for (const body of [{ url: 'not a url' }, { url: 'ftp://example.com/x' }, { url: 'https://u:p@example.com' }, { url: '' }, {}, { url: 'https://example.com', events: ['Payment Succeeded'] }, { url: 'https://example.com', events: [] }]) {
      const res = await api.post<{ error: Json }>('/v1/webhook-endpoints', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.type).toBe('invalid_request_error');
    }
    const res = await api.post<{ error: Json }>('/v1/webhook-endpoints', { url: 'nope' });
    expect(res.body.error.param).toBe('url');
  });

  it('lists, updates, disables, enables, rolls the secret and deletes', async () => {
    const api = client(t.url, testKey);
    const created = (await api.post<{ data: Endpoint }>('/v1/webhook-endpoints', { url: 'http://127.0.0.1:9/a' })).body.data;
    const list = await api.get<{ data: Endpoint[]; totalCount: number; page: number; size: number; lastPage: number }>('/v1/webhook-endpoints?size=1');
    expect(list.body).toMatchObject({ page: 1, size: 1 });
    expect(list.body.data[0]?.id).toBe(created.id);
    expect(list.body.totalCount).toBeGreaterThanOrEqual(2);

    const updated = await api.post<{ data: Endpoint }>(`/v1/webhook-endpoints/${created.id}`, { url: 'http://127.0.0.1:9/b', events: ['payment.*'], description: 'x' });
    expect(updated.body.data).toMatchObject({ url: 'http://127.0.0.1:9/b', events: ['payment.*'], description: 'x', status: 'active' });
    const disabled = await api.post<{ data: Endpoint }>(`/v1/webhook-endpoints/${created.id}`, { status: 'disabled' });
    expect(disabled.body.data).toMatchObject({ status: 'disabled', disabled_reason: 'disabled by the merchant' });
    const enabled = await api.post<{ data: Endpoint }>(`/v1/webhook-endpoints/${created.id}`, { status: 'enabled', description: null });
    expect(enabled.body.data).toMatchObject({ status: 'active', disabled_reason: null, description: null });
    expect((await api.post(`/v1/webhook-endpoints/${created.id}`, { url: 'mailto:x@y.z' })).status).toBe(400);
    expect((await api.post(`/v1/webhook-endpoints/${created.id}`, { secret: 'whsec_x' })).status).toBe(400);

    const rolled = await api.post<{ data: Endpoint }>(`/v1/webhook-endpoints/${created.id}/roll-secret`, {});
    expect(rolled.status).toBe(200);
    expect(rolled.body.data.secret).toMatch(/^whsec_/);
    expect(rolled.body.data.secret).not.toBe(created.secret);
    const expires = Date.parse(rolled.body.data.previous_secret_expires_at ?? '');
    expect(expires - Date.now()).toBeGreaterThan(23.9 * 3_600_000);

    const deleted = await api.delete<{ data: Json }>(`/v1/webhook-endpoints/${created.id}`);
    expect(deleted.body.data).toEqual({ id: created.id, object: 'webhook_endpoint', deleted: true });
    expect((await api.get(`/v1/webhook-endpoints/${created.id}`)).status).toBe(404);
    expect((await api.delete(`/v1/webhook-endpoints/${created.id}`)).status).toBe(404);
  });

  it('refuses private and loopback targets when egress is public', async () => {
    const strict = await startTestServer({ webhookEgress: 'public' });
    try {
      const api = client(strict.url, (await strict.merchant()).keys.sk_test);
      for (const url of ['http://127.0.0.1:3000/hooks', 'http://localhost/hooks', 'http://10.0.0.5/hooks', 'http://[::1]/x', 'http://169.254.169.254/latest']) {
        const res = await api.post<{ error: Json }>('/v1/webhook-endpoints', { url });
        expect(res.status, url).toBe(400);
        expect(res.body.error).toMatchObject({ param: 'url', code: 'parameter_invalid' });
      }
      expect((await api.post('/v1/webhook-endpoints', { url: 'https://shop.example.com/hooks' })).status).toBe(201);
    } finally {
      await strict.stop();
    }
  });
});
