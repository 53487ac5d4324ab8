import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedMerchant } from '../server/accounts/merchants.js';
import { client, type Json } from './helpers/api.js';
import { startTestServer, type TestServer } from './helpers/server.js';
import { runCli } from './helpers/cli.js';
import { backendEnv } from './helpers/db.js';
import { eventually } from './helpers/tmp.js';
import { completeHostedOnboarding } from './helpers/onboarding.js';

type ErrorBody = { error: Json & { code?: string; message?: string } };
interface MerchantBody {
  data: Json & {
    charges_enabled: boolean;
    payouts_enabled: boolean;
    requirements: { currently_due: string[]; past_due: string[]; errors: { requirement: string; code: string }[] };
    onboarding: { status: string; message: string; account_type: string | null };
  };
}

const PAYMENT = { amount: 2_500, currency: 'usd', payment_method_type: 'card', payment_method: 'pm_card_visa', confirm: true };

/**
 * Merchants on the simulator's live side made as real live accounts are (`--simulated-live-accounts
 * onboarding`): Express accounts that must walk Stripe's hosted onboarding, served by the
 * simulator, before they can charge; test-mode merchants beside them are ready at once.
 */
describe('merchant onboarding through the simulator', () => {
  let t: TestServer;

  beforeAll(async () => {
    t = await startTestServer({ simulateLive: true, simulatedLiveAccounts: 'onboarding' });
  });
  afterAll(async () => {
    await t?.stop();
  });

  async function merchantView(key: string) {
    const res = await client(t.url, key).get<MerchantBody>('/v1/merchant');
    expect(res.status).toBe(200);
    return res.body.data;
  }

  async function merchantUpdates(key: string) {
    const res = await client(t.url, key).get<{ data: { type: string; data: MerchantBody['data'] & { previous_attributes: Json } }[] }>('/v1/events?type=merchant.updated');
    expect(res.status).toBe(200);
    return res.body.data;
  }

  it('charges at once in test mode: the test account is prefilled with test values', async () => {
    const m = await t.merchant('Ready Café');
    const view = await merchantView(m.keys.sk_test);
    expect(view).toMatchObject({ charges_enabled: true, payouts_enabled: true, onboarding: { status: 'complete', account_type: 'custom' } });
    expect((await client(t.url, m.keys.sk_test).post('/v1/transactions', PAYMENT)).status).toBe(201);
  });

  describe('a new live merchant', () => {
    let m: CreatedMerchant;

    beforeAll(async () => {
      m = await t.merchant('Live Bakery');
    });

    it('cannot charge, pay out or open a checkout until onboarding is done, and the refusal says what is missing', async () => {
      const view = await merchantView(m.keys.sk_live);
      expect(view).toMatchObject({ charges_enabled: false, payouts_enabled: false, onboarding: { status: 'action_required', account_type: 'express' } });
      expect(view.requirements.currently_due.length).toBeGreaterThan(0);
      expect(view.onboarding.message).toMatch(/^Stripe needs: /);

      const api = client(t.url, m.keys.sk_live);
      const refused = await api.post<ErrorBody>('/v1/transactions', PAYMENT);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ type: 'invalid_request_error', code: 'charges_not_enabled' });
      expect(refused.body.error.message).toContain(view.onboarding.message);
      expect(refused.body.error.message).toContain('onboarding-link');
      for (const [path, body] of [
        ['/v1/payment-intents', PAYMENT],
        ['/v1/checkout/sessions', { amount: 2_500, currency: 'usd', success_url: 'https://shop.example/ok' }],
        ['/v1/payment-links', { amount: 2_500, currency: 'usd' }],
      ] as const) {
        const answer = await api.post<ErrorBody>(path, body);
        expect(answer.status, path).toBe(400);
        expect(answer.body.error.code, path).toBe('charges_not_enabled');
      }
      expect((await api.post<ErrorBody>('/v1/payouts', { amount: 100 })).body.error.code).toBe('payouts_not_enabled');
      // Refused before anything was written.
      expect((await api.get<{ data: unknown[] }>('/v1/transactions')).body.data).toEqual([]);
      expect(await merchantUpdates(m.keys.sk_live)).toEqual([]);
    });

    it('completes onboarding on the hosted page: charges_enabled flips with account.updated → merchant.updated, and it charges', async () => {
      const link = await client(t.url, m.keys.sk_live).post<{ data: { object: string; url: string; expires_at: string } }>('/v1/merchant/onboarding-link', {
        return_url: 'https://platform.example/onboarded',
        refresh_url: 'https://platform.example/again',
      });
      expect(link.status).toBe(201);
      expect(link.body.data.object).toBe('onboarding_link');
      expect(Date.parse(link.body.data.expires_at)).toBeGreaterThan(Date.now());

      const landed = await completeHostedOnboarding(link.body.data.url, 'verified');
      expect(landed).toBe('https://platform.example/onboarded');

      const updates = await eventually(async () => {
        const found = await merchantUpdates(m.keys.sk_live);
        return found.some((e) => e.data.charges_enabled) ? found : undefined;
      }, 15_000);
      const enabled = updates.find((e) => e.data.charges_enabled);
      expect(enabled?.data).toMatchObject({ id: m.merchant.id, object: 'merchant', is_test: false, onboarding: { status: 'complete' } });
      expect(enabled?.data.previous_attributes).toMatchObject({ charges_enabled: false });
      expect(await merchantUpdates(m.keys.sk_test)).toEqual([]);

      expect(await merchantView(m.keys.sk_live)).toMatchObject({ charges_enabled: true, payouts_enabled: true, onboarding: { status: 'complete' } });
      const paid = await client(t.url, m.keys.sk_live).post<{ data: { status: string } }>('/v1/transactions', PAYMENT);
      expect(paid.status).toBe(201);
      expect(paid.body.data.status).toBe('succeeded');
    });

    it('a used link cannot be used again', async () => {
      const link = await client(t.url, m.keys.sk_live).post<{ data: { url: string } }>('/v1/merchant/onboarding-link', {});
      expect(link.status).toBe(201);
      expect((await fetch(link.body.data.url)).status).toBe(200);
      // Opened once: a second visit goes to the refresh URL, this server's page by default.
      const again = await fetch(link.body.data.url, { redirect: 'manual' });
      expect(again.status).toBeGreaterThanOrEqual(300);
      expect(again.status).toBeLessThan(400);
      expect(again.headers.get('location')).toBe(`${t.url}/onboarding/refresh`);
      const page = await fetch(`${t.url}/onboarding/refresh`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('This onboarding link has expired');
    });
  });

  it('keeps charges disabled when a test identity value fails verification, and says so in words', async () => {
    const m = await t.merchant('Unverified Deli');
    const link = await client(t.url, m.keys.sk_live).post<{ data: { url: string } }>('/v1/merchant/onboarding-link', {});
    await completeHostedOnboarding(link.body.data.url, 'failing');
    const view = await eventually(async () => {
      const found = await merchantView(m.keys.sk_live);
      return found.requirements.errors.length > 0 ? found : undefined;
    }, 15_000);
    expect(view.charges_enabled).toBe(false);
    expect(view.onboarding.status).toBe('action_required');
    expect(view.onboarding.message).toMatch(/could not be verified: /);
    const refused = await client(t.url, m.keys.sk_live).post<ErrorBody>('/v1/transactions', PAYMENT);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('charges_not_enabled');
    expect(refused.body.error.message).toMatch(/could not be verified/);
  });

  it('refuses hostile onboarding-link bodies with 400 and a named parameter', async () => {
    const m = await t.merchant('Careful Shop');
    const api = client(t.url, m.keys.sk_test);
    for (const body of [
      { return_url: 'javascript:alert(1)' },
      { return_url: 'ftp://files.example/x' },
      { refresh_url: 'not a url' },
      { return_url: `https://example.com/${'a'.repeat(3_000)}` },
      { return_url: 42 },
      { return_url: ['https://example.com'] },
      { type: 'account_update' },
      { account: 'acct_someone_else' },
    ]) {
      const res = await api.post<ErrorBody>('/v1/merchant/onboarding-link', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error.type).toBe('invalid_request_error');
      expect(res.body.error.param).toBeDefined();
    }
    expect((await api.raw<ErrorBody>('POST', '/v1/merchant/onboarding-link', { rawBody: '[1,2]', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await api.raw<ErrorBody>('POST', '/v1/merchant/onboarding-link', { rawBody: '{"return_url":', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await client(t.url, m.keys.pk_test).post<ErrorBody>('/v1/merchant/onboarding-link', {})).status).toBe(403);
  });

  it('pos admin merchant onboard prints a link from the running server', async () => {
    const m = await t.merchant('CLI Onboarding');
    // The live account exists already, so the command's one request only makes the link.
    expect((await merchantView(m.keys.sk_live)).onboarding.status).toBe('action_required');
    // Asynchronously: the server answering the command runs in this process.
    const run = await runCli(['admin', 'merchant', 'onboard', m.merchant.id, '--mode', 'live', '--server', t.url, '--data-dir', t.dataDir, '--json'], { env: backendEnv(t.dataDir) });
    expect(run.status, run.stderr).toBe(0);
    const printed = JSON.parse(run.stdout) as { merchant_id: string; mode: string; url: string; expires_at: string };
    expect(printed).toMatchObject({ merchant_id: m.merchant.id, mode: 'live', url: expect.stringMatching(/^https?:\/\//) });
    expect((await fetch(printed.url)).status).toBe(200);
    // The key it asked with no longer works.
    const keys = await t.server.store.db.selectFrom('api_keys').select(['expires_at']).where('merchant_id', '=', m.merchant.id).where('kind', '=', 'secret').where('mode', '=', 'live').execute();
    expect(keys.filter((k) => k.expires_at !== null && Number(k.expires_at) <= Date.now())).toHaveLength(1);
    const unknown = await runCli(['admin', 'merchant', 'onboard', '00000000-0000-4000-8000-000000000000', '--server', t.url, '--data-dir', t.dataDir], { env: backendEnv(t.dataDir) });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain('no merchant');
  });
});
