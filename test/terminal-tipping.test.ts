import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client, type Json } from './helpers/api.js';
import { simulatorSdk } from './helpers/payments.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * On-reader tipping and the customer's cancel button, through a real server and the simulator:
 * the location's tipping goes to a processor Terminal Configuration, the reader shows Stripe's
 * smart-tip suggestions, the customer (played through the simulator's control API) picks one, and
 * the tip lands in the PaymentIntent and the transaction.
 */

let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;
let sim: string;
let location: { id: string; processor_location_id: string };
let reader: { id: string; processor_terminal_id: string };

const ADDRESS = { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' };
const SMART = { percentages: [15, 18, 20], fixed_amounts: [100, 200, 300], smart_tip_threshold: 1000 };

type Created = { data: { id: string; payment_intent_id: string } };
type Txn = { data: Json & { status: string; amount: number; tip_amount: number } };
type Display = { screen: string; amount: number | null; tip: number | null; total: number | null; customer_cancellation: boolean; tipping: { kind: string; options: { option: number; amount: number; percentage: number | null }[] } | null; lines: string[] };

beforeAll(async () => {
  t = await startTestServer({ reconcileIntervalMs: 100 });
  m = await t.merchant('Tip Jar Café');
  api = client(t.url, m.keys.sk_test);
  sim = t.stack.simulator?.url ?? '';
  const created = await api.post<{ data: typeof location & Json }>('/v1/terminal/locations', { display_name: 'Front', address: ADDRESS, tipping: SMART });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  location = created.body.data;
  expect(created.body.data.tipping).toEqual({ currency: 'usd', ...SMART });
  reader = (await api.post<{ data: typeof reader }>('/v1/terminals', { name: 'Till', registration_code: 'simulated-wpe' })).body.data;
});
afterAll(() => t.stop());

async function display(): Promise<Display> {
  const res = await fetch(`${sim}/_sim/readers/${reader.processor_terminal_id}/display`);
  expect(res.status).toBe(200);
  return (await res.json()) as Display;
}

async function customer(path: string, body?: Json): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${sim}/_sim/readers/${reader.processor_terminal_id}/${path}`, {
    method: 'POST',
    ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

async function sendToReader(amount: number, extra: Json = {}): Promise<Created['data']> {
  const created = await api.post<Created>('/v1/terminal/create-payment', { amount, ...extra });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const processed = await api.post('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader.processor_terminal_id });
  expect(processed.status, JSON.stringify(processed.body)).toBe(200);
  return created.body.data;
}

async function tap(extra: Json = {}): Promise<Json> {
  const res = await api.post<{ data: Json }>('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
}

async function settled(id: string): Promise<Txn['data']> {
  return eventually(async () => {
    const res = await api.get<Txn>(`/v1/transactions/${id}`);
    return res.body.data.status !== 'pending' ? res.body.data : undefined;
  });
}

describe('tipping configuration per location', () => {
  it('is mirrored to a processor Terminal Configuration assigned to the location', async () => {
    const stripe = simulatorSdk(t);
    const onProcessor = (await stripe.terminal.locations.retrieve(location.processor_location_id)) as Stripe.Terminal.Location;
    expect(onProcessor.configuration_overrides).toMatch(/^tmc_/);
    const config = (await stripe.terminal.configurations.retrieve(String(onProcessor.configuration_overrides))) as Stripe.Terminal.Configuration;
    expect(config.tipping?.usd).toEqual(SMART);
  });

  it('refuses hostile tipping with a 400 naming the param, and changes nothing', async () => {
    const cases: [Json, string][] = [
      [{ percentages: [0, 10, 20] }, 'tipping[percentages][0]'],
      [{ percentages: [101] }, 'tipping[percentages][0]'],
      [{ percentages: [10, 15, 18, 20] }, 'tipping[percentages]'],
      [{ percentages: [12.5] }, 'tipping[percentages][0]'],
      [{ percentages: ['15'] }, 'tipping[percentages][0]'],
      [{ fixed_amounts: [-100] }, 'tipping[fixed_amounts][0]'],
      [{ fixed_amounts: [100, 200, 300, 400] }, 'tipping[fixed_amounts]'],
      [{ fixed_amounts: [1e12] }, 'tipping[fixed_amounts][0]'],
      [{ percentages: [15], fixed_amounts: [100] }, 'tipping[smart_tip_threshold]'],
      [{ percentages: [15], smart_tip_threshold: 1000 }, 'tipping[smart_tip_threshold]'],
      [{}, 'tipping[percentages]'],
      [{ percentages: [15], currency: 'zzz' }, 'tipping[currency]'],
      [{ percentages: [15], emoji: '💸' }, 'tipping[emoji]'],
    ];
    for (const [tipping, param] of cases) {
      const res = await api.post<{ error: Json }>(`/v1/terminal/locations/${location.id}`, { tipping });
      expect(res.status, JSON.stringify(tipping)).toBe(400);
      expect(res.body.error.param, JSON.stringify(tipping)).toBe(param);
    }
    expect((await api.post<{ error: Json }>('/v1/terminal/locations', { display_name: 'Bad', address: ADDRESS, tipping: 'lots' })).status).toBe(400);
    expect((await api.post<{ error: Json }>('/v1/terminal/locations/00000000-0000-4000-8000-000000000000', { tipping: null })).status).toBe(404);
    const listed = (await api.get<{ data: (Json & { tipping: unknown })[] }>('/v1/terminal/locations')).body.data;
    expect(listed).toHaveLength(1);
    expect(listed[0]?.tipping).toEqual({ currency: 'usd', ...SMART });
  });
});

describe('the tip screen', () => {
  it('shows percentages at or above the smart-tip threshold; the chosen tip lands in the payment and the PaymentIntent', async () => {
    const created = await sendToReader(4000);
    const shown = await display();
    expect(shown).toMatchObject({ screen: 'tip_selection', amount: 4000, customer_cancellation: true });
    expect(shown.tipping?.kind).toBe('percentages');
    expect(shown.tipping?.options.map((o) => [o.percentage, o.amount])).toEqual([
      [15, 600],
      [18, 720],
      [20, 800],
    ]);
    expect(shown.lines.join('\n')).toContain('18% ($7.20)');

    const chosen = await customer('tip', { option: 2 });
    expect(chosen.status, JSON.stringify(chosen.body)).toBe(200);
    expect(chosen.body).toMatchObject({ screen: 'collect_payment', tip: 720, total: 4720 });
    expect(await tap()).toMatchObject({ status: 'succeeded', transaction_id: created.id });

    expect(await settled(created.id)).toMatchObject({ status: 'succeeded', amount: 4720, tip_amount: 720, amount_captured: 4720 });
    const pi = await simulatorSdk(t).paymentIntents.retrieve(created.payment_intent_id);
    expect(pi.amount).toBe(4720);
    expect(pi.amount_details?.tip?.amount).toBe(720);
    expect((await display()).screen).toBe('approved');
  });

  it('shows the fixed amounts below the threshold, and takes a custom amount', async () => {
    const created = await sendToReader(800);
    const shown = await display();
    expect(shown.tipping).toMatchObject({ kind: 'fixed_amounts', options: [{ amount: 100 }, { amount: 200 }, { amount: 300 }] });
    expect((await customer('tip', { option: 4 })).status).toBe(400);
    expect((await customer('tip', { amount: 250 })).body).toMatchObject({ tip: 250, total: 1050 });
    await tap();
    expect(await settled(created.id)).toMatchObject({ status: 'succeeded', amount: 1050, tip_amount: 250 });
  });

  it('no tip chosen: the payment is its amount', async () => {
    const created = await sendToReader(2000);
    expect((await customer('tip', { none: true })).body).toMatchObject({ tip: 0, total: 2000 });
    await tap();
    expect(await settled(created.id)).toMatchObject({ status: 'succeeded', amount: 2000, tip_amount: 0 });
  });

  it('skip_tipping shows no tip screen', async () => {
    const created = await sendToReader(3000, { skip_tipping: true });
    const shown = await display();
    expect(shown).toMatchObject({ screen: 'collect_payment', tipping: null, total: 3000 });
    expect((await customer('tip', { option: 1 })).status).toBe(400);
    await tap();
    expect(await settled(created.id)).toMatchObject({ status: 'succeeded', amount: 3000, tip_amount: 0 });
  });

  it('tipping turned off at the location: no tip screen', async () => {
    const off = await api.post<{ data: Json }>(`/v1/terminal/locations/${location.id}`, { tipping: null });
    expect(off.status).toBe(200);
    expect(off.body.data.tipping).toBeNull();
    try {
      const created = await sendToReader(3100);
      expect(await display()).toMatchObject({ screen: 'collect_payment', tipping: null });
      await tap();
      expect(await settled(created.id)).toMatchObject({ amount: 3100, tip_amount: 0 });
    } finally {
      expect((await api.post(`/v1/terminal/locations/${location.id}`, { tipping: SMART })).status).toBe(200);
    }
  });
});

describe('customer cancel on the reader', () => {
  it('fails the reader action with customer_canceled; the counter reads it from the reader state; the payment stays open and can be sent again', async () => {
    const created = await sendToReader(2500);
    const pressed = await customer('customer_cancel');
    expect(pressed.status, JSON.stringify(pressed.body)).toBe(200);
    expect((await display()).screen).toBe('canceled');

    // The processor's action_failed event reaches the server, which keeps it on the reader.
    const action = await eventually(async () => {
      const listed = await api.get<{ data: { id: string; action: Json | null }[] }>('/v1/terminal/readers');
      const got = listed.body.data.find((r) => r.id === reader.id)?.action;
      return got?.status === 'failed' ? got : undefined;
    });
    expect(action).toMatchObject({
      type: 'process_payment_intent',
      status: 'failed',
      failure_code: 'customer_canceled',
      failure_message: expect.stringMatching(/canceled by the customer/i),
      payment_intent_id: created.payment_intent_id,
    });
    expect((await api.get<Txn>(`/v1/transactions/${created.id}`)).body.data.status).toBe('pending');
    const pi = await simulatorSdk(t).paymentIntents.retrieve(created.payment_intent_id);
    expect(pi.status).toBe('requires_payment_method');

    // Retried on the reader, as Stripe allows: the customer pays this time.
    expect((await api.post('/v1/terminal/process-payment', { payment_intent_id: created.payment_intent_id, reader_id: reader.processor_terminal_id })).status).toBe(200);
    await customer('tip', { none: true });
    await tap();
    expect(await settled(created.id)).toMatchObject({ status: 'succeeded', amount: 2500 });
  });

  it('enable_customer_cancellation false: the reader shows no cancel button', async () => {
    const created = await sendToReader(2600, { enable_customer_cancellation: false, skip_tipping: true });
    expect((await display()).customer_cancellation).toBe(false);
    expect((await customer('customer_cancel')).status).toBe(400);
    await tap();
    expect(await settled(created.id)).toMatchObject({ status: 'succeeded' });
  });
});
