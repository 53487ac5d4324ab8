import { randomUUID } from 'node:crypto';
import Database from 'better-sqlite3';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { AuditLogSchema } from '../shared/contract/audit.js';
import type { AuditEntry, AuditLog, WebhookEvent } from '../shared/api/types.js';
import { CounterClient, spawnAgent, type AgentProcess } from './helpers/agent.js';
import { client, type Json } from './helpers/api.js';
import { json, runCli } from './helpers/cli.js';
import { openTestDb } from './helpers/db.js';
import { PrinterEmulator } from './helpers/pty.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';

/**
 * The audit trail end to end: changes made through /v1 (refunds, payouts, key revocations) and
 * drawer openings reported by a real agent, read back with `pos audit`, with the acting key, the
 * request and its idempotency key; events naming their request; and the hash chain found intact,
 * then broken by editing or removing a row behind the server's back.
 */

let t: TestServer;
const dir = tempDir('pos-audit-');

/** Payments and payouts settle through the simulator's webhooks: well inside a second here. */
const WAIT_MS = 10_000;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(async () => {
  await t.stop();
  dir.cleanup();
});

type Shop = { m: CreatedMerchant; owner: ReturnType<typeof client>; env: Record<string, string> };

async function shop(name: string): Promise<Shop> {
  const m = await t.merchant(name);
  return { m, owner: client(t.url, m.keys.sk_test), env: { POS_CONFIG_DIR: join(dir.path, name.replace(/\W/g, '')), POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_test } };
}

