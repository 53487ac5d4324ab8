import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { PRESETS } from '../shared/contract/permissions.js';
import { client, type Json } from './helpers/api.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * Restricted keys through real HTTP: a counter key takes a terminal payment end
 * to end and is refused refunds and keys; revocation is immediate (across instances on PostgreSQL:
 * test/postgres-instances.test.ts); rolls keep the old key for its grace; lists show last four only.
 */
let t: TestServer;
let m: CreatedMerchant;
let owner: ReturnType<typeof client>;
let reader: { id: string; processor_terminal_id: string };

const ADDRESS = { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' };

type Key = Json & { id: string; secret: string; last4: string; scopes: string[] | null; type: string; mode: string; status: string; expires_at: string | null; revoked_at: string | null };
type ErrorBody = { error: { type: string; code?: string; message: string; param?: string; required_scope?: string } };

async function createKey(body: Json, key = m.keys.sk_test): Promise<Key> {
  const res = await client(t.url, key).post<{ data: Key }>('/v1/api-keys', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Corner Café');
  owner = client(t.url, m.keys.sk_test);
  expect((await owner.post('/v1/terminal/locations', { display_name: 'Front counter', address: ADDRESS })).status).toBe(201);
  const registered = await owner.post<{ data: { id: string; processor_terminal_id: string } }>('/v1/terminals', { name: 'Till 1', registration_code: 'simulated-wpe' });
  expect(registered.status).toBe(201);
  reader = registered.body.data;
});
afterAll(async () => {
  await t.stop();
});

describe('creating restricted keys', () => {
  it('makes an rk_test_ key from a preset, shown once, with the preset’s permissions', async () => {
    const key = await createKey({ name: 'Counter PC', preset: 'counter' });
    expect(key.secret).toMatch(/^rk_test_[0-9A-Za-z]{43}$/);
    expect(key).toMatchObject({ object: 'api_key', type: 'restricted', name: 'Counter PC', mode: 'test', status: 'active', last4: key.secret.slice(-4), expires_at: null, revoked_at: null });
    expect(key.scopes).toEqual([...PRESETS.counter]);
  });

  it('follows the creating key’s mode, and lists keep the modes apart', async () => {
    const live = await createKey({ name: 'Live reports', preset: 'reporting' }, m.keys.sk_live);
    expect(live.secret).toMatch(/^rk_live_/);
    expect(live.mode).toBe('live');
    expect((await client(t.url, live.secret).get<{ data: Json }>('/v1/merchant')).body.data).toMatchObject({ is_test: false });
    const testList = await owner.get<{ data: Key[] }>('/v1/api-keys');
    expect(testList.body.data.map((k) => k.id)).not.toContain(live.id);
  });

  it('joins scopes and a preset, and drops a read its write includes', async () => {
    const key = await createKey({ name: 'Mixed', scopes: ['customers:read', 'customers:write', 'refunds:read'], preset: 'webhooks' });
    expect(key.scopes).toEqual(['refunds:read', 'customers:write', 'webhooks:write', 'events:read']);
  });

  it('refuses unknown permissions, no permissions and a missing name with 400 naming the field', async () => {
    const unknown = await owner.post<ErrorBody>('/v1/api-keys', { name: 'Bad', scopes: ['transactions:read', 'refunds:delete'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ type: 'invalid_request_error', code: 'parameter_invalid', param: 'scopes[1]' });
    for (const body of [{ name: 'Nothing' }, { name: 'Empty', scopes: [] }]) {
      const none = await owner.post<ErrorBody>('/v1/api-keys', body);
      expect(none.status).toBe(400);
      expect(none.body.error).toMatchObject({ code: 'parameter_missing', param: 'scopes' });
    }
    const nameless = await owner.post<ErrorBody>('/v1/api-keys', { preset: 'counter' });
    expect(nameless.status).toBe(400);
    expect(nameless.body.error).toMatchObject({ code: 'parameter_missing', param: 'name' });
    const preset = await owner.post<ErrorBody>('/v1/api-keys', { name: 'x', preset: 'everything' });
    expect(preset.body.error).toMatchObject({ code: 'parameter_invalid', param: 'preset' });
  });

  it('is the secret key’s job only: restricted and publishable keys get 403', async () => {
    const counter = await createKey({ name: 'Counter', preset: 'counter' });
    const reporting = await createKey({ name: 'Reports', preset: 'reporting' });
    for (const key of [counter.secret, reporting.secret]) {
      const made = await client(t.url, key).post<ErrorBody>('/v1/api-keys', { name: 'Escalate', scopes: ['refunds:write'] });
      expect(made.status).toBe(403);
      expect(made.body.error).toMatchObject({ type: 'permission_error', code: 'secret_key_required' });
      const listed = await client(t.url, key).get<ErrorBody>('/v1/api-keys');
      expect(listed.status).toBe(403);
      expect(listed.body.error.type).toBe('permission_error');
      expect((await client(t.url, key).post<ErrorBody>(`/v1/api-keys/${counter.id}/revoke`)).status).toBe(403);
      expect((await client(t.url, key).post<ErrorBody>(`/v1/api-keys/${counter.id}/roll`, { grace_hours: 0 })).status).toBe(403);
    }
    expect((await client(t.url, m.keys.pk_test).get<ErrorBody>('/v1/api-keys')).status).toBe(403);
  });
});

describe('a counter key at the counter', () => {
  let counter: Key;
  let api: ReturnType<typeof client>;
  beforeAll(async () => {
    counter = await createKey({ name: 'Till 1 PC', preset: 'counter' });
    api = client(t.url, counter.secret);
  });

  it('runs a terminal payment end to end: create, send to the reader, tap, succeeded', async () => {
    expect((await api.get<{ data: Json[] }>('/v1/terminal/readers')).body.data.map((r) => r.id)).toContain(reader.id);
    const created = await api.post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 1250, terminal_id: reader.id });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const processed = await api.post<{ data: Json }>('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader.processor_terminal_id });
    expect(processed.status, JSON.stringify(processed.body)).toBe(200);
    const tap = await api.post<{ data: Json }>('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id });
    expect(tap.status, JSON.stringify(tap.body)).toBe(200);
    const txn = await eventually(async () => {
      const res = await api.get<{ data: { status: string; amount: number; card_last_four: string } }>(`/v1/transactions/${created.body.data.id}`);
      return res.body.data.status !== 'pending' ? res.body.data : undefined;
    });
    expect(txn).toMatchObject({ status: 'succeeded', amount: 1250, card_last_four: '4242' });

    // What it may not do: refund it (403 naming refunds:write), see keys, or touch customers.
    const refund = await api.post<ErrorBody>(`/v1/transactions/${created.body.data.id}/refunds`, {});
    expect(refund.status).toBe(403);
    expect(refund.body.error).toMatchObject({ type: 'permission_error', code: 'missing_scope', required_scope: 'refunds:write' });
    expect(refund.body.error.message).toContain('`refunds:write`');
    const keys = await api.get<ErrorBody>('/v1/api-keys');
    expect(keys.status).toBe(403);
    expect(keys.body.error).toMatchObject({ type: 'permission_error', code: 'secret_key_required' });
    const customers = await api.get<ErrorBody>('/v1/customers');
    expect(customers.status).toBe(403);
    expect(customers.body.error.required_scope).toBe('customers:read');
    // The owner still refunds with the secret key.
    expect((await owner.post(`/v1/transactions/${created.body.data.id}/refunds`, {})).status).toBe(201);
  });

  it('reads what the counter shows: the merchant, recent payments, locations, events', async () => {
    for (const path of ['/v1/merchant', '/v1/transactions?size=12', '/v1/terminal/locations', '/v1/terminal/readers', '/v1/events?type=payment.succeeded']) {
      expect((await api.get(path)).status, path).toBe(200);
    }
    // Payouts are not the counter's to read, in the event log either (test/event-visibility.test.ts).
    const payouts = await api.get<ErrorBody>('/v1/events?type=payout.paid');
    expect(payouts.status).toBe(403);
    expect(payouts.body.error).toMatchObject({ code: 'missing_scope', required_scope: 'payouts:read' });
  });

  it('connects the agent’s websocket; a key without terminal:write is refused naming it', async () => {
    const reporting = await createKey({ name: 'Reports', preset: 'reporting' });
    const url = `${t.url.replace(/^http/, 'ws')}/v1/agent/connect`;
    const refused = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(url, { headers: { authorization: `Bearer ${reporting.secret}` } });
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.on('open', () => reject(new Error('a reporting key opened the agent websocket')));
      ws.on('error', () => undefined);
    });
    expect(refused).toBe(403);

    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${counter.secret}` } });
    const welcome = await new Promise<Json>((resolve, reject) => {
      ws.on('open', () => ws.send(JSON.stringify({ type: 'hello', protocol: 1, agent_id: randomUUID(), name: 'counter pc', version: 'test', heartbeat_ms: 5_000, cursor: null })));
      ws.on('message', (data: Buffer) => resolve(JSON.parse(data.toString()) as Json));
      ws.on('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
      ws.on('error', reject);
    });
    ws.close();
    expect(welcome).toMatchObject({ type: 'welcome', mode: 'test' });
  });
});

describe('listing, rolling and revoking', () => {
  it('lists every key of the mode by its last four characters, never the key', async () => {
    const made = await createKey({ name: 'Listed', preset: 'reporting' });
    const list = await owner.get<{ data: Key[] }>('/v1/api-keys');
    expect(list.status).toBe(200);
    const text = JSON.stringify(list.body);
    for (const secret of [made.secret, m.keys.sk_test, m.keys.pk_test]) expect(text).not.toContain(secret.slice(8));
    expect(list.body.data.every((k) => !('secret' in k))).toBe(true);
    const listed = list.body.data.find((k) => k.id === made.id);
    expect(listed).toMatchObject({ type: 'restricted', name: 'Listed', last4: made.secret.slice(-4), scopes: made.scopes, status: 'active' });
    expect(list.body.data.filter((k) => k.type === 'secret').map((k) => k.last4)).toContain(m.keys.sk_test.slice(-4));
    expect(list.body.data.filter((k) => k.type === 'publishable').map((k) => k.last4)).toContain(m.keys.pk_test.slice(-4));
  });

  it('rolls a key: the new one has the same permissions, the old one works until its grace ends', async () => {
    const first = await createKey({ name: 'Rolled', preset: 'reporting' });
    const roll = await owner.post<{ data: Key & { replaced: { id: string; expires_at: string } } }>(`/v1/api-keys/${first.id}/roll`, { grace_hours: 1 });
    expect(roll.status, JSON.stringify(roll.body)).toBe(201);
    const next = roll.body.data;
    expect(next.secret).toMatch(/^rk_test_/);
    expect(next).toMatchObject({ name: 'Rolled', scopes: first.scopes, status: 'active', replaced: { id: first.id } });
    expect(Date.parse(next.replaced.expires_at) - Date.now()).toBeGreaterThan(59 * 60_000);
    expect((await client(t.url, first.secret).get('/v1/transactions')).status).toBe(200);
    expect((await client(t.url, next.secret).get('/v1/transactions')).status).toBe(200);
    expect((await client(t.url, next.secret).post<ErrorBody>('/v1/customers', {})).body.error?.required_scope).toBe('customers:write');
    const listed = (await owner.get<{ data: Key[] }>('/v1/api-keys')).body.data.find((k) => k.id === first.id);
    expect(listed).toMatchObject({ status: 'expiring', expires_at: next.replaced.expires_at });

    // Rolling with no grace stops the key at once; the first key keeps its own hour, not extended.
    const again = await owner.post<{ data: Key }>(`/v1/api-keys/${next.id}/roll`, { grace_hours: 0 });
    expect(again.status).toBe(201);
    expect((await client(t.url, next.secret).get('/v1/transactions')).status).toBe(401);
    expect((await client(t.url, again.body.data.secret).get('/v1/transactions')).status).toBe(200);
    expect((await client(t.url, first.secret).get('/v1/transactions')).status).toBe(200);
    const stale = await owner.post<ErrorBody>(`/v1/api-keys/${next.id}/roll`, {});
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe('api_key_inactive');
    const bad = await owner.post<ErrorBody>(`/v1/api-keys/${again.body.data.id}/roll`, { grace_hours: 169 });
    expect(bad.body.error).toMatchObject({ code: 'parameter_invalid', param: 'grace_hours' });
  });

  it('revokes a restricted key: 401 on the very next request, even with the key remembered', async () => {
    const key = await createKey({ name: 'Revoked', preset: 'counter' });
    const api = client(t.url, key.secret);
    // Used twice first, so a server that remembers keys has remembered this one.
    expect((await api.get('/v1/merchant')).status).toBe(200);
    expect((await api.get('/v1/merchant')).status).toBe(200);
    const revoked = await owner.post<{ data: Key }>(`/v1/api-keys/${key.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.data).toMatchObject({ id: key.id, status: 'revoked' });
    expect(revoked.body.data.revoked_at).not.toBeNull();
    const after = await api.get<ErrorBody>('/v1/merchant');
    expect(after.status).toBe(401);
    expect(after.body.error).toMatchObject({ type: 'authentication_error', code: 'api_key_invalid' });
    // Revoking again changes nothing; secret keys are rolled, not revoked; unknown ids are 404.
    expect((await owner.post<{ data: Key }>(`/v1/api-keys/${key.id}/revoke`)).body.data.revoked_at).toBe(revoked.body.data.revoked_at);
    const secretId = (await owner.get<{ data: Key[] }>('/v1/api-keys')).body.data.find((k) => k.type === 'secret')?.id;
    const secret = await owner.post<ErrorBody>(`/v1/api-keys/${String(secretId)}/revoke`);
    expect(secret.status).toBe(400);
    expect(secret.body.error.code).toBe('api_key_not_revocable');
    expect((await owner.post<ErrorBody>(`/v1/api-keys/${randomUUID()}/revoke`)).status).toBe(404);
    expect((await owner.post<ErrorBody>('/v1/api-keys/not-an-id/revoke')).status).toBe(404);
  });

  it('documents a scope for every operation in /v1/openapi.json', async () => {
    const doc = (await client(t.url).get<{ paths: Record<string, Record<string, { security: { apiKey: string[] }[]; 'x-required-scope': string }>> }>('/v1/openapi.json')).body;
    const ops = Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ path, method, op })));
    expect(ops.length).toBeGreaterThan(50);
    for (const { path, method, op } of ops) expect(op['x-required-scope'], `${method} ${path}`).toMatch(/^(secret_key|[a-z_]+:(read|write)( [a-z_]+:(read|write))*)$/);
    expect(doc.paths['/v1/transactions/{id}/refunds']?.post?.security).toEqual([{ apiKey: ['refunds:write'] }]);
  });
});
