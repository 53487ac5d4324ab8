import pino from 'pino';
import Stripe from 'stripe';
import { afterEach, describe, expect, it } from 'vitest';
import { startStack, stripeConnection, type Stack } from '../cli/stack.js';
import { loadServerConfig } from '../shared/config.js';
import { createMerchant } from '../server/accounts/merchants.js';
import { systemClock } from '../shared/time.js';
import { budgetedHttpClient } from '../server/processor/stripe/budget-client.js';
import { client, type Json } from './helpers/api.js';
import { runCli } from './helpers/cli.js';
import { seedSqliteDataDir } from './helpers/template.js';
import { eventually, tempDir } from './helpers/tmp.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function stackOn(dataDir: string): Promise<Stack> {
  const stack = await startStack(loadServerConfig({ port: 0, dataDir, logLevel: 'silent' }, {}), { logger: pino({ level: 'silent' }) });
  cleanups.push(() => stack.close());
  return stack;
}

/** A new data dir, its store already migrated (helpers/template.ts). */
function migratedDir(): string {
  const dir = tempDir();
  cleanups.push(dir.cleanup);
  seedSqliteDataDir(dir.path);
  return dir.path;
}

function sdk(stack: Stack, key?: string): Stripe {
  const sim = stack.simulator;
  if (!sim) throw new Error('no simulator');
  const apiKey = key ?? sim.keys.secretTest;
  // On the processor budget like the server's own calls: one more client of the platform's key.
  return new Stripe(apiKey, { host: sim.host, port: sim.port, protocol: 'http', maxNetworkRetries: 0, httpClient: budgetedHttpClient(apiKey) });
}

type MerchantBody = { data: { id: string; processor: { name: string; publishable_key: string; api_base: string; connected_account_id: string } } };

