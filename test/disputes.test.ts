import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { DisputeListSchema, DisputeSchema } from '../shared/contract/disputes.js';
import { client, type Json } from './helpers/api.js';
import { eventsOf } from './helpers/payments.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

/**
 * Disputes end to end: Stripe's dispute test cards paid through the real simulator, its
 * `charge.dispute.*` events delivered to the server, and the `/v1/disputes` API over HTTP.
 */

let t: TestServer;
let m: CreatedMerchant;
let api: ReturnType<typeof client>;

/** Dispute decisions and openings a tenth of a second after their cause: the tests wait on events, not clocks. */
const SIM_DELAY_MS = 100;
/** A dispute and its events come by webhook from the simulator: well inside a second here. */
const WAIT_MS = 10_000;

beforeAll(async () => {
  t = await startTestServer({ reconcileIntervalMs: 200 }, { simulator: { disputeDelayMs: SIM_DELAY_MS } });
  m = await t.merchant('Dispute Shop');
  api = client(t.url, m.keys.sk_test);
});
afterAll(() => t.stop());

type Txn = { id: string; reference: string; status: string; disputed_at: string | null; dispute_id: string | null; dispute_status: string | null };
type Dispute = Json & { id: string; reference: string; status: string; transaction_id: string; closed_at: string | null };

