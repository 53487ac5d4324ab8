import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../simulator/index.js';
import { client, type ApiResponse, type Json } from './helpers/api.js';
import { openTestDb, type TestDb } from './helpers/db.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * Every /v1 route that calls the processor, while the processor refuses every request with 429
 * (the simulator's throttle, `POST /_sim/rate_limits/throttle`): the caller gets the documented
 * retryable error (502 `processor_unavailable`, docs/api-choices.md) within a bounded time, never a
 * 500; nothing half-made is left behind; and once the processor answers again the same request
 * (with the same Idempotency-Key where it takes one) succeeds.
 */

/**
 * One processor call may take this long, its 429 retries included (`--processor-timeout-ms`). Short,
 * so the table runs in well under a minute; the bound below allows a route a few such calls.
 */
const PROCESSOR_TIMEOUT_MS = 1_500;
const ANSWER_WITHIN_MS = 3 * PROCESSOR_TIMEOUT_MS + 1_000;

interface Fixtures {
  merchantId: string;
  readerId: string;
  /** The reader's processor_terminal_id (tmr_…): what the terminal actions take. */
  readerTmr: string;
  locationId: string;
  customerId: string;
  capturable: string;
  cancelable: string;
  paid: string;
  disputeId: string;
  terminalPayment: string;
  sessionId: string;
  linkId: string;
}

interface Row {
  name: string;
  /**
   * The rows of one wave fail together in one throttled window and are retried together: a row
   * comes in a wave after the rows it needs (the payment sent to the reader before the tap, the tap
   * before the next payment on that reader, the reader's delete last), and apart from any other row
   * counting the same table or using the same object.
   */
  wave: number;
  method: 'GET' | 'POST' | 'DELETE';
  path: (f: Fixtures) => string;
  body?: (f: Fixtures) => Json;
  /** Sent with an Idempotency-Key, and retried with the same one. */
  idempotent?: boolean;
  /** The status once the processor answers again. */
  ok: number;
  /** Rows that must not change while the call fails (`?` is the merchant's id)... */
  rows?: string;
  /** ...and how many the successful retry adds (a delete: -1). */
  adds?: number;
  /**
   * The row is written before the processor call, at the request's first recovery point, and the
   * retry (or the recovery pass) resumes it (docs/payments.md, "Processor failures"): the failure
   * may leave it, the retry must not add another.
   */
  staged?: boolean;
  /** Run with the processor answering, before the throttled call. */
  setup?: (f: Fixtures) => Promise<void>;
  /** What the successful retry leaves for the rows after it. */
  after?: (f: Fixtures, res: ApiResponse<{ data: Json }>) => void;
}

const address = { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'US' };

let t: TestServer;
let sim: RunningSimulator;
let db: TestDb;
let api: ReturnType<typeof client>;
const f = {} as Fixtures;

async function created(res: Promise<ApiResponse<{ data: Json }>>): Promise<Json> {
  const r = await res;
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
  return r.body.data;
}

const ROWS: Row[] = [
  { name: 'POST /v1/transactions', wave: 1, method: 'POST', path: () => '/v1/transactions', body: () => ({ amount: 1234, payment_method: 'pm_card_visa', confirm: true }), idempotent: true, ok: 201, rows: 'select count(*) from transactions where merchant_id = ?', adds: 1, staged: true },
  { name: 'POST /v1/payment-intents', wave: 4, method: 'POST', path: () => '/v1/payment-intents', body: () => ({ amount: 1235 }), idempotent: true, ok: 201 },
  { name: 'POST /v1/transactions/:id/capture', wave: 1, method: 'POST', path: (x) => `/v1/transactions/${x.capturable}/capture`, ok: 200 },
  { name: 'POST /v1/transactions/:id/cancel', wave: 1, method: 'POST', path: (x) => `/v1/transactions/${x.cancelable}/cancel`, ok: 200 },
  { name: 'POST /v1/transactions/:id/refunds', wave: 1, method: 'POST', path: (x) => `/v1/transactions/${x.paid}/refunds`, body: () => ({ amount: 100 }), idempotent: true, ok: 201, rows: 'select count(*) from refunds where merchant_id = ?', adds: 1, staged: true },
  { name: 'POST /v1/terminal/locations', wave: 1, method: 'POST', path: () => '/v1/terminal/locations', body: () => ({ display_name: 'Back room', address }), ok: 201, adds: 1, rows: 'select count(*) from terminal_locations where merchant_id = ?' },
  { name: 'POST /v1/terminal/locations/:id', wave: 1, method: 'POST', path: (x) => `/v1/terminal/locations/${x.locationId}`, body: () => ({ tipping: { percentages: [10, 15, 20] } }), ok: 200 },
  { name: 'POST /v1/terminals', wave: 1, method: 'POST', path: () => '/v1/terminals', body: () => ({ name: 'Till 2', registration_code: 'simulated-wpe' }), ok: 201, adds: 1, rows: 'select count(*) from terminal_readers where merchant_id = ?' },
  {
    name: 'POST /v1/terminal/create-payment',
    wave: 2,
    method: 'POST',
    path: () => '/v1/terminal/create-payment',
    body: () => ({ amount: 2500 }),
    idempotent: true,
    ok: 201,
    rows: 'select count(*) from transactions where merchant_id = ?',
    adds: 1,
    staged: true,
    after: (x, res) => {
      x.terminalPayment = String(res.body.data.payment_intent_id);
    },
  },
  { name: 'POST /v1/terminal/process-payment', wave: 3, method: 'POST', path: () => '/v1/terminal/process-payment', body: (x) => ({ payment_intent_id: x.terminalPayment, reader_id: x.readerTmr }), ok: 200 },
  { name: 'POST /v1/terminal/simulate-payment', wave: 4, method: 'POST', path: () => '/v1/terminal/simulate-payment', body: (x) => ({ reader_id: x.readerTmr }), ok: 200 },
  {
    name: 'POST /v1/terminal/cancel-action',
    wave: 5,
    method: 'POST',
    path: () => '/v1/terminal/cancel-action',
    body: (x) => ({ reader_id: x.readerTmr }),
    ok: 200,
    setup: async (x) => {
      const payment = await created(api.post('/v1/terminal/create-payment', { amount: 700 }));
      await created(api.post('/v1/terminal/process-payment', { payment_intent_id: payment.payment_intent_id, reader_id: x.readerTmr }));
    },
  },
  { name: 'DELETE /v1/terminal/readers/:id', wave: 6, method: 'DELETE', path: (x) => `/v1/terminal/readers/${x.readerId}`, ok: 200, rows: 'select count(*) from terminal_readers where merchant_id = ?', adds: -1 },
  { name: 'POST /v1/checkout/sessions', wave: 3, method: 'POST', path: () => '/v1/checkout/sessions', body: () => ({ amount: 1500 }), idempotent: true, ok: 201, adds: 1, rows: 'select count(*) from checkout_sessions where merchant_id = ?' },
  { name: 'POST /v1/customers', wave: 1, method: 'POST', path: () => '/v1/customers', body: () => ({ name: 'Grace' }), ok: 201, adds: 1, rows: 'select count(*) from customers where merchant_id = ?' },
  { name: 'POST /v1/customers/:id', wave: 1, method: 'POST', path: (x) => `/v1/customers/${x.customerId}`, body: () => ({ name: 'Ada L.' }), ok: 200 },
  { name: 'DELETE /v1/customers/:id', wave: 2, method: 'DELETE', path: (x) => `/v1/customers/${x.customerId}`, ok: 200, rows: 'select count(*) from customers where merchant_id = ? and deleted_at is null', adds: -1 },
  { name: 'POST /v1/disputes/:id/evidence', wave: 1, method: 'POST', path: (x) => `/v1/disputes/${x.disputeId}/evidence`, body: () => ({ uncategorized_text: 'receipt attached' }), ok: 200 },
  { name: 'POST /v1/disputes/:id/close', wave: 2, method: 'POST', path: (x) => `/v1/disputes/${x.disputeId}/close`, ok: 200 },
  { name: 'GET /v1/balance', wave: 1, method: 'GET', path: () => '/v1/balance', ok: 200 },
  { name: 'POST /v1/merchant/bank-account', wave: 1, method: 'POST', path: () => '/v1/merchant/bank-account', body: () => ({ account_number: '000123456789', routing_number: '110000000' }), ok: 200 },
  { name: 'GET /v1/merchant/bank-account', wave: 2, method: 'GET', path: () => '/v1/merchant/bank-account', ok: 200 },
  { name: 'POST /v1/payouts', wave: 2, method: 'POST', path: () => '/v1/payouts', body: () => ({ amount: 500 }), idempotent: true, ok: 201, rows: 'select count(*) from payouts where merchant_id = ?', adds: 1,
    setup: async () => {
      await created(api.post('/v1/transactions', { amount: 2000, confirm: true, payment_method: 'pm_card_bypassPending' }));
    },
  },
  { name: 'POST /v1/merchant/onboarding-link', wave: 1, method: 'POST', path: () => '/v1/merchant/onboarding-link', ok: 201 },
];

beforeAll(async () => {
  t = await startTestServer({ processorTimeoutMs: PROCESSOR_TIMEOUT_MS });
  sim = t.stack.simulator!;
  db = await openTestDb(t.dataDir);
  const m = await t.merchant('Throttled Shop');
  f.merchantId = m.merchant.id;
  api = client(t.url, m.keys.sk_test);
  const location = await created(api.post('/v1/terminal/locations', { display_name: 'Counter', address }));
  f.locationId = String(location.id);
  const reader = await created(api.post('/v1/terminals', { name: 'Till', registration_code: 'simulated-wpe' }));
  f.readerId = String(reader.id);
  f.readerTmr = String(reader.processor_terminal_id);
  f.customerId = String((await created(api.post('/v1/customers', { name: 'Ada' }))).id);
  f.capturable = String((await created(api.post('/v1/transactions', { amount: 1000, confirm: true, payment_method: 'pm_card_visa', capture_method: 'manual' }))).id);
  f.cancelable = String((await created(api.post('/v1/transactions', { amount: 1000, confirm: true, payment_method: 'pm_card_visa', capture_method: 'manual' }))).id);
  f.paid = String((await created(api.post('/v1/transactions', { amount: 5000, confirm: true, payment_method: 'pm_card_bypassPending' }))).id);
  await created(api.post('/v1/transactions', { amount: 1000, confirm: true, payment_method: 'pm_card_createDispute' }));
  f.disputeId = await eventually(async () => {
    await sim.control.advanceTimers();
    const list = await api.get<{ data: Json[] }>('/v1/disputes');
    return list.body.data[0] ? String(list.body.data[0].id) : undefined;
  }, 10_000);
  // What the fixtures set off at the processor (the dispute, an automatic payout of the funds the
  // timers made available) has reached the server before the table counts rows.
  await sim.control.webhooksIdle();
}, 30_000);

afterAll(async () => {
  await sim?.control.throttle([]);
  await db?.close();
  await t?.stop();
});

function send(row: Row, key: string | undefined): Promise<ApiResponse<{ data: Json; error?: Json }>> {
  return api.raw(row.method, row.path(f), {
    ...(row.method === 'POST' ? { body: row.body?.(f) ?? {} } : {}),
    ...(key ? { headers: { 'Idempotency-Key': key } } : {}),
  });
}

describe('every processor-calling route while the processor answers 429 to everything', () => {
  for (const wave of [...new Set(ROWS.map((row) => row.wave))].sort((a, b) => a - b)) {
    const rows = ROWS.filter((row) => row.wave === wave);
    it(rows.map((row) => row.name).join(', '), async () => {
      for (const row of rows) await row.setup?.(f);
      const key = (row: Row) => (row.idempotent ? `throttled-${row.name}` : undefined);
      const rowsBefore = await Promise.all(rows.map((row) => (row.rows ? db.count(row.rows, f.merchantId) : 0)));
      await sim.control.throttle(['*']);
      let failed: { res: ApiResponse<{ data: Json; error?: Json }>; elapsed: number }[];
      try {
        failed = await Promise.all(
          rows.map(async (row) => {
            const started = performance.now();
            const res = await send(row, key(row));
            return { res, elapsed: performance.now() - started };
          }),
        );
      } finally {
        await sim.control.throttle([]);
      }
      for (const [i, row] of rows.entries()) {
        const { res, elapsed } = failed[i]!;
        expect(res.status, `${row.name}: ${JSON.stringify(res.body)}`).toBe(502);
        expect(res.body.error, row.name).toMatchObject({ type: 'api_error', code: 'processor_unavailable' });
        expect(typeof res.body.error?.message, row.name).toBe('string');
        expect(elapsed, row.name).toBeLessThan(ANSWER_WITHIN_MS);
        if (row.rows && !row.staged) expect(await db.count(row.rows, f.merchantId), row.name).toBe(rowsBefore[i]);
      }

      const retried = await Promise.all(rows.map((row) => send(row, key(row))));
      for (const [i, row] of rows.entries()) {
        expect(retried[i]!.status, `${row.name}: ${JSON.stringify(retried[i]!.body)}`).toBe(row.ok);
        if (row.rows) expect(await db.count(row.rows, f.merchantId), row.name).toBe(rowsBefore[i]! + (row.adds ?? 0));
        row.after?.(f, retried[i]!);
      }
    });
  }
});

describe('a burst while the processor answers 429 to everything', () => {
  it('answers every call once its own timeout is spent, even those the rate budget never let out', async () => {
    // More calls than the budget lets out in a timeout (16 reads per 1.25 s): most wait for it the
    // whole time, and must then be answered, not sent back to the queue by the SDK's retries.
    await sim.control.throttle(['*']);
    const started = performance.now();
    let answers: ApiResponse<{ error?: Json }>[];
    try {
      answers = await Promise.all(Array.from({ length: 40 }, () => api.get<{ error?: Json }>('/v1/balance')));
    } finally {
      await sim.control.throttle([]);
    }
    const elapsed = performance.now() - started;
    expect(answers.map((a) => a.status)).toEqual(answers.map(() => 502));
    expect(answers.every((a) => a.body.error?.code === 'processor_unavailable')).toBe(true);
    // Bounded by the calls' own timeout, with room for a loaded machine; retried by the SDK, the
    // waiting calls took ~20 s.
    expect(elapsed).toBeLessThan(ANSWER_WITHIN_MS);
    expect((await api.get('/v1/balance')).status).toBe(200);
  });
});

describe('a merchant whose connected account the processor has not made yet', () => {
  it('GET /v1/merchant answers 502, stores no account, and works once the processor is back', async () => {
    const fresh = await t.merchant('Fresh Shop');
    const freshApi = client(t.url, fresh.keys.sk_test);
    const accounts = 'select count(*) from processor_accounts where merchant_id = ?';
    // The server makes accounts on start and on first need; this merchant came after the start.
    expect(await db.count(accounts, fresh.merchant.id)).toBe(0);
    await sim.control.throttle(['*']);
    let failed: ApiResponse<{ error?: Json }>;
    try {
      failed = await freshApi.get<{ error?: Json }>('/v1/merchant');
    } finally {
      await sim.control.throttle([]);
    }
    expect(failed.status, JSON.stringify(failed.body)).toBe(502);
    expect(failed.body.error).toMatchObject({ type: 'api_error', code: 'processor_unavailable' });
    expect(await db.count(accounts, fresh.merchant.id)).toBe(0);
    const merchant = await freshApi.get<{ data: Json }>('/v1/merchant');
    expect(merchant.status, JSON.stringify(merchant.body)).toBe(200);
    expect(merchant.body.data.charges_enabled).toBe(true);
    expect(await db.count(accounts, fresh.merchant.id)).toBe(1);
  });
});