async function restrictedKey(s: Shop, name: string, body: Json): Promise<{ id: string; secret: string; last4: string }> {
  const res = await s.owner.post<{ data: { id: string; secret: string; last4: string } }>('/v1/api-keys', { name, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data;
}

async function paid(s: Shop, amount = 2000): Promise<{ id: string; reference: string }> {
  const res = await s.owner.post<{ data: { id: string; reference: string; status: string } }>('/v1/transactions', { amount, payment_method: 'pm_card_bypassPending', confirm: true });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.data.status).toBe('succeeded');
  return res.body.data;
}

async function audit(s: Shop, args: string[] = []): Promise<AuditEntry[]> {
  const r = await runCli(['audit', ...args, '--json'], { env: s.env });
  expect(r.status, r.stderr).toBe(0);
  return AuditLogSchema.parse(json<AuditLog>(r)).data;
}

async function verify(s: Shop, args: string[] = []) {
  return runCli(['audit', 'verify', ...args], { env: s.env });
}

async function eventsAbout(s: Shop, objectId: string): Promise<WebhookEvent[]> {
  const res = await s.owner.get<{ data: WebhookEvent[] }>('/v1/events?size=100');
  return res.body.data.filter((e) => e.data.id === objectId);
}

describe('the audit trail of changes made through /v1', () => {
  let s: Shop;
  beforeAll(async () => {
    s = await shop('Audit Cafe');
  });

  it('names the key, the request and the idempotency key of a refund, once however often it is replayed; its events carry the request', async () => {
    const desk = await restrictedKey(s, 'Refunds desk', { scopes: ['transactions:read', 'refunds:write'] });
    const txn = await paid(s);
    const refund = await client(t.url, desk.secret).post<{ data: { id: string } }>(`/v1/transactions/${txn.reference}/refunds`, { amount: 500 }, { 'Idempotency-Key': 'refund-counter-7' });
    expect(refund.status, JSON.stringify(refund.body)).toBe(201);
    const requestId = refund.headers.get('request-id');
    expect(requestId).toMatch(/^req_/);
    const replay = await client(t.url, desk.secret).post(`/v1/transactions/${txn.reference}/refunds`, { amount: 500 }, { 'Idempotency-Key': 'refund-counter-7' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');

    const entries = await audit(s, ['--object', refund.body.data.id]);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      operation: 'POST /v1/transactions/{id}/refunds',
      status: 201,
      object_id: refund.body.data.id,
      target_id: txn.reference,
      key: { id: desk.id, type: 'restricted', last4: desk.last4 },
      request: { id: requestId, idempotency_key: 'refund-counter-7' },
    });
    // The payment the path named finds it too: "who refunded this?"
    expect((await audit(s, ['--object', txn.reference])).map((e) => e.id)).toContain(entries[0]!.id);

    const table = await runCli(['audit', '--object', refund.body.data.id], { env: s.env });
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toContain(`rk_test_…${desk.last4}`);
    expect(table.stdout).toContain(desk.id);
    expect(table.stdout).toContain(String(requestId));
    expect(table.stdout).toContain('refund-counter-7');
    expect(table.stdout).toContain('POST /v1/transactions/{id}/refunds');

    const refundEvents = await eventually(async () => {
      const found = await eventsAbout(s, refund.body.data.id);
      return found.some((e) => e.type === 'refund.succeeded') ? found : undefined;
    }, WAIT_MS);
    expect(refundEvents.map((e) => e.type).sort()).toEqual(['refund.created', 'refund.succeeded']);
    for (const e of refundEvents) expect(e.request).toEqual({ id: requestId, idempotency_key: 'refund-counter-7' });
    const paymentMoved = (await eventsAbout(s, txn.id)).find((e) => e.type === 'payment.partially_refunded');
    expect(paymentMoved?.request).toEqual({ id: requestId, idempotency_key: 'refund-counter-7' });
  });

  it('leaves the request of an event empty when the processor caused it', async () => {
    const res = await s.owner.post<{ data: { id: string } }>('/v1/transactions', { amount: 1500, payment_method: 'pm_card_createDispute', confirm: true });
    expect(res.status).toBe(201);
    const dispute = await eventually(async () => (await s.owner.get<{ data: WebhookEvent[] }>('/v1/events?type=dispute.created')).body.data[0], WAIT_MS);
    expect(dispute.request).toEqual({ id: null, idempotency_key: null });
    const created = (await eventsAbout(s, res.body.data.id)).find((e) => e.type === 'payment.created');
    expect(created?.request.id).toMatch(/^req_/);
  });

  it('writes one entry for a checkout session, not one for the payment it makes, whose events still name the request', async () => {
    const res = await s.owner.post<{ data: { id: string; transaction_id: string } }>('/v1/checkout/sessions', { amount: 2500 }, { 'Idempotency-Key': 'session-1' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const requestId = res.headers.get('request-id');
    const entries = (await audit(s, ['--size', '100'])).filter((e) => e.request.id === requestId);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ operation: 'POST /v1/checkout/sessions', status: 201, object_id: res.body.data.id });
    const created = (await eventsAbout(s, res.body.data.transaction_id)).find((e) => e.type === 'payment.created');
    expect(created?.request).toEqual({ id: requestId, idempotency_key: 'session-1' });
  });

  it('names the key and request of a payout', async () => {
    await paid(s);
    const payout = await s.owner.post<{ data: { id: string } }>('/v1/payouts', {}, { 'Idempotency-Key': 'payout-friday' });
    expect(payout.status, JSON.stringify(payout.body)).toBe(201);
    const [entry] = await audit(s, ['--object', payout.body.data.id]);
    expect(entry).toMatchObject({
      operation: 'POST /v1/payouts',
      status: 201,
      key: { id: expect.any(String), type: 'secret', last4: s.m.keys.sk_test.slice(-4) },
      request: { id: payout.headers.get('request-id'), idempotency_key: 'payout-friday' },
    });
  });

  it('names the key and request of a key revocation, and of a write refused to a restricted key', async () => {
    const old = await restrictedKey(s, 'Old till', { preset: 'counter' });
    const revoked = await s.owner.post<{ data: { id: string } }>(`/v1/api-keys/${old.id}/revoke`, {}, { 'Idempotency-Key': 'revoke-old-till' });
    expect(revoked.status).toBe(200);
    const [entry] = await audit(s, ['--object', old.id]);
    expect(entry).toMatchObject({
      operation: 'POST /v1/api-keys/{id}/revoke',
      status: 200,
      target_id: old.id,
      key: { type: 'secret', last4: s.m.keys.sk_test.slice(-4) },
      request: { id: revoked.headers.get('request-id'), idempotency_key: 'revoke-old-till' },
    });

    const counter = await restrictedKey(s, 'Till 2', { preset: 'counter' });
    const txn = await paid(s);
    const refused = await client(t.url, counter.secret).post(`/v1/transactions/${txn.id}/refunds`, {});
    expect(refused.status).toBe(403);
    const [attempt] = await audit(s, ['--key', counter.id]);
    expect(attempt).toMatchObject({ operation: 'POST /v1/transactions/{id}/refunds', status: 403, target_id: txn.id, key: { id: counter.id, last4: counter.last4 } });
  });

  it('keeps no idempotency key that is not one: a refused write names none, and the secret key is told its key is invalid', async () => {
    const invalidKey = 'k'.repeat(256);
    const txn = await paid(s);
    const counter = await restrictedKey(s, 'Till 3', { preset: 'counter' });
    const refused = await client(t.url, counter.secret).post(`/v1/transactions/${txn.id}/refunds`, {}, { 'Idempotency-Key': invalidKey });
    expect(refused.status).toBe(403);
    const [attempt] = await audit(s, ['--key', counter.id]);
    expect(attempt).toMatchObject({ status: 403, request: { id: refused.headers.get('request-id'), idempotency_key: null } });

    const invalid = await s.owner.post<{ error: { param?: string; message: string } }>(`/v1/transactions/${txn.id}/refunds`, {}, { 'Idempotency-Key': invalidKey });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error).toMatchObject({ param: 'Idempotency-Key', message: 'Idempotency-Key must be 1 to 255 printable ASCII characters' });
    expect((await audit(s, ['--object', txn.id])).map((e) => e.request.id)).not.toContain(invalid.headers.get('request-id'));
  });

  it('is the secret key’s to read: a restricted key gets 403', async () => {
    const reporting = await restrictedKey(s, 'Books', { preset: 'reporting' });
    const refused = await client(t.url, reporting.secret).get<{ error: Json }>('/v1/audit-log');
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ type: 'permission_error', code: 'secret_key_required' });
    const cli = await runCli(['audit'], { env: { ...s.env, POS_API_KEY: reporting.secret } });
    expect(cli.status).toBe(1);
    expect(cli.stderr).toMatch(/secret_key_required/);
  });

  it('filters by key and by time, newest first, a page at a time', async () => {
    const all = await audit(s, ['--size', '100']);
    expect(all.length).toBeGreaterThan(3);
    expect(all.map((e) => e.seq)).toEqual([...all.map((e) => e.seq)].sort((a, b) => b - a));
    const secretId = all.find((e) => e.key?.type === 'secret')!.key!.id;
    expect((await audit(s, ['--key', secretId, '--size', '100'])).every((e) => e.key?.id === secretId)).toBe(true);
    expect(await audit(s, ['--since', new Date(Date.now() + 3_600_000).toISOString()])).toEqual([]);
    expect(await audit(s, ['--until', '2001-01-01'])).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    expect((await audit(s, ['--since', today, '--until', today, '--size', '100'])).length).toBe(all.length);
    const page2 = await runCli(['audit', '--size', '2', '--page', '2', '--json'], { env: s.env });
    expect(json<AuditLog>(page2).data.map((e) => e.seq)).toEqual(all.slice(2, 4).map((e) => e.seq));
    const bad = await s.owner.get<{ error: Json }>('/v1/audit-log?created[gte]=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ param: 'created[gte]' });
  });

  it('verifies as intact and prints the head to keep elsewhere', async () => {
    const ok = await verify(s);
    expect(ok.status, ok.stderr).toBe(0);
    const head = /Head: #(\d+) (aud_\w+) ([0-9a-f]{64})/.exec(ok.stdout);
    expect(head, ok.stdout).not.toBeNull();
    const again = await verify(s, ['--expect-head', head![3]!]);
    expect(again.status, again.stderr).toBe(0);
    const stranger = await verify(s, ['--expect-head', 'f'.repeat(64)]);
    expect(stranger.status).toBe(4);
    expect(stranger.stderr).toMatch(/head recorded earlier/);
  });
});

