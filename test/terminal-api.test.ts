import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { ReaderSchema, TerminalPaymentSchema } from '../shared/contract/terminal.js';
import { client, type Json } from './helpers/api.js';
import { eventsOf, simulatorSdk } from './helpers/payments.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;
let reader: { id: string; processor_terminal_id: string };

const ADDRESS = { line1: '1 Market St', city: 'San Francisco', state: 'CA', postal_code: '94105', country: 'US' };

beforeAll(async () => {
  // A long authorisation window makes the "card already tapped" races deterministic. The reader
  // goes offline here with no word from the processor (Stripe sends none), a moment after it last
  // said online: a max age of 0 reads it before every payment, as a reader not heard of for the
  // default age is (the default's cost and the word it trusts: test/processor-calls.test.ts).
  t = await startTestServer({ reconcileIntervalMs: 100, readerStatusMaxAgeMs: 0 }, { simulator: { authorizationDelayMs: 150 } });
  m = await t.merchant('Counter Café');
  api = client(t.url, m.keys.sk_test);
  expect((await api.post('/v1/terminal/locations', { display_name: 'Front counter', address: ADDRESS })).status).toBe(201);
  const registered = await api.post<{ data: { id: string; processor_terminal_id: string } }>('/v1/terminals', { name: 'Till 1', registration_code: 'simulated-wpe' });
  expect(registered.status).toBe(201);
  reader = registered.body.data;
});
afterAll(() => t.stop());

type Created = { data: { id: string; reference: string; payment_intent_id: string; client_secret: string; amount: number; currency: string; status: string } };
type Txn = { data: Json & { status: string; amount: number; tip_amount: number; receipt_url: string | null; reader_id: string | null; terminal_id: string | null } };

