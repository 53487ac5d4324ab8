import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localDate } from '../cli/report.js';
import { json, runCli } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';

// @backend-once what the CLI prints, sends and exits with; the disputes, payouts and customers behind it are disputes', payouts' and customers' tests, on both backends.

/**
 * `pos disputes`, `pos balance`, `pos payouts`, `pos customers` and their `pos trigger` events, as
 * the real executable runs them against a server on the real simulator: `--json` prints the API's
 * own answer, and each trigger is made of real test-mode activity.
 */

let t: TestServer;
let env: Record<string, string>;

beforeAll(async () => {
  t = await startTestServer({ reconcileIntervalMs: 200 }, { simulator: { disputeDelayMs: 100 } });
  const m = await t.merchant('CLI Money Shop');
  env = { POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_test };
});
afterAll(() => t.stop());

type Obj = Record<string, unknown> & { id: string; reference: string; status: string };

async function run<T = { data: Obj }>(args: string[]): Promise<T> {
  const r = await runCli(args, { env });
  expect(r.status, `pos ${args.join(' ')}: ${r.stderr}`).toBe(0);
  return json<T>(r);
}

describe('pos customers', () => {
  it('creates, gets, updates, lists and deletes, printing the API JSON', async () => {
    const created = (await run(['customers', 'create', '--name', 'Ada', '--email', 'ada@example.com', '--metadata', 'tier=gold', '--json'])).data;
    expect(created).toMatchObject({ object: 'customer', name: 'Ada', email: 'ada@example.com', metadata: { tier: 'gold' }, is_test: true });
    expect((await run(['customers', 'get', created.reference, '--json'])).data.id).toBe(created.id);
    const updated = (await run(['customers', 'update', created.id, '--phone', '+1 555 0100', '--clear', 'email', '--metadata', 'tier=', '--json'])).data;
    expect(updated).toMatchObject({ name: 'Ada', email: null, phone: '+1 555 0100', metadata: {} });
    const list = await run<{ data: Obj[]; totalCount: number }>(['customers', 'list', '--json']);
    expect(list.data.map((c) => c.id)).toContain(created.id);
    expect((await run(['customers', 'delete', created.id, '--yes', '--json'])).data).toEqual({ id: created.id, object: 'customer', deleted: true });
    const gone = await runCli(['customers', 'get', created.id], { env });
    expect(gone.status).toBe(1);
    expect(gone.stderr).toMatch(/resource_missing/);
    expect((await runCli(['customers', 'update', created.id], { env })).status).toBe(2);
  });

  it('pos trigger customer.created', async () => {
    const customer = (await run(['trigger', 'customer.created', '--json'])).data;
    expect(customer).toMatchObject({ object: 'customer', metadata: { pos_trigger: 'true' } });
  });
});

describe('pos trigger with overrides', () => {
  it('--override, --add and --remove change the objects it creates, and the event carries them', async () => {
    const paid = (await run(['trigger', 'payment.succeeded', '--override', 'metadata.order=42', '--override', 'payment:amount=5000', '--remove', 'description', '--add', 'receipt_email=ada@example.com', '--json'])).data;
    expect(paid).toMatchObject({ amount: 5000, status: 'succeeded', description: null, receipt_email: 'ada@example.com', metadata: { order: '42', pos_trigger: 'true' } });
    const events = await run<{ data: { type: string; data: { id: string; metadata?: Record<string, string> } }[] }>(['events', 'list', '--type', 'payment.succeeded', '--limit', '100', '--json']);
    expect(events.data.find((e) => e.data.id === paid.id)?.data.metadata).toMatchObject({ order: '42' });
    const customer = (await run(['trigger', 'customer.created', '--override', 'customer:name=Ada', '--override', 'payment:amount=1', '--json'])).data;
    expect(customer).toMatchObject({ name: 'Ada' });
  });

  it('terminal triggers play the customer at a simulated reader: a tap, a tip, a cancel', async () => {
    const tipped = (await run(['trigger', 'terminal.payment.tipped', '--override', 'metadata.till=3', '--json'])).data;
    expect(tipped).toMatchObject({ status: 'succeeded', amount: 2200, tip_amount: 200, metadata: { till: '3', pos_trigger: 'true' }, reader_id: expect.any(String) });
    const paid = (await run(['trigger', 'terminal.payment.succeeded', '--json'])).data;
    expect(paid).toMatchObject({ status: 'succeeded', amount: 2000, reader_id: tipped.reader_id });
    const canceled = (await run(['trigger', 'terminal.payment.customer_canceled', '--json'])).data;
    expect(canceled).toMatchObject({ status: 'canceled', reader_id: tipped.reader_id });
    const events = await run<{ data: { type: string; data: { id: string } }[] }>(['events', 'list', '--limit', '100', '--json']);
    expect(events.data.filter((e) => e.data.id === canceled.id).map((e) => e.type)).toContain('payment.canceled');
  });

  it('says what is wrong with an override (exit 2) and lists what it can trigger', async () => {
    const unknown = await runCli(['trigger', 'payment.created', '--override', 'charge:amount=5'], { env });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/"charge" is not an object a trigger creates \(payment, payout, customer\)/);
    const taken = await runCli(['trigger', 'payment.created', '--add', 'amount=5'], { env });
    expect(taken.status).toBe(2);
    expect(taken.stderr).toMatch(/amount is already set; --override replaces it/);
    const list = await runCli(['trigger', '--list'], { env });
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/payment\.refunded +pays with pm_card_visa, then refunds it in full/);
    expect((await runCli(['trigger'], { env })).status).toBe(2);
  });
});

