import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransactionListSchema } from '../shared/contract/transactions.js';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client, type Json } from './helpers/api.js';
import { startTestServer, type TestServer } from './helpers/server.js';

/** GET /v1/transactions?channel=counter|online (our extension: docs/api-choices.md). */
let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;

type Txn = { id: string; status: string; payment_method_type: string };
type List = { data: Txn[]; totalCount: number; page: number; size: number; lastPage: number };

const counterIds: string[] = [];
const onlineIds: string[] = [];

async function create(path: string, body: Json): Promise<Txn> {
  const res = await api.post<{ data: Txn }>(path, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Channel Shop');
  api = client(t.url, m.keys.sk_test);
  // Interleaved, oldest first: online, cash, terminal, online, online, cash, terminal, online.
  const plan: Array<[string, Json, 'counter' | 'online']> = [
    ['/v1/transactions', { amount: 1000 }, 'online'],
    ['/v1/transactions', { payment_method_type: 'cash', amount: 1100 }, 'counter'],
    ['/v1/terminal/create-payment', { amount: 1200 }, 'counter'],
    ['/v1/transactions', { amount: 1300, payment_method: 'pm_card_visa', confirm: true }, 'online'],
    ['/v1/transactions', { amount: 1400 }, 'online'],
    ['/v1/transactions', { payment_method_type: 'cash', amount: 1500 }, 'counter'],
    ['/v1/terminal/create-payment', { amount: 1600 }, 'counter'],
    ['/v1/transactions', { amount: 1700 }, 'online'],
  ];
  for (const [path, body, channel] of plan) {
    const txn = await create(path, body);
    (channel === 'counter' ? counterIds : onlineIds).unshift(txn.id);
  }
});
afterAll(() => t.stop());

async function list(query: string): Promise<List> {
  const res = await api.get<List>(`/v1/transactions?${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(TransactionListSchema.parse(res.body)).toBeTruthy();
  return res.body;
}

describe('GET /v1/transactions?channel=', () => {
  it('lists only counter payments (terminal and cash), newest first, with their count', async () => {
    const page = await list('channel=counter&size=10');
    expect(page.data.map((x) => x.id)).toEqual(counterIds);
    expect(page.data.every((x) => ['terminal', 'cash'].includes(x.payment_method_type))).toBe(true);
    expect(page).toMatchObject({ totalCount: 4, page: 1, size: 10, lastPage: 1 });
  });

  it('lists only online payments, newest first, with their count', async () => {
    const page = await list('channel=online');
    expect(page.data.map((x) => x.id)).toEqual(onlineIds);
    expect(page).toMatchObject({ totalCount: 4, lastPage: 1 });
  });

  it('pages through a channel: full pages, the right lastPage, nothing past it', async () => {
    const first = await list('channel=counter&size=3');
    const second = await list('channel=counter&size=3&page=2');
    expect(first).toMatchObject({ totalCount: 4, lastPage: 2 });
    expect(first.data.map((x) => x.id)).toEqual(counterIds.slice(0, 3));
    expect(second.data.map((x) => x.id)).toEqual(counterIds.slice(3));
    expect((await list('channel=online&size=3&page=3')).data).toEqual([]);
  });

  it('combines with status, counted exactly', async () => {
    const paidCounter = await list('channel=counter&status=succeeded');
    expect(paidCounter.data.map((x) => x.payment_method_type)).toEqual(['cash', 'cash']);
    expect(paidCounter.totalCount).toBe(2);
    const pendingOnline = await list('channel=online&status=pending&size=2&page=2');
    expect(pendingOnline).toMatchObject({ totalCount: 3, lastPage: 2 });
    expect(pendingOnline.data).toHaveLength(1);
  });

  it('keeps the counts of every channel in step with the unfiltered list', async () => {
    const all = await list('size=1');
    const [counter, online] = [await list('channel=counter&size=1'), await list('channel=online&size=1')];
    expect(counter.totalCount + online.totalCount).toBe(all.totalCount);
  });

  it('refuses any other channel with a 400 naming the param', async () => {
    for (const bad of ['web', 'COUNTER', '', 'counter,online']) {
      const res = await api.get<{ error: { type: string; param?: string } }>(`/v1/transactions?channel=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', param: 'channel' });
    }
    const twice = await api.get<{ error: { param?: string } }>('/v1/transactions?channel=counter&channel=online');
    expect(twice.status).toBe(400);
    expect(twice.body.error.param).toBe('channel');
  });

  it('is in the OpenAPI document', async () => {
    const res = await api.get<{ paths: Record<string, { get?: { parameters?: Array<{ name: string; schema?: { enum?: string[] } }> } }> }>('/v1/openapi.json');
    const param = res.body.paths['/v1/transactions']?.get?.parameters?.find((p) => p.name === 'channel');
    expect(param?.schema?.enum).toEqual(['counter', 'online']);
  });
});
