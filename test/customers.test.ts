import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomerListSchema, CustomerSchema } from '../shared/contract/customers.js';
import { client, type Json } from './helpers/api.js';
import { openTestDb } from './helpers/db.js';
import { eventsOf, simulatorSdk } from './helpers/payments.js';
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

describe('customers on the processor, deleted, with their events', () => {
  async function processorIdOf(id: string): Promise<string> {
    const db = await openTestDb(t.dataDir);
    try {
      const [row] = await db.all<{ processor_customer_id: string }>('select processor_customer_id from customers where id = ?', id);
      return row?.processor_customer_id ?? '';
    } finally {
      await db.close();
    }
  }

  it('mirrors create, update and delete on the processor, each with its event', async () => {
    const stripe = simulatorSdk(t);
    const created = await api.post<{ data: Customer }>('/v1/customers', { name: 'Grace', email: 'grace@example.com', metadata: { tier: 'gold' } });
    expect(created.status).toBe(201);
    const id = created.body.data.id;
    const mirrorId = await processorIdOf(id);
    expect(mirrorId).toMatch(/^cus_/);
    expect(await stripe.customers.retrieve(mirrorId)).toMatchObject({ name: 'Grace', email: 'grace@example.com', metadata: { pos_customer_id: id } });

    const updated = await api.post<{ data: Customer }>(`/v1/customers/${created.body.data.reference}`, { name: 'Grace H.', email: null });
    expect(updated.body.data).toMatchObject({ name: 'Grace H.', email: null });
    expect(await stripe.customers.retrieve(mirrorId)).toMatchObject({ name: 'Grace H.', email: null });

    const deleted = await api.delete<{ data: Json }>(`/v1/customers/${id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ id, object: 'customer', deleted: true });
    expect(await stripe.customers.retrieve(mirrorId)).toMatchObject({ id: mirrorId, deleted: true });
    for (const [method, path] of [['GET', `/v1/customers/${id}`], ['POST', `/v1/customers/${id}`], ['DELETE', `/v1/customers/${created.body.data.reference}`]] as const) {
      const res = await api.raw<{ error: Json }>(method, path, method === 'POST' ? { body: { name: 'Back' } } : {});
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing' });
    }

    const events = await eventsOf(t.dataDir, id);
    expect(events.map((e) => e.type)).toEqual(['customer.created', 'customer.updated', 'customer.deleted']);
    for (const e of events) expect(e.data).toMatchObject({ id, is_test: true });
    expect(events[1]?.data).toMatchObject({ name: 'Grace H.', email: null });
    expect(events[2]?.data).toMatchObject({ deleted: true });
  });

  it('names the customer on the payment at the processor; a deleted one cannot be named (400 customer_id)', async () => {
    const stripe = simulatorSdk(t);
    const customer = (await api.post<{ data: Customer }>('/v1/customers', { name: 'Payer' })).body.data;
    const paid = await api.post<{ data: { payment_intent_id: string; customer_id: string } }>('/v1/transactions', { amount: 1200, customer_id: customer.id, payment_method: 'pm_card_visa', confirm: true });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    expect(paid.body.data.customer_id).toBe(customer.id);
    expect((await stripe.paymentIntents.retrieve(paid.body.data.payment_intent_id)).customer).toBe(await processorIdOf(customer.id));

    expect((await api.delete(`/v1/customers/${customer.id}`)).status).toBe(200);
    const refused = await api.post<{ error: Json }>('/v1/transactions', { amount: 1200, customer_id: customer.id });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', param: 'customer_id' });
  });

  it('keeps deleted customers out of the list, and each merchant and mode to its own', async () => {
    const shop = await t.merchant('Deleting Shop');
    const fresh = client(t.url, shop.keys.sk_test);
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c']) ids.push((await fresh.post<{ data: Customer }>('/v1/customers', { name })).body.data.id);
    expect((await fresh.delete(`/v1/customers/${ids[1]}`)).status).toBe(200);
    const list = await fresh.get<{ data: Customer[]; totalCount: number }>('/v1/customers');
    expect(list.body.totalCount).toBe(2);
    expect(list.body.data.map((c) => c.name)).toEqual(['c', 'a']);
    expect((await api.get(`/v1/customers/${ids[0]}`)).status).toBe(404);
    expect((await api.delete(`/v1/customers/${ids[0]}`)).status).toBe(404);
    const live = client(t.url, shop.keys.sk_live);
    expect((await live.get(`/v1/customers/${ids[0]}`)).status).toBe(404);
    const liveCustomer = await live.post<{ data: Customer & { is_test: boolean } }>('/v1/customers', { name: 'Live one' });
    expect(liveCustomer.status).toBe(201);
    expect(liveCustomer.body.data.is_test).toBe(false);
    expect((await eventsOf(t.dataDir, liveCustomer.body.data.id))[0]?.data).toMatchObject({ is_test: false });
    expect((await fresh.get<{ totalCount: number }>('/v1/customers')).body.totalCount).toBe(2);
  });
});

describe('/v1/openapi.json', () => {
  it('serves an OpenAPI 3.1 document generated from the schemas', async () => {
    const res = await client(t.url).get<{ openapi: string; paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } }>('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths)).toEqual(
      expect.arrayContaining(['/v1/merchant', '/v1/customers', '/v1/customers/{id}', '/v1/disputes', '/v1/disputes/{id}', '/v1/disputes/{id}/evidence', '/v1/disputes/{id}/close', '/v1/balance', '/v1/payouts', '/v1/payouts/{id}']),
    );
    expect(res.body.paths['/v1/customers']).toHaveProperty('post');
    expect(res.body.paths['/v1/customers/{id}']).toHaveProperty('delete');
    expect(res.body.components.schemas).toHaveProperty('Customer');
    expect(res.body.components.schemas).toHaveProperty('Error');
  });
});
