import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { client, type Json } from './helpers/api.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/** Retries 1,000× faster than in production (5 ms, 15 ms, 45 ms …; the 3-day window is 259 s). */
const FAST = { webhookRetryScale: 0.001 };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function server(flags: Parameters<typeof startTestServer>[0] = {}): Promise<TestServer> {
  const t = await startTestServer({ ...FAST, ...flags });
  cleanups.push(() => t.stop());
  return t;
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

async function endpoint(t: TestServer, key: string, url: string, body: Json = {}): Promise<{ id: string; secret: string }> {
  const res = await client(t.url, key).post<{ data: { id: string; secret: string } }>('/v1/webhook-endpoints', { url, ...body });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function pay(t: TestServer, key: string, metadata: Record<string, string> = {}): Promise<string> {
  const res = await client(t.url, key).post<{ data: { id: string } }>('/v1/transactions', { amount: 1250, payment_method: 'pm_card_visa', confirm: true, metadata });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

function typesFor(r: Receiver, objectId: string): string[] {
  return r.received.filter((x) => x.event.data.id === objectId && x.accepted).map((x) => x.type);
}

describe('webhook delivery (spec §6)', () => {
  it('signs every delivery so standardwebhooks verifies it, in the {id, type, created_at, request, data} envelope', async () => {
    const t = await server();
    const r = await receiver();
    const { keys } = await t.merchant();
    const ep = await endpoint(t, keys.sk_test, r.url);
    const id = await pay(t, keys.sk_test, { order: 'A-1' });
    await eventually(() => (typesFor(r, id).includes('payment.succeeded') ? true : undefined));
    for (const got of r.received) {
      const verified = r.verify(ep.secret, got) as Json;
      expect(verified).toEqual(got.event);
      expect(got.headers['webhook-id']).toBe(got.event.id);
      expect(got.headers['content-type']).toBe('application/json');
    }
    const succeeded = r.received.find((x) => x.type === 'payment.succeeded');
    expect(Object.keys(succeeded?.event ?? {}).sort()).toEqual(['created_at', 'data', 'id', 'request', 'type']);
    // The payment's create named its request; its success came with the processor's answer to it.
    expect(r.received.find((x) => x.type === 'payment.created')?.event.request).toMatchObject({ id: expect.stringMatching(/^req_/) });
    expect(succeeded?.event.id).toMatch(/^evt_/);
    expect(succeeded?.event.data).toMatchObject({ id, amount: 1250, is_test: true, metadata: { order: 'A-1' }, card_brand: 'visa', card_last_four: '4242', platform_fee_cents: 38, tip_amount: 0 });
    expect(succeeded?.event.data.reference).toMatch(/^txn_/);
    expect(typesFor(r, id)).toEqual(['payment.created', 'payment.succeeded']);
  });

  it('only sends test events to test endpoints, filters by type, and skips events older than the endpoint', async () => {
    // The live receiver is local too, which only a server whose live endpoints follow the test rule allows.
    const t = await server({ liveEndpointsFollowTestRule: true });
    const [testR, liveR, filtered] = [await receiver(), await receiver(), await receiver()];
    const { keys } = await t.merchant();
    const early = await pay(t, keys.sk_test);
    await endpoint(t, keys.sk_test, testR.url);
    await endpoint(t, keys.sk_live, liveR.url);
    await endpoint(t, keys.sk_test, filtered.url, { events: ['payment.succeeded'] });
    const other = await t.merchant('Other Shop');
    const otherR = await receiver();
    await endpoint(t, other.keys.sk_test, otherR.url);
    const id = await pay(t, keys.sk_test);
    await eventually(() => (typesFor(testR, id).length === 2 && filtered.acceptedIds().length === 1 ? true : undefined));
    expect(filtered.received.map((x) => x.type)).toEqual(['payment.succeeded']);
    expect(testR.received.every((x) => x.event.data.is_test === true)).toBe(true);
    expect(testR.received.some((x) => x.event.data.id === early)).toBe(false);
    // Give a wrong delivery every chance to arrive before asserting it did not.
    await new Promise((res) => setTimeout(res, 300));
    expect(liveR.received).toEqual([]);
    expect(otherR.received).toEqual([]);
  });

  it('retries a receiver that is down until it is up: every event arrives, exactly once after dedupe by id', async () => {
    const t = await server();
    const r = await receiver();
    let up = false;
    r.answer = () => (up ? 200 : 503);
    const { keys } = await t.merchant();
    await endpoint(t, keys.sk_test, r.url);
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => pay(t, keys.sk_test, { n: String(i) })));
    const downSince = Date.now();
    // Down long enough for retries to span several seconds of webhook-timestamp.
    await eventually(() => (r.received.length >= 20 && Date.now() - downSince > 1_500 ? true : undefined));
    up = true;
    const events = await client(t.url, keys.sk_test).get<{ data: { id: string }[] }>('/v1/events?size=100');
    const expected = new Set(events.body.data.map((e) => e.id));
    expect(expected.size).toBe(20);
    await eventually(() => (new Set(r.acceptedIds()).size === expected.size ? true : undefined), 10_000);
    expect(new Set(r.acceptedIds())).toEqual(expected);
    // Retries of one event keep its id while the timestamp and signature are new each time.
    const first = r.received.filter((x) => x.id === r.received[0]?.id);
    expect(first.length).toBeGreaterThan(1);
    expect(new Set(first.map((x) => x.event.id)).size).toBe(1);
    const stamps = new Set(first.map((x) => x.headers['webhook-timestamp']));
    expect(stamps.size).toBeGreaterThan(1);
    expect(new Set(first.map((x) => x.headers['webhook-signature'])).size).toBe(stamps.size);
    // payment.created reached the endpoint before the same payment's payment.succeeded.
    for (const id of ids) expect(typesFor(r, id)).toEqual(['payment.created', 'payment.succeeded']);
  });

  it('treats 3xx as failure, honours Retry-After, and disables the endpoint on 410', async () => {
    const t = await server();
    const r = await receiver();
    const answers: (number | { status: number; headers: Record<string, string> })[] = [302, { status: 503, headers: { 'Retry-After': '1' } }, 200];
    r.answer = () => answers.shift() ?? 200;
    const { keys } = await t.merchant();
    const api = client(t.url, keys.sk_test);
    await endpoint(t, keys.sk_test, r.url, { events: ['payment.created'] });
    await pay(t, keys.sk_test);
    await eventually(() => (r.acceptedIds().length === 1 ? true : undefined), 5_000);
    expect(r.received).toHaveLength(3);
    const [a, b, c] = r.received.map((x) => x.at);
    expect((c ?? 0) - (b ?? 0)).toBeGreaterThanOrEqual(950);
    expect((b ?? 0) - (a ?? 0)).toBeLessThan(900);
    // The receiver has answered; the server records the outcome just after.
    const delivery = await eventually(async () => {
      const res = await api.get<{ data: { deliveries: { status: string; attempts: { status_code: number; error: string | null }[] }[] } }>(`/v1/events/${r.received[0]?.id}`);
      const d = res.body.data.deliveries[0];
      return d?.status === 'delivered' ? d : undefined;
    });
    expect(delivery.attempts.map((x) => x.status_code)).toEqual([302, 503, 200]);
    expect(delivery.attempts[0]?.error).toMatch(/redirect/);

    const gone = await receiver();
    gone.answer = () => 410;
    const ep = await endpoint(t, keys.sk_test, gone.url);
    await pay(t, keys.sk_test);
    const disabled = await eventually(async () => {
      const res = await api.get<{ data: { status: string; disabled_reason: string } }>(`/v1/webhook-endpoints/${ep.id}`);
      return res.body.data.status === 'disabled' ? res.body.data : undefined;
    });
    expect(disabled.disabled_reason).toMatch(/410/);
    await new Promise((res) => setTimeout(res, 200));
    expect(gone.received).toHaveLength(1);
  });

  it('sends a backlog to one endpoint once per event, in order per payment, never more than 8 requests at a time', async () => {
    // The parked requests wait for every payment to be made, which on a loaded machine can take
    // longer than the default 15 s: at the longest timeout none of them is cut short and sent again.
    const t = await server({ webhookTimeoutMs: 30_000 });
    let open = 0;
    let most = 0;
    let parked: (() => void)[] | undefined = [];
    const seen: { id: string; type: string; object: string }[] = [];
    // Holds its first requests unanswered until every payment is made, so the events pile up as a
    // backlog; then answers each a moment later, so that requests overlap and the in-flight limit
    // is what bounds them.
    const receiver = createServer((req, res) => {
      open += 1;
      most = Math.max(most, open);
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; type: string; data: { id: string } };
        const answer = () => {
          seen.push({ id: event.id, type: event.type, object: event.data.id });
          setTimeout(() => {
            open -= 1;
            res.writeHead(200).end();
          }, 2);
        };
        if (parked) parked.push(answer);
        else answer();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
    const { keys } = await t.merchant();
    await endpoint(t, keys.sk_test, `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`);
    const payments = await Promise.all(Array.from({ length: 40 }, () => pay(t, keys.sk_test)));
    const held = parked;
    parked = undefined;
    for (const answer of held) answer();
    await eventually(() => (seen.length >= 80 ? true : undefined), 20_000);
    await new Promise((res) => setTimeout(res, 200));
    expect(held.length).toBeGreaterThan(0);
    expect(seen).toHaveLength(80);
    expect(new Set(seen.map((e) => e.id)).size).toBe(80);
    for (const id of payments) expect(seen.filter((e) => e.object === id).map((e) => e.type)).toEqual(['payment.created', 'payment.succeeded']);
    expect(most).toBeLessThanOrEqual(8);
  }, 120_000);

  it('a black-hole receiver does not slow delivery to a healthy one', async () => {
    // The black hole holds each request for the whole 30 s timeout: had it held up the healthy
    // endpoint, the healthy one could not have everything before the first of those timed out.
    const t = await server({ webhookTimeoutMs: 30_000 });
    const [hole, healthy] = [await receiver(), await receiver()];
    hole.answer = () => 'hang';
    const { keys } = await t.merchant();
    await endpoint(t, keys.sk_test, hole.url);
    await endpoint(t, keys.sk_test, healthy.url);
    const started = Date.now();
    await Promise.all(Array.from({ length: 15 }, () => pay(t, keys.sk_test)));
    await eventually(() => (healthy.acceptedIds().length === 30 ? true : undefined), 25_000);
    expect(Date.now() - started).toBeLessThan(30_000);
    // The black hole holds only its own slots (8), and none of its requests has ended yet.
    expect(hole.received.length).toBeLessThanOrEqual(8);
    expect(hole.received.length).toBeGreaterThan(0);
  });

  it('disables an endpoint that failed for the whole retry window and says why', async () => {
    // 3 days × 0.00001 ≈ 2.6 s.
    const t = await server({ webhookRetryScale: 0.00001 });
    const r = await receiver();
    r.answer = () => 500;
    const { keys } = await t.merchant();
    const api = client(t.url, keys.sk_test);
    const ep = await endpoint(t, keys.sk_test, r.url, { events: ['payment.created'] });
    await pay(t, keys.sk_test);
    const disabled = await eventually(async () => {
      const res = await api.get<{ data: { status: string; disabled_reason: string; failing_since: string } }>(`/v1/webhook-endpoints/${ep.id}`);
      return res.body.data.status === 'disabled' ? res.body.data : undefined;
    }, 10_000);
    expect(disabled.disabled_reason).toMatch(/every delivery failed since .*HTTP 500/);
    expect(r.received.length).toBeGreaterThan(3);
  });

  it('lists events by type, shows delivery attempts, and resends to one endpoint', async () => {
    const t = await server();
    const [r1, r2] = [await receiver(), await receiver()];
    const { keys } = await t.merchant();
    const api = client(t.url, keys.sk_test);
    const e1 = await endpoint(t, keys.sk_test, r1.url);
    await endpoint(t, keys.sk_test, r2.url);
    const id = await pay(t, keys.sk_test);
    await eventually(() => (r1.acceptedIds().length === 2 && r2.acceptedIds().length === 2 ? true : undefined));

    const list = await api.get<{ data: { id: string; type: string; data: Json }[]; totalCount: number }>('/v1/events?type=payment.succeeded');
    expect(list.status).toBe(200);
    expect(list.body.totalCount).toBe(1);
    expect(list.body.data[0]).toMatchObject({ type: 'payment.succeeded', data: { id, is_test: true } });
    const all = await api.get<{ data: { type: string }[]; totalCount: number }>('/v1/events');
    expect(all.body.data.map((e) => e.type)).toEqual(['payment.succeeded', 'payment.created']);

    const eventId = list.body.data[0]?.id ?? '';
    await eventually(async () => {
      const res = await api.get<{ data: { deliveries: { status: string }[] } }>(`/v1/events/${eventId}`);
      return res.body.data.deliveries.every((d) => d.status === 'delivered') ? true : undefined;
    });
    const detail = await api.get<{ data: { deliveries: { endpoint_id: string; status: string; attempts: { attempted_at: string; status_code: number; latency_ms: number; error: null }[] }[] } }>(
      `/v1/events/${eventId}`,
    );
    expect(detail.body.data.deliveries).toHaveLength(2);
    const attempt = detail.body.data.deliveries[0]?.attempts[0];
    expect(attempt).toMatchObject({ status_code: 200, error: null });
    expect(attempt?.latency_ms).toBeGreaterThanOrEqual(0);

    const resent = await api.post<{ data: { deliveries: { manual: boolean }[] } }>(`/v1/events/${eventId}/resend`, { endpoint_id: e1.id });
    expect(resent.status).toBe(202);
    await eventually(() => (r1.acceptedIds().filter((x) => x === eventId).length === 2 ? true : undefined));
    expect(r2.acceptedIds().filter((x) => x === eventId)).toHaveLength(1);

    expect((await api.get('/v1/events/evt_nope')).status).toBe(404);
    expect((await client(t.url, keys.sk_live).get(`/v1/events/${eventId}`)).status).toBe(404);
    expect((await api.post(`/v1/events/${eventId}/resend`, { endpoint_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
  });
});
