import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './helpers/api.js';
import { TEST_DATABASE_URL } from './helpers/db.js';
import { connectUpstreamAgent, openEventStream } from './helpers/live.js';
import { startTestServer, type TestServer } from './helpers/server.js';

/**
 * Event streams and agent connections wait for commits to announce events; nothing asks the
 * database on a timer while nothing happens. The webhook worker sleeps until a notice or a due
 * delivery; the reconciler is slowed to ten minutes here, so the store's statement counter sees the
 * connections alone. The last block looks at the reconciler on its own.
 */

/** Long enough for a poll every 200–250 ms per connection to run a dozen times. */
const QUIET_WINDOW_MS = 3_000;
/**
 * The last statements of connecting (the hello's writes, the first reads) are done by then, and so is
 * the one look at data_version that the store's once-a-second check for other processes' commits
 * makes after this process's own last commit changed the WAL (server/db/sqlite.ts).
 */
const SETTLE_MS = 2_000;
/** The agent's heartbeat interval: none is due in the window, and its readers' presence lasts three of them. */
const AGENT_HEARTBEAT_MS = 60_000;
const ADDRESS = { line1: '1 Quiet Lane', city: 'Austin', postal_code: '78701', country: 'US' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let t: TestServer;
let key: string;
let readerId: string;

beforeAll(async () => {
  t = await startTestServer({ reconcileIntervalMs: 600_000 });
  // Start-up work (sealing legacy plaintext, provisioning accounts) writes once; the quiet windows come after it.
  await t.server.settled;
  key = (await t.merchant('Quiet Shop')).keys.sk_test;
  const api = client(t.url, key);
  expect((await api.post('/v1/terminal/locations', { display_name: 'Counter', address: ADDRESS })).status).toBe(201);
  const reader = await api.post<{ data: { processor_terminal_id: string } }>('/v1/terminals', { name: 'Till', registration_code: 'simulated-wpe' });
  expect(reader.status).toBe(201);
  readerId = reader.body.data.processor_terminal_id;
});
afterAll(() => t.stop());

describe('idle connections', () => {
  it('an open event stream and a connected agent with an online reader send the database nothing until something happens', async () => {
    const stream = await openEventStream(t.url, key);
    const agent = await connectUpstreamAgent(t.url, key, AGENT_HEARTBEAT_MS);
    // The reader is online with a presence deadline three minutes away: no sweep has to look at it meanwhile.
    agent.send({ type: 'heartbeat', readers: [{ reader: { processor_terminal_id: readerId }, status: 'online' }] });
    await agent.next('presence');
    await sleep(SETTLE_MS);

    const before = t.server.store.statements();
    await sleep(QUIET_WINDOW_MS);
    expect(t.server.store.statements() - before).toBe(0);

    // Both are awake: a payment reaches the stream and is pushed to the agent.
    const made = await client(t.url, key).post<{ data: { id: string } }>('/v1/transactions', { amount: 1234 });
    expect(made.status).toBe(201);
    expect((await stream.event(made.body.data.id)).type).toBe('payment.created');
    await agent.next('transaction', (m) => (m.transaction as { id?: string }).id === made.body.data.id);
    stream.close();
    agent.close();
  });

  it('delivers each event to a stream as its commit lands, not at the next tick of a poll', async () => {
    const stream = await openEventStream(t.url, key);
    const api = client(t.url, key);
    const latencies: number[] = [];
    for (let i = 0; i < 10; i++) {
      // Writes at random moments: with a poll they would land anywhere in its cycle.
      await sleep(Math.random() * 300);
      const made = await api.post<{ data: { id: string } }>('/v1/transactions', { amount: 2000 + i });
      // The answer leaves after the commit: from then on, a notice has nothing left to wait for.
      const answered = performance.now();
      expect(made.status).toBe(201);
      latencies.push((await stream.event(made.body.data.id)).at - answered);
    }
    stream.close();
    latencies.sort((a, b) => a - b);
    // Counted from the answer, so a loaded machine's slow request does not count: a poll every
    // 250 ms would still put the median near 125 ms after the commit; a commit's notice delivers
    // around the answer (before it, often), so the bound sits well between the two.
    expect(latencies[Math.floor(latencies.length / 2)]).toBeLessThan(75);
  });
});

// Several instances on PostgreSQL keep the interval: their presence renewal rides on the passes.
describe.skipIf(Boolean(TEST_DATABASE_URL))('the reconciler on the embedded store', () => {
  it('stretches its interval while its passes find nothing, and comes back to it when something is written', async () => {
    const s = await startTestServer({ reconcileIntervalMs: 100 });
    try {
      const api = client(s.url, (await s.merchant('Quiet Till')).keys.sk_test);
      const passes = () => s.server.reconciler.stats.passes;
      // Passes at 0.1, 0.2, 0.4, 0.8 s apart, then every 1.2 s (twelve intervals): settled by now.
      await sleep(3_000);
      const quietFrom = passes();
      await sleep(QUIET_WINDOW_MS);
      // Every 100 ms would be 30 passes in the window; stretched, two or three.
      expect(passes() - quietFrom).toBeLessThanOrEqual(4);

      // A write's event brings the passes back to the interval: at about 100, 300 and 700 ms after
      // it (finding nothing, they stretch again), where the stretched rate makes one at most.
      const made = await api.post<{ data: { id: string } }>('/v1/transactions', { amount: 1500 });
      expect(made.status).toBe(201);
      const writtenFrom = passes();
      await sleep(1_000);
      expect(passes() - writtenFrom).toBeGreaterThanOrEqual(2);
    } finally {
      await s.stop();
    }
  });
});