describe('processor adapter', () => {
  it('gives each merchant a connected account per mode, and the platform publishable key of the mode', async () => {
    const dir = migratedDir();
    const stack = await stackOn(dir);
    const m = await createMerchant(stack.server.store, systemClock, { businessName: 'Acme Coffee' });
    const test = await client(stack.server.url, m.keys.sk_test).get<MerchantBody>('/v1/merchant');
    const live = await client(stack.server.url, m.keys.sk_live).get<MerchantBody>('/v1/merchant');
    const sim = stack.simulator;
    expect(test.body.data.processor).toMatchObject({ name: 'stripe-simulator', publishable_key: sim?.keys.publishableTest, api_base: sim?.url });
    expect(live.body.data.processor.publishable_key).toBe(sim?.keys.publishableLive);
    expect(test.body.data.processor.publishable_key).not.toBe(m.keys.pk_test);
    const testAccount = test.body.data.processor.connected_account_id;
    const liveAccount = live.body.data.processor.connected_account_id;
    expect(testAccount).toMatch(/^acct_/);
    expect(liveAccount).toMatch(/^acct_/);
    expect(testAccount).not.toBe(liveAccount);
    const again = await client(stack.server.url, m.keys.sk_test).get<MerchantBody>('/v1/merchant');
    expect(again.body.data.processor.connected_account_id).toBe(testAccount);
    const account = await sdk(stack).accounts.retrieve(testAccount);
    expect(account.metadata).toMatchObject({ pos_merchant_id: m.merchant.id });
    expect(account.business_profile?.name).toBe('Acme Coffee');
    expect(account.capabilities?.card_payments).toBe('active');
  });

  it('creates destination charges with the platform fee, and refunds reverse the transfer and the fee', async () => {
    const dir = migratedDir();
    const stack = await stackOn(dir);
    const m = await createMerchant(stack.server.store, systemClock, { businessName: 'Fees' });
    const api = client(stack.server.url, m.keys.sk_test);
    const made = await api.post<{ data: { id: string; payment_intent_id: string; platform_fee_cents: number } }>('/v1/transactions', {
      amount: 10_000,
      payment_method: 'pm_card_visa',
      confirm: true,
    });
    expect(made.status).toBe(201);
    const merchant = await api.get<MerchantBody>('/v1/merchant');
    const intent = await sdk(stack).paymentIntents.retrieve(made.body.data.payment_intent_id, { expand: ['latest_charge'] });
    expect(intent.application_fee_amount).toBe(300);
    expect(intent.transfer_data?.destination).toBe(merchant.body.data.processor.connected_account_id);
    const refund = await api.post<{ data: Json }>(`/v1/transactions/${made.body.data.id}/refunds`, {});
    expect(refund.status).toBe(201);
    const refunds = await sdk(stack).refunds.list({ payment_intent: intent.id });
    expect(refunds.data).toHaveLength(1);
    expect(refunds.data[0]?.transfer_reversal).toBeTruthy();
    const charge = intent.latest_charge as Stripe.Charge;
    const fee = await sdk(stack).applicationFees.retrieve(String(charge.application_fee));
    expect(fee.amount_refunded).toBe(300);
  });

  it('keeps receiving processor events after a restart on new ports', async () => {
    const dir = migratedDir();
    let stack = await stackOn(dir);
    const m = await createMerchant(stack.server.store, systemClock, { businessName: 'Restart' });
    const first = await client(stack.server.url, m.keys.sk_test).post<{ data: { id: string; payment_intent_id: string }; client_secret: string }>('/v1/transactions', { amount: 1500 });
    await stack.close();
    cleanups.pop();
    stack = await stackOn(dir);
    const api = client(stack.server.url, m.keys.sk_test);
    const merchant = await api.get<MerchantBody>('/v1/merchant');
    // The customer confirms in the browser, with the publishable key only.
    const browser = sdk(stack, merchant.body.data.processor.publishable_key);
    await browser.paymentIntents.confirm(first.body.data.payment_intent_id, { payment_method: 'pm_card_visa', client_secret: first.body.client_secret } as Stripe.PaymentIntentConfirmParams);
    const settled = await eventually(async () => {
      const txn = await api.get<{ data: { status: string; card_last_four: string } }>(`/v1/transactions/${first.body.data.id}`);
      return txn.body.data.status === 'succeeded' ? txn.body.data : undefined;
    });
    expect(settled.card_last_four).toBe('4242');
  });

  it('refuses --processor stripe without keys, with a clear message and exit code 2', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const result = await runCli(['server', '--processor', 'stripe', '--port', '0', '--data-dir', dir.path], { env: { STRIPE_SECRET_KEY_TEST: '', STRIPE_SECRET_KEY_LIVE: '' } });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/STRIPE_SECRET_KEY_TEST/);
    // The same asked for in the run's environment (POS_PROCESSOR), not in a flag.
    const fromEnv = await runCli(['server', '--port', '0', '--data-dir', dir.path], { env: { POS_PROCESSOR: 'stripe' } });
    expect(fromEnv.status).toBe(2);
    expect(fromEnv.stderr).toMatch(/STRIPE_SECRET_KEY_TEST/);
  });

  it('refuses --processor stripe without the publishable key its checkout pages load Stripe.js with', () => {
    const env = { POS_PROCESSOR: 'stripe', STRIPE_SECRET_KEY_TEST: 'sk_test_x', STRIPE_WEBHOOK_SECRET: 'whsec_x' };
    expect(() => stripeConnection(loadServerConfig({}, env))).toThrow(/needs STRIPE_PUBLISHABLE_KEY_TEST/);
    expect(() => stripeConnection(loadServerConfig({}, { ...env, STRIPE_SECRET_KEY_LIVE: 'sk_live_x', STRIPE_PUBLISHABLE_KEY_TEST: 'pk_test_x' }))).toThrow(/needs STRIPE_PUBLISHABLE_KEY_LIVE/);
    expect(stripeConnection(loadServerConfig({}, { ...env, STRIPE_PUBLISHABLE_KEY_TEST: 'pk_test_x' })).publishableKeys.test).toBe('pk_test_x');
  });
});
