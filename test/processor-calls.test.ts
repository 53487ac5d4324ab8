import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import type { RateLimitReport } from '../simulator/index.js';
import { client } from './helpers/api.js';
import { openTestDb } from './helpers/db.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * What a payment costs in calls to the processor, whose request budget every merchant of the
 * platform shares (docs/processor.md): counted by the simulator, once the processor's own events
 * about the payment have been handled, since those used to cost a read each.
 */

let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;
let reader: { id: string; processor_terminal_id: string };

type Txn = { id: string; status: string; payment_intent_id: string; card_brand: string | null; card_last_four: string | null; failure_code: string | null };

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Calls Café');
  api = client(t.url, m.keys.sk_test);
  const location = await api.post('/v1/terminal/locations', { display_name: 'Front', address: { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' } });
  expect(location.status).toBe(201);
  reader = (await api.post<{ data: { id: string; processor_terminal_id: string } }>('/v1/terminals', { name: 'Till 1', registration_code: 'simulated-wpe' })).body.data;
  // The merchant's connected account is made and read on its first payment: not a per-payment cost.
  await api.post('/v1/transactions', { amount: 100, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
});
afterAll(() => t.stop());

/** Requests about payments and readers: not the platform's balance (readiness) nor account reads. */
async function paymentCalls(): Promise<Map<string, number>> {
  const sim = t.stack.simulator;
  if (!sim) throw new Error('no simulator');
  const report = (await (await fetch(`http://${sim.host}:${sim.port}/_sim/rate_limits`)).json()) as RateLimitReport;
  const about = /\/v1\/(payment_intents|charges|terminal|test_helpers\/terminal)/;
  return new Map(report.endpoints.filter((e) => about.test(e.endpoint)).map((e) => [e.endpoint, e.requests]));
}

function callsSince(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const made: Record<string, number> = {};
  for (const [endpoint, count] of after) if (count > (before.get(endpoint) ?? 0)) made[endpoint] = count - (before.get(endpoint) ?? 0);
  return made;
}

/** Waits until the server has handled the processor's events of these types about the intent. */
async function handled(intentId: string, types: string[]): Promise<void> {
  await eventually(async () => {
    const db = await openTestDb(t.dataDir);
    try {
      const seen = (await db.all<{ type: string }>('select type from processor_events where object_id = ?', intentId)).map((e) => e.type);
      return types.every((type) => seen.includes(type)) ? true : undefined;
    } finally {
      await db.close();
    }
  }, 10_000);
}

describe('processor calls per payment', () => {
  it('an online card payment confirmed on creation is one call, its events included', async () => {
    const before = await paymentCalls();
    const res = await api.post<{ data: Txn }>('/v1/transactions', { amount: 1000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ status: 'succeeded', card_brand: 'visa', card_last_four: '4242' });
    await handled(res.body.data.payment_intent_id, ['payment_intent.succeeded']);
    expect(callsSince(before, await paymentCalls())).toEqual({ 'POST /v1/payment_intents': 1 });
  });

  it('a card declined on creation is one call, with the card it tried', async () => {
    const before = await paymentCalls();
    const res = await api.post<{ data: Txn; error: { code: string } }>('/v1/transactions', { amount: 1000, currency: 'usd', payment_method: 'pm_card_chargeDeclined', confirm: true });
    expect(res.status).toBe(402);
    const list = await api.get<{ data: Txn[] }>('/v1/transactions?size=1');
    const declined = list.body.data[0];
    expect(declined).toMatchObject({ status: 'failed', failure_code: 'card_declined', card_last_four: '0002' });
    await handled(declined?.payment_intent_id ?? '', ['payment_intent.payment_failed']);
    expect(callsSince(before, await paymentCalls())).toEqual({ 'POST /v1/payment_intents': 1 });
  });

  it('a reader payment is the create, the process and the tap: its outcome comes from the events', async () => {
    // The reader's registration a moment ago said it was online: no read before the payment.
    const before = await paymentCalls();
    const created = await api.post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 1500, terminal_id: reader.id });
    expect(created.status).toBe(201);
    const sent = await api.post('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader.processor_terminal_id });
    expect(sent.status).toBe(200);
    await api.post('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id });
    await handled(created.body.data.payment_intent_id, ['payment_intent.succeeded']);
    const paid = (await api.get<{ data: Txn }>(`/v1/transactions/${created.body.data.id}`)).body.data;
    expect(paid).toMatchObject({ status: 'succeeded', card_brand: 'visa', card_last_four: '4242' });
    expect(callsSince(before, await paymentCalls())).toEqual({
      'POST /v1/payment_intents': 1,
      'POST /v1/terminal/readers/:id/process_payment_intent': 1,
      'POST /v1/test_helpers/terminal/readers/:id/present_payment_method': 1,
    });
  });

  it('a reader the processor reports offline is refused before a payment exists, and read until it is back', async () => {
    const control = t.stack.simulator?.control;
    if (!control) throw new Error('no simulator');
    const count = async () => (await api.get<{ total_count: number }>('/v1/transactions?size=1')).body.total_count;
    await control.setReaderOnline(reader.processor_terminal_id, false);
    try {
      // It said online moments ago (the last payment's answers and events): this payment is made
      // without a read, and sending it to the reader is what finds the reader gone.
      const made = await api.post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 1300, terminal_id: reader.id });
      expect(made.status).toBe(201);
      const sent = await api.post<{ error: Record<string, unknown> }>('/v1/terminal/process-payment', { payment_intent_id: made.body.data.payment_intent_id, reader_id: reader.processor_terminal_id });
      expect(sent.status).toBe(409);
      expect(sent.body.error).toMatchObject({ type: 'invalid_request_error', code: 'reader_offline' });
      await api.post(`/v1/transactions/${made.body.data.id}/cancel`, {});

      // Now the processor has said it is offline: the next attempt reads it, and is refused before a payment exists.
      const before = await paymentCalls();
      const payments = await count();
      const refused = await api.post<{ error: Record<string, unknown> }>('/v1/terminal/create-payment', { amount: 1300, terminal_id: reader.id });
      expect(refused.status).toBe(409);
      expect(refused.body.error).toEqual({
        type: 'invalid_request_error',
        code: 'reader_offline',
        message: 'The reader is offline: check its power and network, or take the payment by link',
      });
      expect(await count()).toBe(payments);
      expect(callsSince(before, await paymentCalls())).toEqual({ 'GET /v1/terminal/readers/:id': 1 });
    } finally {
      await control.setReaderOnline(reader.processor_terminal_id, true);
    }
    // Last said offline: read again, and taken once it is back.
    const before = await paymentCalls();
    const back = await api.post<{ data: { id: string } }>('/v1/terminal/create-payment', { amount: 1300, terminal_id: reader.id });
    expect(back.status).toBe(201);
    expect(callsSince(before, await paymentCalls())).toEqual({ 'GET /v1/terminal/readers/:id': 1, 'POST /v1/payment_intents': 1 });
    await api.post(`/v1/transactions/${back.body.data.id}/cancel`, {});
  });
});
