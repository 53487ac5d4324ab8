import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { UPSTREAM_CLOSE, UPSTREAM_PATH, type Report } from '../shared/agent-upstream.js';
import { MAX_AGENTS_PER_KEY } from '../server/terminal/agent-limits.js';
import { client, type Json } from './helpers/api.js';
import { openTestDb } from './helpers/db.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * What one merchant's agents can ask of the server, over real websockets the test drives by hand
 * (as test/helpers/live.ts does): floods are refused and closed with the documented codes, the
 * server keeps serving the agent's own backlog and everyone else.
 */

interface Closed {
  code: number;
  reason: string;
  /** performance.now() when it closed. */
  at: number;
}

interface RawAgent {
  readonly messages: Json[];
  readonly closed: Promise<Closed>;
  /** The close once it happened (undefined while open). */
  readonly closedNow: () => Closed | undefined;
  send(message: Json): void;
  sendText(text: string): void;
  next(type: string, match?: (message: Json) => boolean, timeoutMs?: number): Promise<Json>;
  terminate(): void;
}

type Opened = { ok: true; agent: RawAgent } | { ok: false; status: number; retryAfter: string | undefined; body: Json };

/** An upstream websocket with the key: open, or the HTTP answer that refused the upgrade. */
function open(url: string, key: string): Promise<Opened> {
  const ws = new WebSocket(url.replace(/^http/, 'ws') + UPSTREAM_PATH, { headers: { authorization: `Bearer ${key}` } });
  const messages: Json[] = [];
  let closedNow: Closed | undefined;
  const closed = new Promise<Closed>((resolve) =>
    ws.on('close', (code, reason) => {
      closedNow = { code, reason: reason.toString(), at: performance.now() };
      resolve(closedNow);
    }),
  );
  ws.on('message', (data: WebSocket.RawData) => messages.push(JSON.parse(data.toString()) as Json));
  return new Promise((resolve, reject) => {
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ ok: false, status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, body: JSON.parse(body) as Json }));
    });
    ws.once('error', (err) => reject(err));
    ws.once('open', () =>
      resolve({
        ok: true,
        agent: {
          messages,
          closed,
          closedNow: () => closedNow,
          send: (message) => ws.send(JSON.stringify(message)),
          sendText: (text) => ws.send(text),
          next: (type, match = () => true, timeoutMs = 10_000) => eventually(() => messages.find((m) => m.type === type && match(m)), timeoutMs, 5),
          terminate: () => ws.terminate(),
        },
      }),
    );
  });
}

// Protocol 1, the previous one: the limits hold for it as for the current one, and only it still sends reports.
const hello = (agentId: string, heartbeatMs = 60_000): Json => ({ type: 'hello', protocol: 1, agent_id: agentId, name: 'Till', version: 'test', heartbeat_ms: heartbeatMs, cursor: null });

/** An agent that said hello and was welcomed. */
async function welcomed(url: string, key: string, agentId = randomUUID(), heartbeatMs = 60_000): Promise<RawAgent> {
  const opened = await open(url, key);
  if (!opened.ok) throw new Error(`upgrade refused: ${opened.status} ${JSON.stringify(opened.body)}`);
  opened.agent.send(hello(agentId, heartbeatMs));
  await opened.agent.next('welcome');
  return opened.agent;
}

function reports(from: number, count: number): Report[] {
  return Array.from({ length: count }, (_, i) => ({ seq: from + i, reader: { processor_terminal_id: 'tmr_flood' }, activity: 'approved', transaction_id: null, failure_code: null, observed_at: Date.now() }));
}

const errorCode = (m: Json) => (m.error as { code?: string } | undefined)?.code;
const acked = (seq: number) => (m: Json) => m.seq === seq;

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

