import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../shared/time.js';
import { rollMerchantKeys, type CreatedMerchant } from '../server/accounts/merchants.js';
import { client, type Json } from './helpers/api.js';
import { startTestServer, type TestServer } from './helpers/server.js';

let t: TestServer;
let a: CreatedMerchant;
let b: CreatedMerchant;

beforeAll(async () => {
  t = await startTestServer();
  a = await t.merchant('Merchant A');
  b = await t.merchant('Merchant B');
});
afterAll(() => t.stop());

describe('authentication (spec §5)', () => {
  it('refuses a missing key with 401 authentication_error', async () => {
    const res = await client(t.url).get<Json>('/v1/merchant');
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ error: { type: 'authentication_error' } });
  });

  it('refuses an unknown, malformed or truncated key with 401', async () => {
    for (const header of ['Bearer sk_test_nope', 'Bearer ' + a.keys.sk_test.slice(0, -1), 'Basic abc', 'Bearer', a.keys.sk_test]) {
      const res = await client(t.url).get<Json>('/v1/merchant', { authorization: header });
      expect(res.status, header).toBe(401);
      expect(res.body).toMatchObject({ error: { type: 'authentication_error' } });
    }
  });

  it('refuses publishable keys on secret endpoints', async () => {
    for (const key of [a.keys.pk_test, a.keys.pk_live]) {
      const res = await client(t.url, key).get<Json>('/v1/merchant');
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ error: { type: 'permission_error', code: 'secret_key_required' } });
    }
  });

  it('lets the key alone select the merchant and the mode', async () => {
    const test = await client(t.url, a.keys.sk_test).get<{ data: Json }>('/v1/merchant');
    const live = await client(t.url, a.keys.sk_live).get<{ data: Json }>('/v1/merchant');
    expect(test.status).toBe(200);
    expect(test.body.data).toMatchObject({ id: a.merchant.id, business_name: 'Merchant A', is_test: true });
    expect(live.body.data).toMatchObject({ id: a.merchant.id, is_test: false });
    const other = await client(t.url, b.keys.sk_test).get<{ data: Json }>('/v1/merchant');
    expect(other.body.data).toMatchObject({ id: b.merchant.id, business_name: 'Merchant B' });
  });

  it('keeps a rolled key working for the grace period, then refuses it', async () => {
    const c = await t.merchant('Roller');
    const [rolled] = await rollMerchantKeys(t.server.store, systemClock, c.merchant.id, ['test'], 60_000);
    expect(rolled?.key).toMatch(/^sk_test_/);
    expect((await client(t.url, c.keys.sk_test).get('/v1/merchant')).status).toBe(200);
    expect((await client(t.url, rolled?.key).get('/v1/merchant')).status).toBe(200);
    // A second roll with no grace retires both earlier keys at once.
    const [again] = await rollMerchantKeys(t.server.store, systemClock, c.merchant.id, ['test'], 0);
    expect((await client(t.url, c.keys.sk_test).get('/v1/merchant')).status).toBe(401);
    expect((await client(t.url, rolled?.key).get('/v1/merchant')).status).toBe(401);
    expect((await client(t.url, again?.key).get('/v1/merchant')).status).toBe(200);
    // The live key was not rolled.
    expect((await client(t.url, c.keys.sk_live).get('/v1/merchant')).status).toBe(200);
  });
});

describe('isolation between merchants and modes', () => {
  it('never shows one merchant or mode the objects of another (404, not 403)', async () => {
    const owners = [
      { name: 'A test', key: a.keys.sk_test },
      { name: 'A live', key: a.keys.sk_live },
      { name: 'B test', key: b.keys.sk_test },
      { name: 'B live', key: b.keys.sk_live },
    ];
    const created = new Map<string, { id: string; reference: string }>();
    for (const owner of owners) {
      const res = await client(t.url, owner.key).post<{ data: { id: string; reference: string } }>('/v1/customers', { name: owner.name });
      expect(res.status).toBe(201);
      created.set(owner.name, res.body.data);
    }
    for (const reader of owners) {
      const api = client(t.url, reader.key);
      for (const owner of owners) {
        const object = created.get(owner.name);
        if (!object) throw new Error('missing');
        for (const ref of [object.id, object.reference]) {
          const read = await api.get<Json>(`/v1/customers/${ref}`);
          const write = await api.post<Json>(`/v1/customers/${ref}`, { description: `written by ${reader.name}` });
          if (reader.name === owner.name) {
            expect(read.status).toBe(200);
            expect(write.status).toBe(200);
          } else {
            expect(read.status, `${reader.name} reading ${owner.name}`).toBe(404);
            expect(read.body).toMatchObject({ error: { type: 'invalid_request_error', code: 'resource_missing' } });
            expect(write.status, `${reader.name} writing ${owner.name}`).toBe(404);
          }
        }
      }
      const list = await api.get<{ data: { name: string }[]; totalCount: number }>('/v1/customers?size=100');
      expect(list.body.data.map((c) => c.name)).toEqual([reader.name]);
      expect(list.body.totalCount).toBe(1);
    }
    // Only the owner's own writes landed.
    for (const owner of owners) {
      const object = created.get(owner.name);
      const res = await client(t.url, owner.key).get<{ data: { description: string } }>(`/v1/customers/${object?.id}`);
      expect(res.body.data.description).toBe(`written by ${owner.name}`);
    }
  });
});
