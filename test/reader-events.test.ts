import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import type { ReaderStatePush } from '../shared/agent-upstream.js';
import type { RateLimitReport } from '../simulator/http/rate-limits.js';
import { client, type Json } from './helpers/api.js';
import { connectUpstreamAgent, type UpstreamAgent } from './helpers/live.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * Reader state driven by the processor's events, with the simulator's rate limits on (its default):
 * a real server with its embedded simulator, real HTTP, and a raw agent websocket that records the
 * reader states the server pushes.
 */
const ADDRESS = { line1: '1 Main St', city: 'Austin', postal_code: '78701', country: 'US' };
/** The reconciliation deadline for these tests: a second rather than half a minute. */
const CHECK_MS = 1_000;

type Api = ReturnType<typeof client>;

function pushed(agent: UpstreamAgent): ReaderStatePush[] {
  return agent.messages.flatMap((m) => (m.type === 'reader_state' ? [m.reader as ReaderStatePush] : m.type === 'reader_states' ? (m.readers as ReaderStatePush[]) : []));
}

function count(report: RateLimitReport, endpoint: string): number {
  return report.endpoints.filter((e) => e.endpoint === endpoint).reduce((sum, e) => sum + e.requests, 0);
}

async function setUp(t: TestServer, m: CreatedMerchant, readers: number): Promise<{ api: Api; tmr: string[] }> {
  const api = client(t.url, m.keys.sk_test);
  expect((await api.post('/v1/terminal/locations', { display_name: 'Shop', address: ADDRESS })).status).toBe(201);
  const tmr: string[] = [];
  for (let i = 0; i < readers; i++) {
    const made = await api.post<{ data: { processor_terminal_id: string } }>('/v1/terminals', { name: `Till ${i + 1}`, registration_code: 'simulated-wpe' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    tmr.push(made.body.data.processor_terminal_id);
  }
  return { api, tmr };
}

describe('a burst of terminal payments across 20 readers', () => {
  let t: TestServer;
  let m: CreatedMerchant;
  let agent: UpstreamAgent;
  let api: Api;
  let tmr: string[];

  beforeAll(async () => {
    t = await startTestServer({ readerCheckMs: 60_000 });
    m = await t.merchant('Burst Café');
    ({ api, tmr } = await setUp(t, m, 20));
    agent = await connectUpstreamAgent(t.url, m.keys.sk_test, 60_000);
  }, 120_000);

  afterAll(async () => {
    agent?.close();
    await t?.stop();
  });

  it('pushes every reader after the welcome', async () => {
    const snapshot = await agent.next('reader_states');
    const readers = snapshot.readers as ReaderStatePush[];
    expect(readers.map((r) => r.processor_terminal_id).sort()).toEqual([...tmr].sort());
    expect(readers.every((r) => r.activity === 'idle' && r.action === null && r.processor_status === 'online')).toBe(true);
  });

  it('completes 50 payments with no 429 for the callers, no reader polled, and every outcome pushed', async () => {
    const sim = t.stack.simulator!;
    await sim.control.resetRateLimits();
    const statuses: number[] = [];
    const done: { txn: string; reader: string }[] = [];
    // 50 sales, two or three per reader, every reader at once: each reader's sales one after the other.
    await Promise.all(
      tmr.map(async (reader, r) => {
        for (let n = r; n < 50; n += tmr.length) {
          const created = await api.post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 2000 + n * 10 });
          statuses.push(created.status);
          const sent = await api.post('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader });
          statuses.push(sent.status);
          const tapped = await api.post<{ data: Json }>('/v1/terminal/simulate-payment', { reader_id: reader });
          statuses.push(tapped.status);
          expect(tapped.body.data, JSON.stringify(tapped.body)).toMatchObject({ status: 'succeeded', transaction_id: created.body.data.id });
          done.push({ txn: created.body.data.id, reader });
        }
      }),
    );
    expect(done).toHaveLength(50);
    expect(statuses.filter((s) => s >= 400)).toEqual([]);
    for (const { txn } of done) expect((await api.get<{ data: { status: string } }>(`/v1/transactions/${txn}`)).body.data.status).toBe('succeeded');

    // Every sale's approval reached the agent.
    await eventually(() => (done.every(({ txn }) => pushed(agent).some((s) => s.activity === 'approved' && s.action?.transaction_id === txn)) ? true : undefined), 10_000);
    const states = pushed(agent);
    const first = done[0]!;
    const sale = states.filter((s) => s.action?.transaction_id === first.txn).map((s) => s.activity);
    expect(sale).toContain('waiting_for_card');
    expect(sale.at(-1)).toBe('approved');

    const report = await sim.control.rateLimits();
    expect(report.endpoints.filter((e) => e.rateLimited > 0)).toEqual([]);
    // No reader is polled: a poll every 100 ms would be hundreds of reads. A read is the exception
    // (two events about different payments within one second). Each intent is read once, when its
    // approval's event comes (the card's details), and at most a few more by the payments'
    // reconciler when a payment waited in the burst past its ten seconds.
    expect(count(report, 'GET /v1/terminal/readers/:id')).toBeLessThanOrEqual(3);
    expect(count(report, 'GET /v1/terminal/readers')).toBe(0);
    expect(count(report, 'GET /v1/payment_intents/:id')).toBeLessThanOrEqual(60);
    expect(report.requests / 50).toBeLessThanOrEqual(4.5);
  }, 180_000);

  it('costs the processor nothing while the readers are idle', async () => {
    const sim = t.stack.simulator!;
    await sim.control.resetRateLimits();
    await new Promise((r) => setTimeout(r, 2_000));
    // The one read allowed is readiness's check that the processor answers (the platform's balance,
    // every 15 s: server/operations/readiness.ts), which is not about readers.
    const report = await sim.control.rateLimits();
    expect(report.requests - count(report, 'GET /v1/balance')).toBe(0);
  });
});

describe('an event lost on the way', () => {
  let t: TestServer;
  let m: CreatedMerchant;
  let agent: UpstreamAgent;
  let api: Api;
  let reader: string;

  beforeAll(async () => {
    t = await startTestServer({ readerCheckMs: CHECK_MS });
    m = await t.merchant('Lossy Café');
    const made = await setUp(t, m, 1);
    api = made.api;
    reader = made.tmr[0]!;
    agent = await connectUpstreamAgent(t.url, m.keys.sk_test, 60_000);
    await agent.next('reader_states');
  }, 60_000);

  afterAll(async () => {
    agent?.close();
    await t?.stop();
  });

  it('is recovered by the reconciliation read once the action is overdue', async () => {
    const sim = t.stack.simulator!;
    const created = await api.post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 2000 });
    expect((await api.post('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader })).status).toBe(200);
    await agent.next('reader_state', (msg) => (msg.reader as ReaderStatePush).activity === 'waiting_for_card');
    await sim.control.resetRateLimits();
    // Every event of the tap and its outcome is lost: the processing and action_updated events at
    // the tap, then the intent's, the charge's and the reader's at the approval.
    await sim.control.setWebhookFaults({ dropNext: 20 });
    // The customer taps (straight at the processor: simulate-payment would itself read the reader after its wait).
    const stripe = new Stripe(sim.keys.secretTest, { host: sim.host, port: sim.port, protocol: 'http' });
    await stripe.testHelpers.terminal.readers.presentPaymentMethod(reader);
    const from = agent.messages.length;
    const approved = await agent.next('reader_state', (msg) => (msg.reader as ReaderStatePush).activity === 'approved', from, CHECK_MS * 6);
    expect((approved.reader as ReaderStatePush).action).toMatchObject({ transaction_id: created.body.data.id, status: 'succeeded' });
    const report = await sim.control.rateLimits();
    // One reconciliation read brought it, not a poll: a handful at most while the deadline passed once or twice.
    const reads = count(report, 'GET /v1/terminal/readers/:id');
    expect(reads).toBeGreaterThanOrEqual(1);
    expect(reads).toBeLessThanOrEqual(3);
    await sim.control.setWebhookFaults({ dropNext: 0 });
  }, 30_000);

  it('ignores an old event that arrives after newer state', async () => {
    const sim = t.stack.simulator!;
    await sim.control.setWebhookFaults({ hold: true });
    const created = await api.post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 2100 });
    expect((await api.post('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader })).status).toBe(200);
    const stripe = new Stripe(sim.keys.secretTest, { host: sim.host, port: sim.port, protocol: 'http' });
    await stripe.testHelpers.terminal.readers.presentPaymentMethod(reader);
    await sim.control.advanceTimers();
    // The held events go out newest first: the approval, then the tap's `action_updated` and `processing`.
    const from = agent.messages.length;
    await sim.control.setWebhookFaults({ hold: false });
    await agent.next('reader_state', (msg) => (msg.reader as ReaderStatePush).activity === 'approved' && (msg.reader as ReaderStatePush).action?.transaction_id === created.body.data.id, from, 10_000);
    await eventually(async () => ((await sim.control.webhookDeliveries()).every((d) => d.status !== 'pending' && d.status !== 'held') ? true : undefined), 10_000);
    await new Promise((r) => setTimeout(r, 300));
    const after = pushed({ ...agent, messages: agent.messages.slice(from) } as UpstreamAgent).filter((s) => s.action?.transaction_id === created.body.data.id);
    expect(after.at(-1)?.activity).toBe('approved');
    expect(after.map((s) => s.activity)).not.toContain('processing');
  }, 30_000);
});
