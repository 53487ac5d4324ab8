import { randomUUID } from 'node:crypto';
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { z } from 'zod';
import { UPSTREAM_PATH, UPSTREAM_PROTOCOL_VERSION } from '../shared/agent-upstream.js';
import { POS_VERSION } from '../shared/version.js';
import { client } from './helpers/api.js';
import { json, runCli } from './helpers/cli.js';
import { backendEnv } from './helpers/db.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * The previous protocol's agent, frozen as pos 0.1.0 shipped it: what it sent and the shapes it
 * parsed, written out here rather than imported, so a change to the shared schemas cannot quietly
 * change it too. A server must keep answering it as it did.
 */
const V1 = {
  hello: (agentId: string) => ({ type: 'hello', protocol: 1, agent_id: agentId, name: 'Till from 0.1.0', version: '0.1.0', heartbeat_ms: 60_000, cursor: null }),
  welcome: z.object({
    type: z.literal('welcome'),
    agent_id: z.string(),
    mode: z.enum(['test', 'live']),
    merchant: z.object({ id: z.string(), business_name: z.string() }),
    presence_ttl_ms: z.number().int().positive(),
    cursor: z.number().int().nonnegative(),
    last_report_seq: z.number().int().nonnegative(),
  }),
  presence: z.object({ type: z.literal('presence'), readers: z.array(z.unknown()), unknown: z.array(z.unknown()) }),
  reportsAck: z.object({ type: z.literal('reports_ack'), seq: z.number().int() }),
  transaction: z.object({ type: z.literal('transaction'), seq: z.number().int().positive(), event: z.string(), transaction: z.record(z.string(), z.unknown()) }),
};

type Json = Record<string, unknown>;

