import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomerListSchema, CustomerSchema } from '../server/schemas/customers.js';
import { client, type Json } from './helpers/api.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let t: TestServer;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  t = await startTestServer();
  api = client(t.url, (await t.merchant()).keys.sk_test);
});
afterAll(() => t.stop());

type Customer = { id: string; reference: string; name: string | null; email: string | null; metadata: Record<string, string> };

describe('/v1/customers', () => {
  it('creates, retrieves by uuid and reference, and updates a customer', async () => {
    const created = await api.post<{ data: Customer }>('/v1/customers', { name: 'Ada', email: 'ada@example.com', metadata: { tier: 'gold', keep: 'yes' } });
    expect(created.status).toBe(201);
    expect(CustomerSchema.parse(created.body.data)).toBeTruthy();
    expect(created.body.data.reference).toMatch(/^cus_/);
    for (const ref of [created.body.data.id, created.body.data.reference]) {
      const got = await api.get<{ data: Customer }>(`/v1/customers/${ref}`);
      expect(got.status).toBe(200);
      expect(got.body.data).toEqual(created.body.data);
    }
    const updated = await api.post<{ data: Customer }>(`/v1/customers/${created.body.data.id}`, { email: null, metadata: { tier: 'platinum', keep: '' } });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toMatchObject({ name: 'Ada', email: null, metadata: { tier: 'platinum' } });
  });

  it('pages newest first with size, its per_page alias, and the list envelope', async () => {
    const fresh = client(t.url, (await t.merchant('Pager')).keys.sk_test);
    const names = Array.from({ length: 23 }, (_, i) => `c${i + 1}`);
    for (const name of names) expect((await fresh.post('/v1/customers', { name })).status).toBe(201);

    const first = await fresh.get<{ data: Customer[]; totalCount: number; page: number; size: number; lastPage: number }>('/v1/customers');
    expect(CustomerListSchema.parse(first.body)).toBeTruthy();
    expect(first.body).toMatchObject({ totalCount: 23, page: 1, size: 10, lastPage: 3 });
    expect(first.body.data.map((c) => c.name)).toEqual(names.slice(-10).reverse());

    const aliased = await fresh.get<{ data: Customer[]; size: number; page: number }>('/v1/customers?per_page=7&page=4');
    expect(aliased.body.size).toBe(7);
    expect(aliased.body.page).toBe(4);
    expect(aliased.body.data.map((c) => c.name)).toEqual(['c2', 'c1']);

    const all: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const res = await fresh.get<{ data: Customer[] }>(`/v1/customers?size=10&page=${page}`);
      all.push(...res.body.data.map((c) => c.name ?? ''));
    }
    expect(all).toEqual([...names].reverse());

    const past = await fresh.get<{ data: Customer[]; totalCount: number; lastPage: number }>('/v1/customers?page=99');
    expect(past.body).toMatchObject({ data: [], totalCount: 23, lastPage: 3 });
  });

  it('refuses list sizes outside 1–100 and pages below 1', async () => {
    for (const query of ['size=0', 'size=101', 'per_page=0', 'per_page=500', 'page=0', 'size=2.5']) {
      const res = await api.get<{ error: Json }>(`/v1/customers?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.param).toBe(query.split('=')[0]);
    }
    const ok = await api.get<{ size: number }>('/v1/customers?size=100');
    expect(ok.body.size).toBe(100);
  });
});

describe('/v1/openapi.json', () => {
  it('serves an OpenAPI 3.1 document generated from the schemas', async () => {
    const res = await client(t.url).get<{ openapi: string; paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } }>('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(['/v1/merchant', '/v1/customers', '/v1/customers/{id}']));
    expect(res.body.paths['/v1/customers']).toHaveProperty('post');
    expect(res.body.components.schemas).toHaveProperty('Customer');
    expect(res.body.components.schemas).toHaveProperty('Error');
  });
});