describe('drawer openings from the agent', () => {
  let s: Shop;
  let printerServer: Server;
  const printer = new PrinterEmulator();
  let agent: AgentProcess;
  let counterKey: { id: string; secret: string; last4: string };
  const agentDir = tempDir('pos-audit-agent-');

  beforeAll(async () => {
    s = await shop('Drawer Deli');
    counterKey = await restrictedKey(s, 'Till 1 PC', { preset: 'counter' });
    printerServer = createServer((socket: Socket) => {
      socket.on('data', printer.attach((bytes) => socket.write(bytes)));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => printerServer.listen(0, '127.0.0.1', resolve));
    const port = (printerServer.address() as AddressInfo).port;
    agent = await spawnAgent(['--server', t.url, '--api-key', counterKey.secret, '--data-dir', agentDir.path, '--no-processor-readers', '--printer', `tcp:127.0.0.1:${port}`]);
  });
  afterAll(async () => {
    await agent?.stop();
    await new Promise((r) => printerServer.close(r));
    agentDir.cleanup();
  });

  it('writes a no-sale opening under the agent’s key, once', async () => {
    const counter = await CounterClient.connect(agent.url);
    counter.send({ type: 'hello', protocol: 1 });
    await counter.next('welcome');
    counter.send({ type: 'subscribe', topics: ['devices'] });
    await eventually(() => {
      const last = counter.messages.filter((msg) => msg.type === 'device' || msg.type === 'devices').at(-1);
      const state = last?.type === 'device' ? last.device : last?.type === 'devices' ? last.devices[0] : undefined;
      return state?.status === 'online' ? true : undefined;
    }, WAIT_MS);
    const opened = await counter.command({ type: 'open_drawer', request_id: 'nosale-1', reason: 'no_sale', staff: 'alex' });
    expect(opened.ok, JSON.stringify(opened.error)).toBe(true);
    counter.close();

    const [entry] = await eventually(async () => {
      const found = await audit(s, ['--key', counterKey.id]);
      return found.length ? found : undefined;
    }, WAIT_MS);
    expect(entry).toMatchObject({
      operation: 'agent drawer_opened',
      status: 200,
      target_id: agent.agentId,
      key: { id: counterKey.id, type: 'restricted', last4: counterKey.last4 },
      request: { id: expect.stringMatching(/^req_/), idempotency_key: expect.stringMatching(new RegExp(`^agent_${agent.agentId}_drawer_`)) },
      details: { reason: 'no_sale', staff: 'alex', agent_id: agent.agentId, transaction_id: null },
    });
    const table = await runCli(['audit', '--object', agent.agentId], { env: s.env });
    expect(table.stdout).toContain('agent drawer_opened');
    expect(table.stdout).toContain(`rk_test_…${counterKey.last4}`);
    expect(table.stdout).toContain(String(entry!.request.idempotency_key));

    // Acknowledged, the agent forgets it: nothing is left to send again after a restart.
    await eventually(() => {
      const db = new Database(join(agentDir.path, 'agent.db'), { readonly: true });
      try {
        const row = db.prepare("SELECT value FROM state WHERE key = 'drawer_openings'").get() as { value: string } | undefined;
        return row && (JSON.parse(row.value) as unknown[]).length === 0 ? true : undefined;
      } finally {
        db.close();
      }
    }, WAIT_MS);
  });

  it('writes an opening sent again (after a reconnect) once, and acknowledges it each time', async () => {
    const ws = new WebSocket(`${t.url.replace(/^http/, 'ws')}/v1/agent/connect`, { headers: { authorization: `Bearer ${counterKey.secret}` } });
    const received: { type: string; ids?: string[] }[] = [];
    ws.on('message', (data) => received.push(JSON.parse(data.toString()) as { type: string }));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const agentId = randomUUID();
    ws.send(JSON.stringify({ type: 'hello', protocol: 1, agent_id: agentId, name: 'Back office', version: 'test', heartbeat_ms: 5_000, cursor: null }));
    await eventually(() => received.find((m) => m.type === 'welcome'), WAIT_MS);
    const opening = { id: randomUUID(), reason: 'refund', staff: null, transaction_id: 'txn_cashback', opened_at: Date.now() };
    for (let i = 1; i <= 2; i++) {
      ws.send(JSON.stringify({ type: 'drawer_opened', openings: [opening] }));
      const acks = await eventually(() => {
        const found = received.filter((m) => m.type === 'drawer_ack');
        return found.length === i ? found : undefined;
      }, WAIT_MS);
      expect(acks[i - 1]!.ids).toEqual([opening.id]);
    }
    ws.send(JSON.stringify({ type: 'drawer_opened', openings: [{ ...opening, reason: 'open_sesame' }] }));
    await eventually(() => received.find((m) => m.type === 'error'), WAIT_MS);
    ws.close();
    const entries = await audit(s, ['--object', agentId]);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ object_id: 'txn_cashback', details: { reason: 'refund', staff: null } });
  });
});