async function pay(paymentMethod: string, key = m.keys.sk_test): Promise<Txn> {
  const res = await client(t.url, key).post<{ data: Txn }>('/v1/transactions', { amount: 2000, payment_method: paymentMethod, confirm: true, metadata: { order: 'D-1' } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.data.status).toBe('succeeded');
  return res.body.data;
}

async function disputeOf(txn: Txn): Promise<Dispute> {
  return eventually(async () => (await api.get<{ data: Dispute[] }>(`/v1/disputes?transaction_id=${txn.id}`)).body.data[0], WAIT_MS);
}

async function eventTypes(id: string, count: number): Promise<string[]> {
  return eventually(async () => {
    const types = (await eventsOf(t.dataDir, id)).map((e) => e.type);
    return types.length >= count ? types : undefined;
  }, WAIT_MS);
}

describe('disputes opened by the processor', () => {
  it.each([
    ['pm_card_createDispute', 'fraudulent', 'needs_response', ['dispute.created', 'dispute.funds_withdrawn']],
    ['pm_card_createDisputeProductNotReceived', 'product_not_received', 'needs_response', ['dispute.created', 'dispute.funds_withdrawn']],
    ['pm_card_createDisputeInquiry', 'fraudulent', 'warning_needs_response', ['dispute.created']],
  ])('%s opens its dispute with its events in order', async (card, reason, status, events) => {
    const txn = await pay(card);
    const dispute = await disputeOf(txn);
    expect(DisputeSchema.parse(dispute)).toBeTruthy();
    expect(dispute).toMatchObject({ transaction_id: txn.id, amount: 2000, currency: 'usd', reason, status, is_test: true, metadata: { order: 'D-1' }, closed_at: null });
    expect(dispute.reference).toMatch(/^dp_/);
    expect(await eventTypes(dispute.id, events.length)).toEqual(events);
    for (const e of await eventsOf(t.dataDir, dispute.id)) expect(e.data).toMatchObject({ id: dispute.id, is_test: true, metadata: { order: 'D-1' } });
    const shown = (await api.get<{ data: Txn }>(`/v1/transactions/${txn.reference}`)).body.data;
    expect(shown).toMatchObject({ status: 'succeeded', dispute_id: dispute.id, dispute_status: status });
    expect(shown.disputed_at).not.toBeNull();
  });

  it('closes won on winning_evidence, and funds come back', async () => {
    const dispute = await disputeOf(await pay('pm_card_createDispute'));
    await eventTypes(dispute.id, 2);
    const staged = await api.post<{ data: Dispute }>(`/v1/disputes/${dispute.reference}/evidence`, { product_description: 'Two espressos\nto take away' });
    expect(staged.status, JSON.stringify(staged.body)).toBe(200);
    expect(staged.body.data).toMatchObject({ status: 'needs_response', evidence: { product_description: 'Two espressos\nto take away' } });
    const submitted = await api.post<{ data: Dispute }>(`/v1/disputes/${dispute.id}/evidence`, { uncategorized_text: 'winning_evidence', submit: true });
    expect(submitted.status).toBe(200);
    const won = await eventually(async () => {
      const d = (await api.get<{ data: Dispute }>(`/v1/disputes/${dispute.id}`)).body.data;
      return d.status === 'won' ? d : undefined;
    }, WAIT_MS);
    expect(won.closed_at).not.toBeNull();
    const types = await eventTypes(dispute.id, 6);
    expect(types.slice(0, 2)).toEqual(['dispute.created', 'dispute.funds_withdrawn']);
    expect(types.filter((x) => x === 'dispute.closed')).toHaveLength(1);
    expect(types.indexOf('dispute.closed')).toBeLessThan(types.indexOf('dispute.funds_reinstated'));
    const closed = (await eventsOf(t.dataDir, dispute.id)).find((e) => e.type === 'dispute.closed');
    expect(closed?.data).toMatchObject({ status: 'won', is_test: true });
  });

  it('closes lost on losing_evidence, and when accepted; accepting again answers the same', async () => {
    const losing = await disputeOf(await pay('pm_card_createDispute'));
    await api.post(`/v1/disputes/${losing.id}/evidence`, { uncategorized_text: 'losing_evidence', submit: true });
    await eventually(async () => ((await api.get<{ data: Dispute }>(`/v1/disputes/${losing.id}`)).body.data.status === 'lost' ? true : undefined), WAIT_MS);
    expect((await eventsOf(t.dataDir, losing.id)).find((e) => e.type === 'dispute.closed')?.data).toMatchObject({ status: 'lost' });

    const accepted = await disputeOf(await pay('pm_card_createDispute'));
    const first = await api.post<{ data: Dispute }>(`/v1/disputes/${accepted.id}/close`);
    expect(first.status).toBe(200);
    expect(first.body.data.status).toBe('lost');
    const again = await api.post<{ data: Dispute }>(`/v1/disputes/${accepted.reference}/close`);
    expect(again.body.data).toMatchObject({ id: accepted.id, status: 'lost' });
    const late = await api.post<{ error: Json }>(`/v1/disputes/${accepted.id}/evidence`, { uncategorized_text: 'too late' });
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ type: 'invalid_request_error', code: 'dispute_closed' });
  });

  it('refuses to refund a disputed payment', async () => {
    const txn = await pay('pm_card_createDispute');
    await disputeOf(txn);
    const refused = await api.post<{ error: Json }>(`/v1/transactions/${txn.id}/refunds`, { amount: 500 });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', code: 'transaction_disputed' });
  });

  it('answers bad input with 4xx and the error body', async () => {
    const dispute = await disputeOf(await pay('pm_card_createDispute'));
    const cases: [string, unknown, string, string][] = [
      [`/v1/disputes/${dispute.id}/evidence`, { nonsense: 'x' }, 'parameter_unknown', 'nonsense'],
      [`/v1/disputes/${dispute.id}/evidence`, { customer_communication: 'not a file' }, 'parameter_invalid', 'customer_communication'],
      [`/v1/disputes/${dispute.id}/evidence`, { submit: 'yes' }, 'parameter_invalid', 'submit'],
      [`/v1/disputes/${dispute.id}/evidence`, { customer_name: 'A\nB' }, 'parameter_invalid', 'customer_name'],
      [`/v1/disputes/${dispute.id}/close`, { now: true }, 'parameter_unknown', 'now'],
    ];
    for (const [path, body, code, param] of cases) {
      const res = await api.post<{ error: Json }>(path, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code, param });
    }
    expect((await api.get<{ error: Json }>('/v1/disputes?status=angry')).status).toBe(400);
    for (const id of ['dp_nothing', '00000000-0000-4000-8000-000000000000', '%ff']) {
      const res = await api.get<{ error: Json }>(`/v1/disputes/${id}`);
      expect(res.status).toBe(404);
      expect(res.body.error.code).toBe('resource_missing');
    }
  });

  it('lists in the envelope, filtered, and only to the merchant and mode that own them', async () => {
    const txn = await pay('pm_card_createDispute');
    const dispute = await disputeOf(txn);
    const list = await api.get('/v1/disputes?size=2');
    expect(DisputeListSchema.parse(list.body)).toMatchObject({ page: 1, size: 2 });
    const byRef = await api.get<{ data: Dispute[] }>(`/v1/disputes?transaction_id=${txn.reference}`);
    expect(byRef.body.data.map((d) => d.id)).toEqual([dispute.id]);
    const open = await api.get<{ data: Dispute[] }>('/v1/disputes?status=needs_response&size=100');
    expect(open.body.data.every((d) => d.status === 'needs_response')).toBe(true);

    const other = client(t.url, (await t.merchant('Other Shop')).keys.sk_test);
    expect((await other.get<{ totalCount: number }>('/v1/disputes')).body.totalCount).toBe(0);
    expect((await other.get(`/v1/disputes/${dispute.id}`)).status).toBe(404);
    expect((await other.post(`/v1/disputes/${dispute.id}/close`)).status).toBe(404);
    const live = client(t.url, m.keys.sk_live);
    expect((await live.get<{ totalCount: number }>('/v1/disputes')).body.totalCount).toBe(0);
    expect((await live.get(`/v1/disputes/${dispute.reference}`)).status).toBe(404);
  });
});