describe('pos disputes', () => {
  it('pos trigger dispute.created, then list, get, evidence and accept', async () => {
    const opened = (await run(['trigger', 'dispute.created', '--json'])).data;
    expect(opened).toMatchObject({ object: 'dispute', status: 'needs_response', reason: 'fraudulent', is_test: true });
    const list = await run<{ data: Obj[] }>(['disputes', 'list', '--transaction', String(opened.transaction_id), '--json']);
    expect(list.data.map((d) => d.id)).toEqual([opened.id]);
    expect((await run(['disputes', 'get', opened.reference, '--json'])).data.id).toBe(opened.id);
    const staged = (await run(['disputes', 'evidence', opened.id, '--product-description', 'A flat white', '--field', 'customer_name=Ada', '--json'])).data;
    expect(staged).toMatchObject({ status: 'needs_response', evidence: { product_description: 'A flat white', customer_name: 'Ada' } });
    const table = await runCli(['disputes', 'list'], { env });
    expect(table.stdout).toMatch(new RegExp(`${opened.reference}\\s+needs_response\\s+\\$20\\.00\\s+fraudulent`));
    expect((await run(['disputes', 'accept', opened.id, '--json'])).data.status).toBe('lost');
    expect((await runCli(['disputes', 'evidence', opened.id], { env })).status).toBe(2);
  });

  it('pos trigger dispute.closed: winning evidence closes it won', async () => {
    const closed = (await run(['trigger', 'dispute.closed', '--json'])).data;
    expect(closed).toMatchObject({ object: 'dispute', status: 'won' });
    expect(closed.closed_at).toEqual(expect.any(String));
  });
});

describe('pos balance and pos payouts', () => {
  it('pos trigger payout.paid and payout.failed, then balance, list, get, create and the bank account', async () => {
    const paid = (await run(['trigger', 'payout.paid', '--json'])).data;
    expect(paid).toMatchObject({ object: 'payout', status: 'paid', failure_code: null });
    const failed = (await run(['trigger', 'payout.failed', '--json'])).data;
    expect(failed).toMatchObject({ object: 'payout', status: 'failed', failure_code: 'no_account' });
    // The trigger leaves the shop paid out to the account that pays.
    expect((await run(['payouts', 'bank-account', '--json'])).data).toMatchObject({ last4: '6789' });

    const balance = (await run<{ data: { available: { amount: number; currency: string }[]; pending: unknown[] } }>(['balance', '--json'])).data;
    expect(balance).toHaveProperty('pending');
    const list = await run<{ data: Obj[] }>(['payouts', 'list', '--json']);
    expect(list.data.map((p) => p.id)).toEqual(expect.arrayContaining([paid.id, failed.id]));
    expect((await run(['payouts', 'get', failed.reference, '--json'])).data).toMatchObject({ status: 'failed' });
    const table = await runCli(['payouts', 'list', '--status', 'failed'], { env });
    expect(table.stdout).toMatch(new RegExp(`${failed.reference}\\s+failed`));

    // The failed payout's money is back in the available balance, so there is something to pay out.
    const made = (await run(['payouts', 'create', '1.00', '--description', 'from the CLI', '--yes', '--json'])).data;
    expect(made).toMatchObject({ object: 'payout', amount: 100, currency: 'usd', description: 'from the CLI', automatic: false });
    const words = await runCli(['balance'], { env });
    expect(words.stdout).toMatch(/USD\s+\$[\d,.]+\s+\$[\d,.]+/);
  });

  it('the close-out counts the day’s disputes and payouts', async () => {
    const report = (await run<{ data: { disputes: { opened: { count: number }; closed: { count: number }; won: number; lost: number }; payouts: { sent: { count: number }; failed: { count: number } } } }>([
      'report',
      'day',
      '--date',
      localDate(),
      '--json',
    ])).data;
    expect(report.disputes.opened.count).toBeGreaterThanOrEqual(2);
    expect(report.disputes.won).toBeGreaterThanOrEqual(1);
    expect(report.disputes.lost).toBeGreaterThanOrEqual(1);
    expect(report.payouts.sent.count).toBeGreaterThanOrEqual(3);
    expect(report.payouts.failed.count).toBeGreaterThanOrEqual(1);
    const words = await runCli(['report', 'day'], { env });
    expect(words.stdout).toMatch(/Disputes: \d+ opened .* closed .*\d+ won, \d+ lost\)/);
    expect(words.stdout).toMatch(/Payouts: \d+ sent .*, \d+ failed/);
  });
});
