import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client } from './helpers/api.js';
import { runCli } from './helpers/cli.js';
import { startTestServer, type TestServer } from './helpers/server.js';

/**
 * Safe by default: what cannot be undone asks on a terminal and refuses without one unless --yes,
 * and live money moves only with --live. Every refusal is checked against the server: nothing changed.
 */
let t: TestServer;
let m: CreatedMerchant;
let env: Record<string, string>;
const TERMINAL = { stdin: true, stderr: true };

type Obj = { id: string; reference: string; status: string; amount_refunded: number; deleted?: boolean };

beforeAll(async () => {
  t = await startTestServer();
  m = await t.merchant('Careful Café');
  env = { POS_SERVER_URL: t.url, POS_API_KEY: m.keys.sk_test };
});
afterAll(() => t.stop());

const owner = () => client(t.url, m.keys.sk_test);
const paid = async () => (await owner().post<{ data: Obj }>('/v1/transactions', { amount: 2000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true })).body.data;

describe('destructive commands without a terminal', () => {
  it('refuse without --yes (exit 2, naming --yes) and change nothing', async () => {
    const key = (await owner().post<{ data: Obj & { secret: string } }>('/v1/api-keys', { name: 'Till', preset: 'counter' })).body.data;
    const customer = (await owner().post<{ data: Obj }>('/v1/customers', { name: 'Ada' })).body.data;
    const link = (await owner().post<{ data: Obj }>('/v1/payment-links', { amount: 1200, currency: 'usd' })).body.data;
    const hook = (await owner().post<{ data: Obj }>('/v1/webhook-endpoints', { url: 'https://example.com/hooks' })).body.data;
    const payment = await paid();
    const refused = [
      ['keys', 'revoke', key.id],
      ['keys', 'roll', key.id, '--grace-hours', '0'],
      ['customers', 'delete', customer.id],
      ['links', 'deactivate', link.id],
      ['webhooks', 'delete', hook.id],
      ['payouts', 'create', '1.00'],
      ['refund', payment.id],
      ['refund', payment.id, '--amount', '20.00'],
    ];
    for (const args of refused) {
      const r = await runCli(args, { env });
      expect(r.status, `pos ${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/refused without a terminal to confirm on; nothing changed \(add --yes to do it\)\n$/);
      expect(r.stdout).toBe('');
    }
    expect((await client(t.url, key.secret).get('/v1/merchant')).status).toBe(200);
    expect((await owner().get<{ data: Obj[] }>('/v1/api-keys')).body.data.find((k) => k.id === key.id)?.status).toBe('active');
    expect((await owner().get(`/v1/customers/${customer.id}`)).status).toBe(200);
    expect((await owner().get<{ data: Obj }>(`/v1/payment-links/${link.id}`)).body.data.status).toBe('open');
    expect((await owner().get<{ data: Obj[] }>('/v1/webhook-endpoints')).body.data.map((e) => e.id)).toContain(hook.id);
    expect((await owner().get<{ data: Obj[] }>('/v1/payouts')).body.data).toEqual([]);
    expect((await owner().get<{ data: Obj }>(`/v1/transactions/${payment.id}`)).body.data).toMatchObject({ status: 'succeeded', amount_refunded: 0 });
  });

  it('a reader is deleted only when confirmed', async () => {
    const location = (await owner().post<{ data: Obj }>('/v1/terminal/locations', { display_name: 'Front', address: { line1: '1 Market St', city: 'SF', state: 'CA', postal_code: '94105', country: 'US' } })).body.data;
    const reader = (await owner().post<{ data: Obj & { name: string } }>('/v1/terminals', { name: 'Till 9', registration_code: 'simulated-wpe', location_id: location.id })).body.data;
    const refused = await runCli(['readers', 'delete', 'Till 9'], { env });
    expect(refused.status).toBe(2);
    expect((await owner().get<{ data: { id: string }[] }>('/v1/terminal/readers')).body.data.map((r) => r.id)).toContain(reader.id);
    const deleted = await runCli(['readers', 'delete', 'Till 9'], { env, stdin: 'y\n', tty: TERMINAL });
    expect(deleted.status, deleted.stderr).toBe(0);
    expect((await owner().get<{ data: { id: string }[] }>('/v1/terminal/readers')).body.data.map((r) => r.id)).not.toContain(reader.id);
  });

  it('go ahead with --yes', async () => {
    const customer = (await owner().post<{ data: Obj }>('/v1/customers', { name: 'Bob' })).body.data;
    const r = await runCli(['customers', 'delete', customer.id, '--yes'], { env });
    expect(r.status, r.stderr).toBe(0);
    expect((await owner().get(`/v1/customers/${customer.id}`)).status).toBe(404);
  });

  it('a partial refund does not ask', async () => {
    const payment = await paid();
    const r = await runCli(['refund', payment.id, '--amount', '5.00'], { env });
    expect(r.status, r.stderr).toBe(0);
    expect((await owner().get<{ data: Obj }>(`/v1/transactions/${payment.id}`)).body.data.amount_refunded).toBe(500);
  });
});

describe('destructive commands on a terminal', () => {
  it('ask, and change nothing on anything but y or yes', async () => {
    const customer = (await owner().post<{ data: Obj }>('/v1/customers', { name: 'Cy' })).body.data;
    for (const answer of ['n\n', '\n', 'maybe\n', '']) {
      const r = await runCli(['customers', 'delete', customer.id], { env, stdin: answer, tty: TERMINAL });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`^Delete customer ${customer.id}\\? It can no longer be found or named by new payments \\[y/N\\] pos: not confirmed: nothing changed\\n$`));
    }
    expect((await owner().get(`/v1/customers/${customer.id}`)).status).toBe(200);
    const yes = await runCli(['customers', 'delete', customer.id], { env, stdin: 'yes\n', tty: TERMINAL });
    expect(yes.status, yes.stderr).toBe(0);
    expect(yes.stdout).toBe(`Deleted customer ${customer.id}\n`);
    expect((await owner().get(`/v1/customers/${customer.id}`)).status).toBe(404);
  });

  it('a whole refund names the payment and its amount', async () => {
    const payment = await paid();
    const r = await runCli(['refund', payment.reference, '--amount', '20'], { env, stdin: 'y\n', tty: TERMINAL });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toBe(`Refund all that is left of ${payment.reference} ($20.00)? [y/N] `);
    expect((await owner().get<{ data: Obj }>(`/v1/transactions/${payment.id}`)).body.data.status).toBe('refunded');
  });
});

describe('live money', () => {
  const liveEnv = () => ({ ...env, POS_API_KEY: m.keys.sk_live });

  it('needs --live with a live key, said before anything is sent', async () => {
    const commands = [
      ['charge', '5.00', '--payment-method', 'pm_card_visa'],
      ['pay', '5.00', '--reader', 'Till 1'],
      ['refund', 'txn_anything', '--amount', '1.00'],
      ['transactions', 'capture', 'txn_anything'],
      ['payouts', 'create', '1.00', '--yes'],
      ['api', 'POST', '/v1/transactions', '-d', 'amount=500', '-d', 'currency=usd'],
      ['api', 'POST', '/v1/transactions/txn_anything/refunds'],
    ];
    for (const args of commands) {
      const r = await runCli(args, { env: liveEnv() });
      expect(r.status, `pos ${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(/moves live money with a live key \(sk_live_…\): add --live to do it\n$/);
    }
    const live = client(t.url, m.keys.sk_live);
    expect((await live.get<{ data: Obj[] }>('/v1/transactions')).body.data).toEqual([]);
    expect((await live.get<{ data: Obj[] }>('/v1/payouts')).body.data).toEqual([]);
  });

  it('with --live the request goes to the server (which here refuses live payments itself)', async () => {
    const r = await runCli(['charge', '5.00', '--payment-method', 'pm_card_visa', '--currency', 'usd', '--live'], { env: liveEnv() });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/live_mode_unavailable/);
  });

  it('a test key needs no --live, and reads need none with a live key', async () => {
    expect((await runCli(['charge', '5.00', '--payment-method', 'pm_card_visa', '--currency', 'usd'], { env })).status).toBe(0);
    expect((await runCli(['api', 'GET', '/v1/transactions'], { env: liveEnv() })).status).toBe(0);
  });
});