async function createAndProcess(amount = 4750, extra: Json = {}): Promise<Created['data']> {
  const created = await api.post<Created>('/v1/terminal/create-payment', { amount, ...extra });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const processed = await api.post<{ data: Json }>('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader.processor_terminal_id });
  expect(processed.status, JSON.stringify(processed.body)).toBe(200);
  expect(processed.body.data).toEqual({ reader_id: reader.processor_terminal_id, status: 'in_progress', action_type: 'process_payment_intent' });
  return created.body.data;
}

async function settled(id: string): Promise<Txn['data']> {
  return eventually(async () => {
    const res = await api.get<Txn>(`/v1/transactions/${id}`);
    return res.body.data.status !== 'pending' ? res.body.data : undefined;
  });
}

describe('readers and locations (spec §2.4, §4.7 rules 1–3)', () => {
  it('lists the mode’s readers with the spec fields', async () => {
    const list = await api.get<{ data: Json[] }>('/v1/terminal/readers');
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const r = ReaderSchema.parse(list.body.data[0]);
    expect(r).toMatchObject({ id: reader.id, name: 'Till 1', status: 'online', model: 'simulated_wisepos_e' });
    expect(r.processor_terminal_id).toMatch(/^tmr_/);
    expect(r.serial_number).toBeTruthy();
    expect((await client(t.url, m.keys.sk_live).get<{ data: Json[] }>('/v1/terminal/readers')).body.data).toEqual([]);
  });

  it('keeps a location’s time zone and business day end, and refuses a zone that is not IANA with the spec’s error', async () => {
    const made = await api.post<{ data: Json }>('/v1/terminal/locations', { display_name: 'Night bar', address: ADDRESS, time_zone: 'America/Los_Angeles', day_ends_at: '04:00' });
    expect(made.status).toBe(201);
    expect(made.body.data).toMatchObject({ time_zone: 'America/Los_Angeles', day_ends_at: '04:00' });
    const bad = await api.post<{ error: Json }>('/v1/terminal/locations', { display_name: 'X', address: ADDRESS, time_zone: 'PST' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ type: 'invalid_request_error', param: 'time_zone' });
    const late = await api.post<{ error: Json }>(`/v1/terminal/locations/${String(made.body.data.id)}`, { day_ends_at: '25:00' });
    expect(late.status).toBe(400);
    expect(late.body.error).toMatchObject({ param: 'day_ends_at' });
    const moved = await api.post<{ data: Json }>(`/v1/terminal/locations/${String(made.body.data.id)}`, { time_zone: 'Europe/Paris' });
    expect(moved.body.data).toMatchObject({ time_zone: 'Europe/Paris', day_ends_at: '04:00' });
  });

  it('needs a location in the key’s mode to register a simulated reader', async () => {
    const fresh = await t.merchant('No location');
    const res = await client(t.url, fresh.keys.sk_test).post<{ error: Json }>('/v1/terminals', { name: 'Till', registration_code: 'simulated-wpe' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'location_required' });
    expect(String(res.body.error.message)).toMatch(/location is required/i);
  });

  it('refuses simulated codes in live mode and registers physical readers by code at a live location', async () => {
    const live = client(t.url, m.keys.sk_live);
    expect((await live.post('/v1/terminal/locations', { display_name: 'Live counter', address: ADDRESS })).status).toBe(201);
    const simulated = await live.post<{ error: Json }>('/v1/terminals', { name: 'Sim', registration_code: 'simulated-wpe' });
    expect(simulated.status).toBe(400);
    expect(simulated.body.error.param).toBe('registration_code');
    const physical = await live.post<{ data: Json }>('/v1/terminals', { name: 'Bar', registration_code: 'purple-cat-banana' });
    expect(physical.status).toBe(201);
    expect(physical.body.data).toMatchObject({ name: 'Bar', is_test: false });
    const deleted = await live.delete<{ data: Json }>(`/v1/terminal/readers/${String(physical.body.data.id)}`);
    expect(deleted.status).toBe(200);
    expect((await live.get<{ data: Json[] }>('/v1/terminal/readers')).body.data).toEqual([]);
  });
});

describe('terminal payments (spec §4.7, §3 terminal rows)', () => {
  it('create-payment answers the spec fields, pending, with a 3 % fee and no fixed part', async () => {
    const res = await api.post<Created>('/v1/terminal/create-payment', { amount: 1000, terminal_id: reader.id, metadata: { order_id: 'T-1' } }, { 'Idempotency-Key': 'tp-1' });
    expect(res.status).toBe(201);
    expect(TerminalPaymentSchema.parse(res.body.data)).toMatchObject({ amount: 1000, currency: 'usd', status: 'pending' });
    expect(Object.keys(res.body.data).sort()).toEqual(['amount', 'client_secret', 'currency', 'id', 'payment_intent_id', 'reference', 'status']);
    expect(res.headers.get('idempotency-key')).toBe('tp-1');
    const again = await api.post<Created>('/v1/terminal/create-payment', { amount: 1000, terminal_id: reader.id, metadata: { order_id: 'T-1' } }, { 'Idempotency-Key': 'tp-1' });
    expect(again.status).toBe(200);
    expect(again.body.data.id).toBe(res.body.data.id);
    const viaBody = await api.post<Created>('/v1/terminal/create-payment', { amount: 1000, idempotency_key: 'tp-2' });
    const viaBodyAgain = await api.post<Created>('/v1/terminal/create-payment', { amount: 1000, idempotency_key: 'tp-2' });
    expect(viaBodyAgain.body.data.id).toBe(viaBody.body.data.id);
    const txn = await api.get<Txn>(`/v1/transactions/${res.body.data.id}`);
    expect(txn.body.data).toMatchObject({ payment_method_type: 'terminal', source: 'terminal', platform_fee_cents: 30, terminal_id: reader.id, metadata: { order_id: 'T-1' } });
    for (const [body, param] of [
      [{ amount: 49 }, 'amount'],
      [{ amount: 500, terminal_id: 'abc' }, 'terminal_id'],
      [{ amount: 500, terminal_id: '00000000-0000-4000-8000-000000000000' }, 'terminal_id'],
      [{ amount: 500, payment_method: 'pm_card_visa' }, 'payment_method'],
    ] as const) {
      const bad = await api.post<{ error: Json }>('/v1/terminal/create-payment', body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error.param).toBe(param);
    }
  });

  it('process-payment takes the tmr_ id and says which id it expects otherwise', async () => {
    const created = await api.post<Created>('/v1/terminal/create-payment', { amount: 800 });
    const byUuid = await api.post<{ error: Json }>('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader.id });
    expect(byUuid.status).toBe(400);
    expect(byUuid.body.error).toMatchObject({ param: 'reader_id' });
    expect(String(byUuid.body.error.message)).toMatch(/tmr_/);
    const unknown = await api.post<{ error: Json }>('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: 'tmr_nope' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'resource_missing', param: 'reader_id' });
    const noPayment = await api.post<{ error: Json }>('/v1/terminal/process-payment', { payment_intent_id: 'pi_nope', reader_id: reader.processor_terminal_id });
    expect(noPayment.status).toBe(404);
    expect(noPayment.body.error.param).toBe('payment_intent_id');
    await api.post(`/v1/transactions/${created.body.data.id}/cancel`, {});
  });

  it('simulate-payment: the payment succeeds with brand, last four, receipt, fee and tip; payment.succeeded carries them', async () => {
    const created = await createAndProcess(4750, { metadata: { order_id: 'A-9' } });
    const tap = await api.post<{ data: Json }>('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id, amount_tip: 500 });
    expect(tap.status).toBe(200);
    expect(tap.body.data).toMatchObject({ reader_id: reader.processor_terminal_id, status: 'succeeded', transaction_id: created.id });
    const txn = await settled(created.id);
    expect(txn).toMatchObject({
      status: 'succeeded', amount: 5250, tip_amount: 500, amount_captured: 5250, card_brand: 'visa', card_last_four: '4242',
      platform_fee_cents: 143, reader_id: reader.processor_terminal_id, terminal_id: reader.id,
    });
    expect(txn.receipt_url).toMatch(new RegExp(`^${t.url}/receipts/[0-9A-Za-z]{32}$`));
    const succeeded = (await eventsOf(t.dataDir, created.id)).find((e) => e.type === 'payment.succeeded');
    expect(succeeded?.data).toMatchObject({ reference: created.reference, amount: 5250, is_test: true, metadata: { order_id: 'A-9' }, card_brand: 'visa', card_last_four: '4242', platform_fee_cents: 143, tip_amount: 500, receipt_url: txn.receipt_url });
    // The receipt needs no key and tells what was paid.
    const page = await fetch(String(txn.receipt_url));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('Counter Café');
    expect(html).toContain('$52.50');
    expect(html).toContain('$5.00');
    expect(html).toContain('4242');
    expect(html).toContain(created.reference);
    // What an EMV receipt must print: the shop's address, entry mode, application and AID, codes.
    for (const text of ['1 Market St', 'San Francisco, CA 94105', 'Contactless', 'VISA CREDIT', 'A0000000031010', 'Auth code', 'TEST MODE']) expect(html).toContain(text);
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect((await fetch(`${t.url}/receipts/${'x'.repeat(32)}`)).status).toBe(404);
    // The same receipt as data, for the agent's printer.
    const receipt = await api.get<{ data: { merchant_name: string; address_lines: string[]; amounts: { key: string; value: string }[]; card: { key: string; value: string }[] } }>(`/v1/transactions/${created.id}/receipt`);
    expect(receipt.status).toBe(200);
    expect(receipt.body.data.merchant_name).toBe('Counter Café');
    expect(receipt.body.data.address_lines[0]).toBe('1 Market St');
    expect(receipt.body.data.amounts.find((l) => l.key === 'total')?.value).toBe('$52.50');
    expect(Object.fromEntries(receipt.body.data.card.map((l) => [l.key, l.value]))).toMatchObject({
      card: 'Visa •••• 4242', entry_mode: 'Contactless', application: 'VISA CREDIT', aid: 'A0000000031010', response_code: '3030', verification: 'No verification required',
    });
    // Refunds may take back the whole final amount, tip included.
    const refund = await api.post<{ data: Json }>(`/v1/transactions/${created.id}/refunds`, {});
    expect(refund.body.data.amount).toBe(5250);
  });

  it('the receipt names the scheme application of the card and how it was read and verified', async () => {
    // A Mastercard debit card, and an amount ending in 03: Stripe's offline-PIN test amount (chip inserted).
    const created = await createAndProcess(2003);
    await api.post('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id, card_number: '5200828282828210' });
    expect((await settled(created.id)).status).toBe('succeeded');
    const receipt = await api.get<{ data: { card: { key: string; value: string }[] } }>(`/v1/transactions/${created.id}/receipt`);
    expect(Object.fromEntries(receipt.body.data.card.map((l) => [l.key, l.value]))).toMatchObject({
      card: 'Mastercard •••• 8210', entry_mode: 'Chip', account_type: 'Checking', application: 'DEBIT MASTERCARD', aid: 'A0000000041010', verification: 'PIN verified',
    });
    // A payment with no receipt (not paid) is a 404 naming it.
    const pending = await api.post<Created>('/v1/terminal/create-payment', { amount: 1200 });
    const none = await api.get<{ error: { code: string } }>(`/v1/transactions/${pending.body.data.id}/receipt`);
    expect(none.status).toBe(404);
    expect(none.body.error.code).toBe('resource_missing');
  });

  it('the receipt of a part of a sale paid in parts names the sale’s order, on its page and as data', async () => {
    const part = await createAndProcess(3000, { metadata: { order: 'ord_7Kq2Vx' } });
    await api.post('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id });
    const txn = await settled(part.id);
    expect(txn.status).toBe('succeeded');
    const html = await (await fetch(String(txn.receipt_url))).text();
    expect(html).toMatch(/<dt>Order<\/dt><dd data-key="order">ord_7Kq2Vx<\/dd>/);
    const receipt = await api.get<{ data: { header: { key: string; value: string }[] } }>(`/v1/transactions/${part.id}/receipt`);
    expect(receipt.body.data.header.map((l) => l.key)).toEqual(['date', 'time', 'reference', 'order']);
    // A payment that is no part of a sale has no order line.
    const whole = await createAndProcess(1200);
    await api.post('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id });
    expect(await (await fetch(String((await settled(whole.id)).receipt_url))).text()).not.toContain('data-key="order"');
  });

  it('declines by test amount and by card number move the payment to failed', async () => {
    const byAmount = await createAndProcess(1005);
    const tap = await api.post<{ data: Json }>('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id });
    expect(tap.body.data).toMatchObject({ status: 'failed', transaction_id: byAmount.id });
    expect(await settled(byAmount.id)).toMatchObject({ status: 'failed', failure_code: 'card_declined', decline_code: 'generic_decline' });
    const byCard = await createAndProcess(2000);
    await api.post('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id, card_number: '4000000000009995' });
    expect(await settled(byCard.id)).toMatchObject({ status: 'failed', failure_code: 'card_declined', decline_code: 'insufficient_funds' });
    expect((await eventsOf(t.dataDir, byCard.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.failed']);
  });

  it('a declined payment goes to the reader again as the same payment, and is paid by the next card', async () => {
    const declined = await createAndProcess(2100);
    await api.post('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id, card_number: '4000000000009995' });
    expect(await settled(declined.id)).toMatchObject({ status: 'failed' });
    const again = await api.post<{ data: Json }>('/v1/terminal/process-payment', { payment_intent_id: declined.payment_intent_id, reader_id: reader.processor_terminal_id });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    const tap = await api.post<{ data: Json }>('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id, card_number: '4242424242424242' });
    expect(tap.body.data).toMatchObject({ transaction_id: declined.id });
    await eventually(async () => ((await api.get<Txn>(`/v1/transactions/${declined.id}`)).body.data.status === 'succeeded' ? true : undefined));
  });

  it('refuses a payment for a reader the processor reports offline before making it, and says so on the reader', async () => {
    const count = async () => (await api.get<{ total_count: number }>('/v1/transactions?size=1')).body.total_count;
    const before = await count();
    await t.stack.simulator?.control.setReaderOnline(reader.processor_terminal_id, false);
    try {
      const refused = await api.post<{ error: Json }>('/v1/terminal/create-payment', { amount: 1200, terminal_id: reader.id });
      expect(refused.status).toBe(409);
      expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', code: 'reader_offline' });
      expect(await count()).toBe(before);
      // Without a reader named, the payment is made; sending it is refused in the same words.
      const loose = await api.post<Created>('/v1/terminal/create-payment', { amount: 1200 });
      const sent = await api.post<{ error: Json }>('/v1/terminal/process-payment', { payment_intent_id: loose.body.data.payment_intent_id, reader_id: reader.processor_terminal_id });
      expect(sent.status).toBe(409);
      expect(sent.body.error).toMatchObject({ code: 'reader_offline' });
      await api.post(`/v1/transactions/${loose.body.data.id}/cancel`, {});
    } finally {
      await t.stack.simulator?.control.setReaderOnline(reader.processor_terminal_id, true);
    }
    const back = await api.post<Created>('/v1/terminal/create-payment', { amount: 1200, terminal_id: reader.id });
    expect(back.status).toBe(201);
    await api.post(`/v1/transactions/${back.body.data.id}/cancel`, {});
  });

  it('simulate-payment is test mode only', async () => {
    const res = await client(t.url, m.keys.sk_live).post<{ error: Json }>('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id });
    expect(res.status).toBe(400);
    expect(res.body.error.type).toBe('invalid_request_error');
  });

  it('cancel resets the reader first (reader_reset true), and null when no reader was attributed', async () => {
    const created = await createAndProcess(1500);
    const cancel = await api.post<{ data: Json; reader_reset: boolean | null }>(`/v1/transactions/${created.id}/cancel`, {});
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ reader_reset: true, data: { status: 'canceled' } });
    const sdkReader = await simulatorSdk(t).terminal.readers.retrieve(reader.processor_terminal_id);
    expect('action' in sdkReader ? sdkReader.action : null).toBeNull();
    const unattributed = await api.post<Created>('/v1/terminal/create-payment', { amount: 600 });
    const plain = await api.post<{ reader_reset: boolean | null }>(`/v1/transactions/${unattributed.body.data.id}/cancel`, {});
    expect(plain.body.reader_reset).toBeNull();
    expect((await eventsOf(t.dataDir, created.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.canceled']);
  });

  it('cancel with the reader unreachable: canceled, reader_reset false and a warning', async () => {
    const created = await createAndProcess(1600);
    await t.stack.simulator?.control.setReaderOnline(reader.processor_terminal_id, false);
    try {
      const cancel = await api.post<{ data: Json; reader_reset: boolean | null; warning: string }>(`/v1/transactions/${created.id}/cancel`, {});
      expect(cancel.status).toBe(200);
      expect(cancel.body.reader_reset).toBe(false);
      expect(cancel.body.warning).toMatch(/could not be reset/);
      expect(cancel.body.data.status).toBe('canceled');
    } finally {
      await t.stack.simulator?.control.setReaderOnline(reader.processor_terminal_id, true);
      await api.post('/v1/terminal/cancel-action', { reader_id: reader.processor_terminal_id }).catch(() => undefined);
    }
  });

  it('409 authorization_in_progress for cancel and cancel-action while a tapped card authorises; the payment then succeeds', async () => {
    await t.stack.simulator?.control.setAuthorizationDelay(1_500);
    try {
      const created = await createAndProcess(2500);
      // The customer taps: straight to the processor, as the reader would.
      await simulatorSdk(t).testHelpers.terminal.readers.presentPaymentMethod(reader.processor_terminal_id, { type: 'card_present' });
      const cancel = await api.post<{ error: Json }>(`/v1/transactions/${created.id}/cancel`, {});
      expect(cancel.status).toBe(409);
      expect(cancel.body.error.code).toBe('authorization_in_progress');
      const clear = await api.post<{ error: Json }>('/v1/terminal/cancel-action', { reader_id: reader.processor_terminal_id });
      expect(clear.status).toBe(409);
      expect(clear.body.error.code).toBe('authorization_in_progress');
      expect((await settled(created.id)).status).toBe('succeeded');
      const late = await api.post<{ error: Json }>(`/v1/transactions/${created.id}/cancel`, {});
      expect(late.status).toBe(409);
      expect(late.body.error.code).toBe('already_captured');
    } finally {
      await t.stack.simulator?.control.setAuthorizationDelay(150);
    }
  });

  it('cancel-action clears the reader only: the payment stays pending and can be processed again', async () => {
    const created = await createAndProcess(3000);
    const clear = await api.post<{ data: Json }>('/v1/terminal/cancel-action', { reader_id: reader.processor_terminal_id });
    expect(clear.status).toBe(200);
    expect(clear.body.data).toEqual({ reader_id: reader.processor_terminal_id, status: 'idle', canceled_payment_intent_id: created.payment_intent_id });
    expect((await api.get<Txn>(`/v1/transactions/${created.id}`)).body.data.status).toBe('pending');
    await api.post('/v1/terminal/process-payment', { payment_intent_id: created.payment_intent_id, reader_id: reader.processor_terminal_id });
    await api.post('/v1/terminal/simulate-payment', { reader_id: reader.processor_terminal_id });
    expect((await settled(created.id)).status).toBe('succeeded');
  });

  it('a customer pressing cancel on the reader changes nothing and fires nothing', async () => {
    const created = await createAndProcess(3300);
    await t.stack.simulator?.control.customerCancel(reader.processor_terminal_id);
    // Give the processor's events time to arrive and be (not) acted on.
    await t.server.reconciler.runOnce();
    await new Promise((r) => setTimeout(r, 300));
    const txn = await api.get<Txn>(`/v1/transactions/${created.id}`);
    expect(txn.body.data.status).toBe('pending');
    expect((await eventsOf(t.dataDir, created.id)).map((e) => e.type)).toEqual(['payment.created']);
    await api.post(`/v1/transactions/${created.id}/cancel`, {});
  });

  it('the sweep cancels stale pending terminal payments, resets the reader and emits payment.canceled', async () => {
    // Its own server, with a one-second stale age that would disturb the other tests.
    const s = await startTestServer({ reconcileIntervalMs: 100, terminalStaleMs: 1_000 });
    try {
      const shop = client(s.url, (await s.merchant('Sweep')).keys.sk_test);
      await shop.post('/v1/terminal/locations', { display_name: 'Counter', address: ADDRESS });
      const till = (await shop.post<{ data: { processor_terminal_id: string } }>('/v1/terminals', { name: 'Till', registration_code: 'simulated-wpe' })).body.data;
      const created = (await shop.post<Created>('/v1/terminal/create-payment', { amount: 3400 })).body.data;
      await shop.post('/v1/terminal/process-payment', { payment_intent_id: created.payment_intent_id, reader_id: till.processor_terminal_id });
      const txn = await eventually(async () => {
        const res = await shop.get<Txn>(`/v1/transactions/${created.id}`);
        return res.body.data.status === 'canceled' ? res.body.data : undefined;
      }, 10_000);
      expect(txn.cancellation_reason).toBe('abandoned');
      expect((await eventsOf(s.dataDir, created.id)).map((e) => e.type)).toEqual(['payment.created', 'payment.canceled']);
      const sdkReader = (await simulatorSdk(s).terminal.readers.retrieve(till.processor_terminal_id)) as Stripe.Terminal.Reader;
      expect(sdkReader.action).toBeNull();
    } finally {
      await s.stop();
    }
  });
});
