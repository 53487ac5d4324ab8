import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { zonedEpoch } from '../shared/time-zone.js';
import { client, type Json } from './helpers/api.js';
import { json, runCli } from './helpers/cli.js';
import { ManualClock } from './helpers/domain.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually, tempDir } from './helpers/tmp.js';

/**
 * `pos report day` against a server whose clock the test moves: a bar in Auckland (13 hours ahead
 * of UTC in November) whose business day ends at 04:00, with sales just before and after that hour
 * and a sale paid part in cash and part on card. The close-out counts each sale in the bar's own
 * business day, the split sale once, and each part in its tender.
 */
const ZONE = 'Pacific/Auckland';
const ORDER = 'ord_harbour0000001';
const local = (day: number, hour: number, minute = 0) => zonedEpoch({ year: 2026, month: 11, day, hour, minute }, ZONE);

const clock = new ManualClock(local(21, 3, 30));
const config = tempDir('pos-close-out-config-');
let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;
let env: Record<string, string>;

type Report = {
  date: string;
  business_day: { time_zone: string; day_ends_at: string } | null;
  total: { succeeded: { count: number; amount: number } };
  tender: { cash: { count: number; amount: number }; card: { count: number; amount: number } };
};

async function cash(amount: number, terminalId: string, metadata?: Record<string, string>): Promise<void> {
  const res = await api.post('/v1/transactions', { amount, payment_method_type: 'cash', terminal_id: terminalId, ...(metadata ? { metadata } : {}) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

beforeAll(async () => {
  t = await startTestServer({}, { clock });
  m = await t.merchant('Harbour Bar');
  api = client(t.url, m.keys.sk_test);
  env = { POS_CONFIG_DIR: config.path, POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_test };
  const address = { line1: '1 Quay St', city: 'Auckland', postal_code: '1010', country: 'NZ' };
  expect((await api.post('/v1/terminal/locations', { display_name: 'Harbour bar', address, time_zone: ZONE, day_ends_at: '04:00' })).status).toBe(201);
  const registered = await api.post<{ data: { id: string; processor_terminal_id: string } }>('/v1/terminals', { name: 'Bar till', registration_code: 'simulated-wpe' });
  expect(registered.status).toBe(201);
  const till = registered.body.data;

  // 03:30 on the 21st: still the night of the 20th.
  await cash(100, till.id);
  // 04:10: the 21st's first sale, paid $20.00 in cash and $30.00 on card under one order.
  clock.ms = local(21, 4, 10);
  await cash(2000, till.id, { order: ORDER });
  const card = await api.post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 3000, terminal_id: till.id, metadata: { order: ORDER } });
  expect(card.status, JSON.stringify(card.body)).toBe(201);
  expect((await api.post('/v1/terminal/process-payment', { payment_intent_id: card.body.data.payment_intent_id, reader_id: till.processor_terminal_id })).status).toBe(200);
  expect((await api.post('/v1/terminal/simulate-payment', { reader_id: till.processor_terminal_id })).status).toBe(200);
  await eventually(async () => {
    const res = await api.get<{ data: Json & { status: string } }>(`/v1/transactions/${card.body.data.id}`);
    return res.body.data.status === 'succeeded' ? true : undefined;
  });
  // 02:00 on the 22nd: past midnight, still the 21st's business day; 04:05: the 22nd's.
  clock.ms = local(22, 2);
  await cash(400, till.id);
  clock.ms = local(22, 4, 5);
  await cash(800, till.id);
});
afterAll(async () => {
  await t?.stop();
  config.cleanup();
});

describe('the close-out in the location’s own business day', () => {
  it('counts the sales from 04:00 to 04:00 Auckland time, the split sale once and each part in its tender', async () => {
    const r = await runCli(['report', 'day', '--date', '2026-11-21', '--location', 'Harbour bar', '--json'], { env });
    expect(r.status, r.stderr).toBe(0);
    const day = json<{ data: Report }>(r).data;
    expect(day.business_day).toEqual({ time_zone: ZONE, day_ends_at: '04:00' });
    expect(day.total.succeeded).toEqual({ count: 2, amount: 5400 });
    expect(day.tender.cash).toMatchObject({ count: 2, amount: 2400 });
    expect(day.tender.card).toMatchObject({ count: 1, amount: 3000 });
    const before = json<{ data: Report }>(await runCli(['report', 'day', '--date', '2026-11-20', '--json'], { env })).data;
    expect(before.total.succeeded).toEqual({ count: 1, amount: 100 });
    const after = json<{ data: Report }>(await runCli(['report', 'day', '--date', '2026-11-22', '--json'], { env })).data;
    expect(after.total.succeeded).toEqual({ count: 1, amount: 800 });
  });

  it('says how the day was cut, and lists each part on the CSV under its order', async () => {
    const words = await runCli(['report', 'day', '--date', '2026-11-21', '--location', 'Harbour bar', '--float', '50'], { env });
    expect(words.status, words.stderr).toBe(0);
    expect(words.stdout).toContain('Close-out for 2026-11-21 (USD; business day 04:00 to 04:00, Pacific/Auckland)');
    expect(words.stdout).toContain('Cash: 2 paid ($24.00)');
    expect(words.stdout).toContain('Expected in drawer: $74.00 (float $50.00)');
    const csv = (await runCli(['report', 'day', '--date', '2026-11-21', '--csv'], { env })).stdout.trim().split('\n');
    const parts = csv.filter((l) => l.includes(`,${ORDER},`)).map((l) => l.split(',').slice(-3));
    expect(parts).toEqual([
      ['cash', 'succeeded', '04:10:00'],
      ['card', 'succeeded', '04:10:00'],
    ]);
    expect(csv.filter((l) => l.includes(',payment,')).map((l) => l.split(',').at(-1))).toEqual(['04:10:00', '04:10:00', '02:00:00']);
  });
});