describe('the hash chain', () => {
  it('stays whole under 60 writers at once, through both writers of entries', async () => {
    const s = await shop('Busy Bistro');
    const writes = [
      ...Array.from({ length: 45 }, (_, i) => s.owner.post('/v1/transactions', { amount: 100 + i, payment_method_type: 'cash' })),
      ...Array.from({ length: 15 }, (_, i) => s.owner.post('/v1/webhook-endpoints', { url: `http://127.0.0.1:9/hook-${i}` })),
    ];
    const answers = await Promise.all(writes);
    expect(answers.map((a) => a.status).filter((status) => status >= 300)).toEqual([]);
    const entries = await audit(s, ['--size', '100']);
    expect(entries.map((e) => e.seq).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    const ok = await verify(s);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/Intact: 60 entries/);
  });

  it('names the entry edited behind the server’s back', async () => {
    const s = await shop('Edited Eatery');
    for (let i = 0; i < 4; i++) expect((await s.owner.post('/v1/transactions', { amount: 500, payment_method_type: 'cash' })).status).toBe(201);
    expect((await verify(s)).status).toBe(0);
    const [third] = (await audit(s)).filter((e) => e.seq === 3);
    const db = await openTestDb(t.dataDir, { writable: true });
    try {
      expect(await db.run('update audit_log set status = 204 where id = ?', third!.id)).toBe(1);
    } finally {
      await db.close();
    }
    const broken = await verify(s);
    expect(broken.status).toBe(4);
    expect(broken.stderr).toContain(`entry #3 (${third!.id}) was altered`);
    const report = json<{ intact: boolean; problem: string }>(await runCli(['audit', 'verify', '--json'], { env: s.env }));
    expect(report).toMatchObject({ intact: false, problem: expect.stringContaining(third!.id) });
  });

  it('names the entry removed behind the server’s back, in the middle or at the newest end', async () => {
    const s = await shop('Pruned Pantry');
    for (let i = 0; i < 5; i++) expect((await s.owner.post('/v1/transactions', { amount: 500, payment_method_type: 'cash' })).status).toBe(201);
    const entries = await audit(s);
    const second = entries.find((e) => e.seq === 2)!;
    const last = entries.find((e) => e.seq === 5)!;
    const db = await openTestDb(t.dataDir, { writable: true });
    try {
      expect(await db.run('delete from audit_log where id = ?', last.id)).toBe(1);
      const tail = await verify(s);
      expect(tail.status).toBe(4);
      expect(tail.stderr).toMatch(/entry #5 is missing: removed from the newest end/);
      expect(await db.run('delete from audit_log where id = ?', second.id)).toBe(1);
    } finally {
      await db.close();
    }
    const gap = await verify(s);
    expect(gap.status).toBe(4);
    expect(gap.stderr).toMatch(/entry #2 is missing: removed from the chain \(the next one present is #3, aud_\w+\)/);
  });
});
