import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client, type Json } from './helpers/api.js';
import { json, runCli } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * A cart on the reader: line items given at create-payment are checked against the amount, stored
 * with the payment, and shown on the reader (`set_reader_display`) before it asks for the card.
 * Also the counter's view of a customer's cancel through `pos pay --wait`.
 */

let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;
let sim: string;
let reader: { id: string; processor_terminal_id: string };
let env: Record<string, string>;

const ADDRESS = { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' };
/** Amounts ending in 01, 05, 55, 65 or 75 are Stripe's card-present decline amounts: these avoid them. */
const LINES = [
  { description: 'Flat white', quantity: 2, amount: 450 },
  { description: 'Almond croissant', quantity: 1, amount: 380 },
];

type Display = { screen: string; cart: { line_items: Json[]; tax: number | null; total: number } | null; tipping: { kind: string; eligible_amount: number } | null; lines: string[] };

beforeAll(async () => {
  t = await startTestServer({ reconcileIntervalMs: 100 });
  m = await t.merchant('Cart Bakery');
  api = client(t.url, m.keys.sk_test);
  sim = t.stack.simulator?.url ?? '';
  await api.post('/v1/terminal/locations', { display_name: 'Front', address: ADDRESS, tipping: { percentages: [10, 15, 20] } });
  reader = (await api.post<{ data: typeof reader }>('/v1/terminals', { name: 'Till 1', registration_code: 'simulated-wpe' })).body.data;
  env = { POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_test };
});
afterAll(() => t.stop());

async function display(): Promise<Display> {
  return (await (await fetch(`${sim}/_sim/readers/${reader.processor_terminal_id}/display`)).json()) as Display;
}

async function processorCreates(): Promise<number> {
  const report = (await (await fetch(`${sim}/_sim/rate_limits`)).json()) as { endpoints: { endpoint: string; requests: number }[] };
  return report.endpoints.filter((e) => e.endpoint === 'POST /v1/payment_intents').reduce((n, e) => n + e.requests, 0);
}

/** Each `pos` run starts a Node process: on a loaded machine a test running two or three takes a while. */
const CLI_TEST_MS = 60_000;

describe('line items on create-payment', () => {
  it('that do not add up to the amount less tax: 400 naming line_items, nothing written, nothing sent to the processor', async () => {
    const before = (await api.get<{ data: unknown[] }>('/v1/transactions?size=100')).body.data.length;
    const creates = await processorCreates();
    const bad: [Json, string][] = [
      [{ amount: 1400, line_items: LINES }, 'line_items'],
      [{ amount: 1280 + 100, line_items: LINES, tax: 99 }, 'line_items'],
      [{ amount: 1275, tax: 100 }, 'tax'],
      [{ amount: 1275, line_items: [] }, 'line_items'],
      [{ amount: 1275, line_items: [{ description: '', quantity: 1, amount: 1275 }] }, 'line_items[0][description]'],
      [{ amount: 1275, line_items: [{ description: 'x'.repeat(5001), quantity: 1, amount: 1275 }] }, 'line_items[0][description]'],
      [{ amount: 1275, line_items: [{ description: 'Pie', quantity: 0, amount: 1275 }] }, 'line_items[0][quantity]'],
      [{ amount: 1275, line_items: [{ description: 'Pie', quantity: 1.5, amount: 850 }] }, 'line_items[0][quantity]'],
      [{ amount: 1275, line_items: [{ description: 'Pie', quantity: 1, amount: -5 }] }, 'line_items[0][amount]'],
      [{ amount: 1275, line_items: [{ description: 'Pie', quantity: 1, amount: '1275' }] }, 'line_items[0][amount]'],
      [{ amount: 1275, line_items: [{ description: 'Pie', quantity: 1, amount: 1275, sku: 'p1' }] }, 'line_items[0][sku]'],
      [{ amount: 101 * 50, line_items: Array.from({ length: 101 }, () => ({ description: 'Mint', quantity: 1, amount: 50 })) }, 'line_items'],
    ];
    for (const [body, param] of bad) {
      const res = await api.post<{ error: Json }>('/v1/terminal/create-payment', body);
      expect(res.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect(res.body.error.param, JSON.stringify(body).slice(0, 200)).toBe(param);
    }
    expect((await api.get<{ data: unknown[] }>('/v1/transactions?size=100')).body.data.length).toBe(before);
    expect(await processorCreates()).toBe(creates);
  });

  it('that add up are stored with the payment, shown on the reader before the tap, and cleared after it', async () => {
    const created = await api.post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 1380, line_items: LINES, tax: 100 });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const got = await api.get<{ data: Json }>(`/v1/transactions/${created.body.data.id}`);
    expect(got.body.data.cart).toEqual({ line_items: LINES, tax: 100 });

    const processed = await api.post('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader.processor_terminal_id });
    expect(processed.status, JSON.stringify(processed.body)).toBe(200);
    const shown = await display();
    expect(shown.cart).toEqual({ currency: 'usd', line_items: LINES, tax: 100, total: 1380 });
    // Tips are suggested on the amount before tax.
    expect(shown.tipping).toMatchObject({ kind: 'percentages', eligible_amount: 1280 });
    expect(shown.lines).toEqual(expect.arrayContaining(['2 x Flat white  $9.00', '1 x Almond croissant  $3.80', 'Tax  $1.00', 'Total  $13.80']));
    // The reader's state (what the agent pushes to the counter) is about the payment, not the cart
    // shown before it, whatever order the processor's events arrive in.
    await new Promise((r) => setTimeout(r, 500));
    const listed = await api.get<{ data: { id: string; action: Json | null }[] }>('/v1/terminal/readers');
    expect(listed.body.data.find((r) => r.id === reader.id)?.action).toMatchObject({ type: 'process_payment_intent', status: 'in_progress' });

    const tapped = await api.post<{ data: Json }>('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id });
    expect(tapped.body.data).toMatchObject({ status: 'succeeded' });
    expect(await display()).toMatchObject({ screen: 'approved', cart: null });
    const paid = await eventually(async () => {
      const res = await api.get<{ data: Json & { status: string } }>(`/v1/transactions/${created.body.data.id}`);
      return res.body.data.status === 'succeeded' ? res.body.data : undefined;
    });
    expect(paid).toMatchObject({ amount: 1380, tip_amount: 0, cart: { line_items: LINES, tax: 100 } });
  });

  it('pos pay --item builds the cart and charges its total', async () => {
    const run = runCli(['pay', '--item', 'Flat white:4.50x2', '--item', 'Almond croissant:3.80', '--reader', 'Till 1', '--wait', '--json'], { env });
    await eventually(async () => ((await display()).screen === 'tip_selection' ? true : undefined), 15_000);
    expect((await display()).cart).toMatchObject({ line_items: LINES, tax: null, total: 1280 });
    await api.post('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id });
    const r = await run;
    expect(r.status, r.stderr).toBe(0);
    expect(json<{ data: Json }>(r).data).toMatchObject({ status: 'succeeded', amount: 1280, tip_amount: 0, cart: { line_items: LINES, tax: null } });
  }, CLI_TEST_MS);

  it('pos simulate screen shows the cart and tips; pos simulate tap --tip-option picks one on the reader and it lands in the payment', async () => {
    const created = await api.post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 1280, line_items: LINES });
    await api.post('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader.processor_terminal_id });
    const screen = await runCli(['simulate', 'screen', 'Till 1'], { env });
    expect(screen.status, screen.stderr).toBe(0);
    expect(screen.stdout).toContain('2 x Flat white  $9.00');
    expect(screen.stdout).toContain('Total  $12.80');
    expect(screen.stdout).toContain('[3] 20% ($2.56)');
    const tapped = await runCli(['simulate', 'tap', 'Till 1', '--tip-option', '3'], { env });
    expect(tapped.status, tapped.stderr).toBe(0);
    const paid = await eventually(async () => {
      const res = await api.get<{ data: Json & { status: string } }>(`/v1/transactions/${created.body.data.id}`);
      return res.body.data.status === 'succeeded' ? res.body.data : undefined;
    });
    // 20 % of 12.80 is 2.56.
    expect(paid).toMatchObject({ amount: 1536, tip_amount: 256 });
  }, CLI_TEST_MS);

  it('pos pay --wait says the customer canceled on the reader and exits 3, the payment left open', async () => {
    const run = runCli(['pay', '8.00', '--reader', 'Till 1', '--no-tip', '--wait'], { env });
    await eventually(async () => ((await display()).screen === 'collect_payment' ? true : undefined), 15_000);
    const canceled = await runCli(['simulate', 'cancel', 'Till 1'], { env });
    expect(canceled.status, canceled.stderr).toBe(0);
    const r = await run;
    expect(r.status).toBe(3);
    expect(r.stderr).toMatch(/Customer canceled on the reader/);
    const open = (await api.get<{ data: { status: string; amount: number }[] }>('/v1/transactions?size=1')).body.data[0];
    expect(open).toMatchObject({ status: 'pending', amount: 800 });
  }, CLI_TEST_MS);
});