describe('agent limits', () => {
  it('acknowledges an older agent’s reports and keeps none of them', async () => {
    const { keys } = await t.merchant('Old Agent Shop');
    const agent = await welcomed(t.url, keys.sk_test);
    // Its queue covered at once by the welcome, and anything sent anyway acknowledged whole.
    expect((await agent.next('welcome')).last_report_seq).toBe(Number.MAX_SAFE_INTEGER);
    agent.send({ type: 'reports', reports: reports(7, 500) });
    await agent.next('reports_ack', acked(506));
    const db = await openTestDb(t.dataDir);
    try {
      // There is nowhere to keep them.
      await expect(db.count('select count(*) from agent_reports')).rejects.toThrow();
    } finally {
      await db.close();
    }
    agent.terminate();
  });

  it('refuses a flood of messages, then closes it with 4429 and refuses its key for a while', async () => {
    const { keys } = await t.merchant('Flood Shop');
    const agent = await welcomed(t.url, keys.sk_test);

    // Now as fast as it can: refused on arrival, then closed.
    for (let i = 0; i < 400; i++) agent.sendText(JSON.stringify({ type: 'heartbeat', readers: [] }));
    const closed = await agent.closed;
    expect(closed.code).toBe(UPSTREAM_CLOSE.rateLimited);
    const refusals = agent.messages.filter((m) => m.type === 'error' && errorCode(m) === 'rate_limited');
    expect(refusals.length).toBeGreaterThan(0);
    expect((refusals[0]!.error as { message: string }).message).toMatch(/Too many messages: at most 50 a second/);

    // The key's next connection waits out the cool-off; another merchant's agents are untouched.
    const again = await open(t.url, keys.sk_test);
    expect(again.ok).toBe(false);
    if (again.ok) return;
    expect(again.status).toBe(429);
    expect(Number(again.retryAfter)).toBeGreaterThan(0);
    expect(again.body).toMatchObject({ error: { type: 'rate_limit_error', code: 'rate_limited' } });
    const other = await welcomed(t.url, (await t.merchant('Next Door')).keys.sk_test);
    other.terminate();
  });

  it('refuses hellos with fresh agent ids past the key’s limit, closing with 4409 and writing no row for them', async () => {
    const { merchant, keys } = await t.merchant('Hello Shop');
    const first = randomUUID();
    const hellos = async (ids: string[]) =>
      Promise.all(
        ids.map(async (id) => {
          const opened = await open(t.url, keys.sk_test);
          if (!opened.ok) throw new Error(`upgrade refused: ${opened.status}`);
          const { agent } = opened;
          agent.send(hello(id));
          const answer = await eventually(() => agent.messages.find((m) => m.type === 'welcome' || m.type === 'error'));
          if (answer.type === 'welcome') {
            agent.terminate();
            return 'welcome';
          }
          expect(errorCode(answer)).toBe('agent_limit_reached');
          expect((answer.error as { message: string }).message).toMatch(/already has 50 agents/);
          expect((await agent.closed).code).toBe(UPSTREAM_CLOSE.agentLimit);
          return 'refused';
        }),
      );
    const outcomes: string[] = [];
    outcomes.push(...(await hellos([first])));
    for (let i = 1; i < MAX_AGENTS_PER_KEY - 5; i++) outcomes.push(...(await hellos([randomUUID()])));
    // The last places and more, all at once: exactly the limit is welcomed.
    outcomes.push(...(await hellos(Array.from({ length: 15 }, () => randomUUID()))));
    expect(outcomes.filter((o) => o === 'welcome')).toHaveLength(MAX_AGENTS_PER_KEY);
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(10);
    const db = await openTestDb(t.dataDir);
    try {
      expect(await db.count('select count(*) from agents where merchant_id = ?', merchant.id)).toBe(MAX_AGENTS_PER_KEY);
    } finally {
      await db.close();
    }
    // An agent the key has is welcomed back.
    (await welcomed(t.url, keys.sk_test, first)).terminate();
  });

  it('does not drop an agent for silence while its own messages still wait to be handled', async () => {
    const { keys } = await t.merchant('Backlog Shop');
    // 50 ms heartbeats: silent after 150 ms. The database is slower than the agent: each heartbeat
    // takes 100 ms to store, so 25 of them sent at once are a backlog of 2.5 s.
    const agents = t.server.services.agents;
    const store = agents.heartbeat;
    agents.heartbeat = async function (...args) {
      await new Promise((r) => setTimeout(r, 100));
      return store.apply(this, args);
    };
    const answers = (agent: RawAgent) => agent.messages.filter((m) => m.type === 'presence').length;
    try {
      const agentId = randomUUID();
      const agent = await welcomed(t.url, keys.sk_test, agentId, 50);
      for (let i = 0; i < 25; i++) agent.send({ type: 'heartbeat', readers: [] });
      const outcome = await Promise.race([
        eventually(() => (answers(agent) >= 25 ? 'all answered' : undefined), 25_000),
        agent.closed.then((c) => `closed with ${c.code} after ${answers(agent)} of 25 answers`),
      ]);
      expect(outcome).toBe('all answered');
      expect(agent.closedNow()).toBeUndefined();
      // Once the backlog is handled and nothing more comes, silence ends the connection as before.
      expect((await agent.closed).code).toBe(1006);
    } finally {
      agents.heartbeat = store;
    }
  });

  it('keeps another merchant’s requests at their latency while one merchant’s agents flood', async () => {
    const quiet = client(t.url, (await t.merchant('Quiet Shop')).keys.sk_test);
    for (let i = 0; i < 5; i++) expect((await quiet.post('/v1/transactions', { amount: 1_000 + i })).status).toBe(201);
    const timeGet = async () => {
      const start = performance.now();
      const res = await quiet.get('/v1/transactions?size=10');
      expect(res.status).toBe(200);
      return performance.now() - start;
    };
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    for (let i = 0; i < 5; i++) await timeGet();
    const baseline: number[] = [];
    for (let i = 0; i < 20; i++) baseline.push(await timeGet());

    const loud = (await t.merchant('Loud Shop')).keys.sk_test;
    // Four agents each send as many 1,000-reader heartbeats as the burst allows, one sends small
    // messages far past the rate (refused, then closed), and fresh agent ids keep saying hello.
    const heavy = await Promise.all(Array.from({ length: 4 }, () => welcomed(t.url, loud)));
    const spammer = await welcomed(t.url, loud);
    const PER_AGENT = 40;
    const readers = Array.from({ length: 1_000 }, (_, i) => ({ reader: { processor_terminal_id: `tmr_flood_${i}` }, status: 'online' }));
    for (const agent of heavy) for (let i = 0; i < PER_AGENT; i++) agent.send({ type: 'heartbeat', readers });
    for (let i = 0; i < 2_000; i++) spammer.send({ type: 'heartbeat', readers: [] });
    const hellos = Array.from({ length: 30 }, () => welcomed(t.url, loud).then((a) => a.terminate(), () => undefined));
    const done = Promise.all(heavy.map((a) => eventually(() => (a.messages.filter((m) => m.type === 'presence').length >= PER_AGENT ? true : undefined), 120_000)));
    let finished = false;
    void done.then(() => (finished = true));

    const during: number[] = [];
    while (!finished || during.length < 10) during.push(await timeGet());
    await done;
    await Promise.all(hellos);
    expect((await spammer.closed).code).toBe(UPSTREAM_CLOSE.rateLimited);
    for (const agent of heavy) agent.terminate();

    // Generous: the machine is shared, and on SQLite every write blocks the event loop while it
    // runs, so a request may wait for one of the flood's messages (a 1,000-reader heartbeat) to be handled.
    const base = median(baseline);
    expect(median(during), `baseline ${base.toFixed(1)} ms, during ${during.map((x) => x.toFixed(0)).join(' ')}`).toBeLessThanOrEqual(Math.max(5 * base, base + 200));
  });
});
