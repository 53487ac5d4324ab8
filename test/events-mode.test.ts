import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { nextSeq } from '../server/db/counters.js';
import { client, type Json } from './helpers/api.js';
import { json, runCli } from './helpers/cli.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * Spec §6.6: an event stored without `data.is_test` is of unknown mode, not live. Such a row is put
 * into the store as older deliveries left them; the event log over HTTP, the webhook worker and
 * `pos events` are then asked about it.
 */

let t: TestServer;
let m: CreatedMerchant;
let r: Receiver;

beforeAll(async () => {
  // --simulate-live lets a live endpoint point at the local receiver (docs/webhooks.md, Egress).
  t = await startTestServer({ simulateLive: true });
  m = await t.merchant('Legacy Shop');
  r = await startReceiver();
});
afterAll(async () => {
  await r.close();
  await t.stop();
});

async function storeLegacyEvent(id: string): Promise<void> {
  await t.server.store.transaction(async (trx) => {
    const seq = await nextSeq(trx, m.merchant.id, 'live', 'events');
    await trx
      .insertInto('events')
      .values({ id, merchant_id: m.merchant.id, mode: 'live', seq, type: 'customer.created', object_id: 'legacy-customer', data: JSON.stringify({ id: 'legacy-customer', name: 'Before 2026-08-31' }), created_at: Date.now() })
      .execute();
  });
}

describe('events of unknown mode (spec §6.6)', () => {
  it('are listed as unknown, never delivered to a live endpoint, and shown as such by pos events', async () => {
    const live = client(t.url, m.keys.sk_live);
    const endpoint = await live.post<{ data: { id: string } }>('/v1/webhook-endpoints', { url: r.url });
    expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);

    await storeLegacyEvent('evt_legacyBefore0831');
    const customer = await live.post<{ data: { id: string } }>('/v1/customers', { name: 'Known live' });
    expect(customer.status).toBe(201);

    const list = await live.get<{ data: (Json & { id: string; mode: string; type: string })[] }>('/v1/events');
    expect(list.body.data.map((e) => [e.type, e.id === 'evt_legacyBefore0831' ? 'legacy' : 'new', e.mode])).toEqual([
      ['customer.created', 'new', 'live'],
      ['customer.created', 'legacy', 'unknown'],
    ]);
    expect((await live.get<{ data: { mode: string } }>('/v1/events/evt_legacyBefore0831')).body.data.mode).toBe('unknown');

    await eventually(() => (r.received.some((x) => x.event.data.id === customer.body.data.id) ? true : undefined), 10_000);
    // The worker had every chance: the later event went out, the legacy one never will.
    expect(r.received.map((x) => x.event.id)).not.toContain('evt_legacyBefore0831');
    const resend = await live.post<{ error: Json }>('/v1/events/evt_legacyBefore0831/resend', { endpoint_id: endpoint.body.data.id });
    expect(resend.status).toBe(409);
    expect(resend.body.error).toMatchObject({ type: 'invalid_request_error', code: 'event_mode_unknown' });

    const env = { POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_live };
    const table = await runCli(['events', 'list'], { env });
    expect(table.status, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/evt_legacyBefore0831\s+customer\.created\s+unknown/);
    expect(table.stdout).toContain('mode unknown: stored without is_test');
    const asJson = json<{ data: { id: string; mode: string }[] }>(await runCli(['events', 'list', '--json'], { env }));
    expect(asJson.data.find((e) => e.id === 'evt_legacyBefore0831')?.mode).toBe('unknown');
    const detail = await runCli(['events', 'get', 'evt_legacyBefore0831'], { env });
    expect(detail.stdout).toContain('mode unknown');
  });
});