async function open(url: string, key: string): Promise<{ messages: Json[]; send(m: Json): void; next(type: string): Promise<Json>; closed: Promise<number>; close(): void }> {
  const ws = new WebSocket(url.replace(/^http/, 'ws') + UPSTREAM_PATH, { headers: { authorization: `Bearer ${key}` } });
  const messages: Json[] = [];
  ws.on('message', (data: WebSocket.RawData) => messages.push(JSON.parse(data.toString()) as Json));
  const closed = new Promise<number>((resolve) => ws.once('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    messages,
    send: (m) => ws.send(JSON.stringify(m)),
    next: (type) => eventually(() => messages.find((m) => m.type === type)),
    closed,
    close: () => ws.terminate(),
  };
}

describe('agent protocol versions', () => {
  let t: TestServer;
  let key: string;
  beforeAll(async () => {
    t = await startTestServer();
    key = (await t.merchant('Two Tills')).keys.sk_test;
  });
  afterAll(() => t.stop());

  it('serves an agent of the previous protocol as before, and the current one with its new welcome', async () => {
    const old = await open(t.url, key);
    old.send(V1.hello(randomUUID()));
    const welcome = V1.welcome.parse(await old.next('welcome'));
    expect(welcome.last_report_seq).toBe(Number.MAX_SAFE_INTEGER);
    old.send({ type: 'heartbeat', readers: [] });
    V1.presence.parse(await old.next('presence'));
    old.send({ type: 'reports', reports: [{ seq: 3, reader: { serial_number: 'S1' }, activity: 'idle', transaction_id: null, failure_code: null, observed_at: 1 }] });
    expect(V1.reportsAck.parse(await old.next('reports_ack')).seq).toBe(3);
    // Payments still reach it as they did.
    const created = await client(t.url, key).post('/v1/transactions', { amount: 1250, payment_method_type: 'card', confirm: true, payment_method: 'pm_card_visa' });
    expect(created.status).toBe(201);
    const pushed = V1.transaction.parse(await old.next('transaction'));
    const body = created.body as Json;
    expect(pushed.transaction.id).toBe(((body.data as Json | undefined) ?? body).id);

    const current = await open(t.url, key);
    current.send({ type: 'hello', protocol: UPSTREAM_PROTOCOL_VERSION, agent_id: randomUUID(), name: 'Till from now', version: POS_VERSION, heartbeat_ms: 60_000, cursor: null });
    const newer = await current.next('welcome');
    expect(newer).toMatchObject({ protocol: UPSTREAM_PROTOCOL_VERSION, server_version: POS_VERSION });
    expect(newer).not.toHaveProperty('last_report_seq');
    current.send({ type: 'reports', reports: [{ seq: 1, reader: { serial_number: 'S1' }, activity: 'idle', transaction_id: null, failure_code: null, observed_at: 1 }] });
    expect(await current.next('error')).toMatchObject({ error: { code: 'invalid_message' } });

    // The operator sees who still speaks the previous protocol.
    const listed = await runCli(['admin', 'agents', '--json', '--data-dir', t.dataDir], { env: backendEnv(t.dataDir) });
    expect(listed.status, listed.stderr).toBe(0);
    const agents = json<{ versions: { version: string; protocol: number; agents: number }[]; data: { name: string; needs_upgrade: boolean }[] }>(listed);
    expect(agents.versions).toEqual([
      { version: '0.1.0', protocol: 1, agents: 1 },
      { version: POS_VERSION, protocol: UPSTREAM_PROTOCOL_VERSION, agents: 1 },
    ]);
    expect(agents.data.map((a) => [a.name, a.needs_upgrade])).toEqual([
      ['Till from 0.1.0', true],
      ['Till from now', false],
    ]);
    old.close();
    current.close();
  });

  it('answers a plain GET with the protocols it speaks, under the websocket’s own key, which then connects', async () => {
    const counter = await client(t.url, key).post<{ data: { secret: string } }>('/v1/api-keys', { name: 'Counter', preset: 'counter' });
    expect(counter.status, JSON.stringify(counter.body)).toBe(201);
    const agentKey = counter.body.data.secret;
    const described = await client(t.url, agentKey).get<{ data: Json }>(UPSTREAM_PATH);
    expect(described.status).toBe(200);
    expect(described.body.data).toEqual({
      object: 'agent_protocol',
      current: UPSTREAM_PROTOCOL_VERSION,
      accepted: [UPSTREAM_PROTOCOL_VERSION - 1, UPSTREAM_PROTOCOL_VERSION],
      server_version: POS_VERSION,
      websocket_path: UPSTREAM_PATH,
    });

    // What it names is what the websocket speaks.
    const agent = await open(t.url, agentKey);
    agent.send({ type: 'hello', protocol: described.body.data.current as number, agent_id: randomUUID(), name: 'Checked first', version: POS_VERSION, heartbeat_ms: 60_000, cursor: null });
    expect(await agent.next('welcome')).toMatchObject({ protocol: described.body.data.current, server_version: described.body.data.server_version });
    agent.close();

    // A wrong key learns nothing, as the upgrade refuses it.
    const wrong = 'sk_test_' + 'x'.repeat(32);
    const refused = await client(t.url, wrong).get<{ error: Json }>(UPSTREAM_PATH);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toMatchObject({ type: 'authentication_error' });
    await expect(open(t.url, wrong)).rejects.toThrow(/401/);
  });

  it('answers 426 to an Upgrade header that arrived without Connection: Upgrade (a proxy that drops it)', async () => {
    const answer = await new Promise<{ status: number; body: Json }>((resolve, reject) => {
      const req = get(`${t.url}${UPSTREAM_PATH}`, { headers: { authorization: `Bearer ${key}`, upgrade: 'websocket' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Json }));
      });
      req.on('error', reject);
    });
    expect(answer.status).toBe(426);
    expect(answer.body).toMatchObject({ error: { type: 'invalid_request_error', code: 'upgrade_required' } });
    expect(String((answer.body.error as Json).message)).toContain('Connection: Upgrade');
  });

  it('refuses a protocol it does not speak, naming the ones it does', async () => {
    const future = await open(t.url, key);
    future.send({ type: 'hello', protocol: UPSTREAM_PROTOCOL_VERSION + 1, agent_id: randomUUID(), name: 'Till from later', version: '9.0.0', heartbeat_ms: 60_000, cursor: null });
    const refused = await future.next('error');
    expect(refused).toMatchObject({ error: { code: 'protocol_unsupported' } });
    expect(String((refused.error as Json).message)).toContain(`speaks agent protocols ${UPSTREAM_PROTOCOL_VERSION - 1} and ${UPSTREAM_PROTOCOL_VERSION}`);
    expect(await future.closed).toBe(1008);
  });
});
