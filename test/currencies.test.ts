import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from './helpers/api.js';
import { json, runCli } from './helpers/cli.js';
import { backendEnv } from './helpers/db.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { eventually } from './helpers/tmp.js';

type Json = Record<string, unknown>;

/** Merchants in other countries: their currency, its minimum, zero-decimal money end to end. */
let t: TestServer;

async function merchantIn(country: string, name: string, extra: string[] = []): Promise<{ id: string; key: string; country: string; default_currency: string }> {
  const r = await runCli(['admin', 'merchant', 'create', '--business-name', name, '--country', country, ...extra, '--data-dir', t.dataDir, '--json'], { env: backendEnv(t.dataDir) });
  expect(r.status, r.stderr).toBe(0);
  const created = json<{ id: string; country: string; default_currency: string; api_keys: { sk_test: string } }>(r);
  return { id: created.id, key: created.api_keys.sk_test, country: created.country, default_currency: created.default_currency };
}

beforeAll(async () => {
  t = await startTestServer({}, { simulator: { authorizationDelayMs: 50 } });
});
afterAll(async () => {
  await t.stop();
});

describe('countries and currencies', () => {
  it('gives a merchant its country’s currency, or the one asked for, and refuses countries it does not serve', async () => {
    const jp = await merchantIn('JP', 'Kissa Tokyo');
    expect(jp).toMatchObject({ country: 'JP', default_currency: 'jpy' });
    expect(await merchantIn('de', 'Berlin Bäckerei')).toMatchObject({ country: 'DE', default_currency: 'eur' });
    expect(await merchantIn('IE', 'Dublin Deli', ['--currency', 'GBP'])).toMatchObject({ country: 'IE', default_currency: 'gbp' });
    const nowhere = await runCli(['admin', 'merchant', 'create', '--business-name', 'X', '--country', 'ZZ', '--data-dir', t.dataDir], { env: backendEnv(t.dataDir) });
    expect(nowhere.status).toBe(2);
    expect(nowhere.stderr).toMatch(/--country ZZ is not supported: use one of US, CA, GB, IE, DE, FR, NL, AU, JP/);
    const merchant = await client(t.url, jp.key).get<{ data: Json }>('/v1/merchant');
    expect(merchant.body.data).toMatchObject({ country: 'JP', default_currency: 'jpy' });
  });

  it('charges ¥500 as amount 500 with a whole-yen fee, through the API and the CLI', async () => {
    const jp = await merchantIn('JP', 'Ramen Ya');
    const api = client(t.url, jp.key);
    const paid = await api.post<{ data: Json }>('/v1/transactions', { amount: 500, payment_method: 'pm_card_visa', confirm: true });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    expect(paid.body.data).toMatchObject({ amount: 500, currency: 'jpy', status: 'succeeded', platform_fee_cents: 15 });
    const env = { POS_SERVER_URL: t.url, POS_API_KEY: jp.key };
    const cli = await runCli(['charge', '500', '--payment-method', 'pm_card_visa'], { env });
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/¥500/);
    expect((await runCli(['charge', '5.00'], { env })).stderr).toMatch(/JPY has no decimals/);
    const closeOut = json<{ data: { currency: string; total: { succeeded: { count: number; amount: number }; fees: number; net: number } } }>(await runCli(['report', 'day', '--json'], { env })).data;
    expect(closeOut).toMatchObject({ currency: 'jpy', total: { succeeded: { count: 2, amount: 1000 }, fees: 30, net: 970 } });
    const human = await runCli(['report', 'day'], { env });
    expect(human.stdout).toMatch(/¥1,000/);
  });

  it('shows yen on the terminal receipt of a Japanese shop', async () => {
    const jp = await merchantIn('JP', 'Izakaya');
    const api = client(t.url, jp.key);
    expect((await api.post('/v1/terminal/locations', { display_name: 'Counter', address: { line1: '1-1 Chiyoda', city: 'Tokyo', postal_code: '100-0001', country: 'JP' } })).status).toBe(201);
    const reader = (await api.post<{ data: { processor_terminal_id: string } }>('/v1/terminals', { name: 'Till', registration_code: 'simulated-wpe' })).body.data.processor_terminal_id;
    const created = await api.post<{ data: { id: string; payment_intent_id: string } }>('/v1/terminal/create-payment', { amount: 1200 });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await api.post('/v1/terminal/process-payment', { payment_intent_id: created.body.data.payment_intent_id, reader_id: reader })).status).toBe(200);
    expect((await api.post('/v1/terminal/simulate-payment', { reader_id: reader, amount_tip: 100 })).status).toBe(200);
    const txn = await eventually(async () => {
      const got = await api.get<{ data: { status: string; amount: number; receipt_url: string | null } }>(`/v1/transactions/${created.body.data.id}`);
      return got.body.data.status === 'succeeded' && got.body.data.receipt_url ? got.body.data : undefined;
    });
    expect(txn.amount).toBe(1300);
    const receipt = await fetch(txn.receipt_url ?? '');
    expect(await receipt.text()).toContain('¥1,300');
  });

  it('holds every currency to Stripe’s minimum where it is above the spec’s 50, saying it in money', async () => {
    const gb = await merchantIn('GB', 'Chippy');
    const api = client(t.url, gb.key);
    const hkd = await api.post<{ error: Json }>('/v1/transactions', { amount: 300, currency: 'hkd' });
    expect(hkd.status).toBe(400);
    expect(hkd.body.error).toMatchObject({ code: 'amount_too_small', param: 'amount' });
    expect(String(hkd.body.error.message)).toMatch(/HK\$4\.00/);
    expect((await api.post('/v1/transactions', { amount: 400, currency: 'hkd' })).status).toBe(201);
    expect((await api.post('/v1/transactions', { amount: 50 })).status).toBe(201);
    const link = await api.post<{ error: Json }>('/v1/payment-links', { amount: 1000, currency: 'czk' });
    expect(link.status).toBe(400);
    expect(link.body.error).toMatchObject({ code: 'amount_too_small' });
    const none = await api.get<{ totalCount: number }>('/v1/transactions?page=1&size=10');
    expect(none.body.totalCount).toBe(2);
  });

  it('keeps ACH for US merchants, with a clear error elsewhere and nothing written', async () => {
    const fr = await merchantIn('FR', 'Boulangerie');
    const api = client(t.url, fr.key);
    const ach = await api.post<{ error: Json }>('/v1/transactions', { amount: 5000, currency: 'usd', payment_method_type: 'ach' });
    expect(ach.status).toBe(400);
    expect(ach.body.error).toMatchObject({ code: 'ach_unavailable', param: 'payment_method_type' });
    expect(String(ach.body.error.message)).toMatch(/US merchants only; this merchant is in FR/);
    expect((await api.get<{ totalCount: number }>('/v1/transactions?page=1&size=10')).body.totalCount).toBe(0);
  });
});
