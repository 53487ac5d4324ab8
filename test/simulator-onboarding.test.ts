import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestSimulator, WebhookReceiver, eventually, startTestSimulator } from '../simulator/testing/harness.js';
import { verifiedAccountParams } from '../simulator/testing/onboarding.js';

/**
 * Connect onboarding as on Stripe: new accounts have requirements due and inactive capabilities,
 * Stripe's test verification values verify or fail, Account Links open the hosted onboarding page
 * once, and every change is an `account.updated` Connect event.
 */

let t: TestSimulator;
let connect: WebhookReceiver;

beforeAll(async () => {
  // A long verification delay: tests move verification on with the control API, never by waiting.
  t = await startTestSimulator({ verificationDelayMs: 60_000 });
  connect = await new WebhookReceiver().start();
  await t.stripe.webhookEndpoints.create({ url: connect.url, enabled_events: ['account.updated', 'capability.updated'], connect: true });
});
afterAll(async () => {
  await connect.close();
  await t.close();
});

const bothCapabilities = { card_payments: { requested: true }, transfers: { requested: true } };

function errorOf(promise: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  return promise.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (error: unknown) => error as Stripe.errors.StripeError,
  );
}

describe('a new connected account', () => {
  it('has requirements due and inactive capabilities, and cannot be charged', async () => {
    const account = await t.stripe.accounts.create({ type: 'express', country: 'US', capabilities: bothCapabilities });
    expect(account).toMatchObject({ type: 'express', charges_enabled: false, payouts_enabled: false, details_submitted: false, default_currency: 'usd' });
    expect(account.capabilities).toEqual({ card_payments: 'inactive', transfers: 'inactive' });
    expect(account.controller).toMatchObject({ requirement_collection: 'stripe', stripe_dashboard: { type: 'express' } });
    expect(account.requirements?.currently_due).toEqual(
      expect.arrayContaining(['business_type', 'business_profile.mcc', 'business_profile.url', 'external_account', 'tos_acceptance.date', 'tos_acceptance.ip']),
    );
    expect(account.requirements?.disabled_reason).toBe('requirements.past_due');
    expect(account.requirements?.alternatives).toEqual([{ alternative_fields_due: ['business_profile.product_description'], original_fields_due: ['business_profile.url'] }]);
    expect(account.external_accounts?.data).toEqual([]);

    const destination = await errorOf(t.stripe.paymentIntents.create({ amount: 1_000, currency: 'usd', payment_method: 'pm_card_visa', transfer_data: { destination: account.id } }));
    expect(destination).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(destination).toMatchObject({ code: 'insufficient_capabilities_for_transfer', param: 'transfer_data[destination]' });
    expect(destination.message).toBe('Your destination account needs to have at least one of the following capabilities enabled: transfers, crypto_transfers, legacy_payments');

    const direct = await errorOf(t.stripe.paymentIntents.create({ amount: 1_000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true }, { stripeAccount: account.id }));
    expect(direct.message).toContain('Your account cannot currently make charges');
    expect(direct.message).toContain(`/v1/accounts/${account.id}`);
  });

  it('lists individual requirements once the business type is known, per country', async () => {
    const us = await t.stripe.accounts.create({ type: 'custom', country: 'US', business_type: 'individual', capabilities: bothCapabilities });
    expect(us.requirements?.currently_due).toEqual([
      'business_profile.mcc',
      'business_profile.url',
      'external_account',
      'individual.address.city',
      'individual.address.line1',
      'individual.address.postal_code',
      'individual.address.state',
      'individual.dob.day',
      'individual.dob.month',
      'individual.dob.year',
      'individual.email',
      'individual.first_name',
      'individual.last_name',
      'individual.phone',
      'individual.ssn_last_4',
      'tos_acceptance.date',
      'tos_acceptance.ip',
    ]);
    expect(us.requirements?.eventually_due).toContain('individual.id_number');
    const gb = await t.stripe.accounts.create({ type: 'custom', country: 'GB', business_type: 'individual', capabilities: bothCapabilities });
    expect(gb.default_currency).toBe('gbp');
    expect(gb.requirements?.currently_due).not.toContain('individual.ssn_last_4');
    expect(gb.requirements?.currently_due).not.toContain('individual.address.state');
    const unsupported = await errorOf(t.stripe.accounts.create({ type: 'custom', country: 'ZZ' }));
    expect(unsupported.param).toBe('country');
  });

  it('refuses terms of service accepted by the platform for an Express account', async () => {
    const account = await t.stripe.accounts.create({ type: 'express', country: 'US', capabilities: bothCapabilities });
    const error = await errorOf(t.stripe.accounts.update(account.id, { tos_acceptance: { date: Math.floor(Date.now() / 1000), ip: '127.0.0.1' } }));
    expect(error.message).toBe('You cannot accept the Terms of Service on behalf of accounts where controller[requirement_collection]=stripe, which includes Standard and Express accounts.');
  });

  it('validates identity input', async () => {
    const account = await t.stripe.accounts.create({ type: 'custom', country: 'US', business_type: 'individual' });
    for (const [params, param] of [
      [{ individual: { dob: { day: 31, month: 2, year: 1990 } } }, 'individual[dob]'],
      [{ individual: { ssn_last_4: '12a4' } }, 'individual[ssn_last_4]'],
      [{ individual: { email: 'not-an-email' } }, 'individual[email]'],
      [{ business_profile: { url: 'javascript:alert(1)' } }, 'business_profile[url]'],
      [{ business_profile: { mcc: 'food' } }, 'business_profile[mcc]'],
      [{ tos_acceptance: { date: 1, ip: 'nowhere' } }, 'tos_acceptance[ip]'],
      [{ company: { name: 'Acme' } }, 'company'],
    ] as [Stripe.AccountUpdateParams, string][]) {
      const error = await errorOf(t.stripe.accounts.update(account.id, params));
      expect(error, JSON.stringify(params)).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(error.param, JSON.stringify(params)).toBe(param);
    }
  });
});

describe('verification with Stripe test values', () => {
  it('makes an account ready at once with the immediate test DOB, and it can be charged', async () => {
    const account = await t.stripe.accounts.create(verifiedAccountParams());
    expect(account).toMatchObject({ charges_enabled: true, payouts_enabled: true, details_submitted: true, capabilities: { card_payments: 'active', transfers: 'active' } });
    expect(account.requirements).toMatchObject({ currently_due: [], past_due: [], pending_verification: [], errors: [], disabled_reason: null });
    expect(account.individual).toMatchObject({ object: 'person', first_name: 'Jenny', id_number_provided: true, ssn_last_4_provided: true, verification: { status: 'verified' } });
    expect(account.external_accounts?.data).toHaveLength(1);
    const pi = await t.stripe.paymentIntents.create({ amount: 1_000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, transfer_data: { destination: account.id } });
    expect(pi.status).toBe('succeeded');
    const direct = await t.stripe.paymentIntents.create({ amount: 1_000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true }, { stripeAccount: account.id });
    expect(direct.status).toBe('succeeded');
    for (const country of ['GB', 'CA', 'DE', 'JP', 'AU']) {
      const abroad = await t.stripe.accounts.create(verifiedAccountParams({ country }));
      expect(abroad.charges_enabled, `${country}: ${JSON.stringify(abroad.requirements)}`).toBe(true);
    }
  });

  it('keeps submitted fields pending until verification, then activates and announces it', async () => {
    const params = verifiedAccountParams();
    const account = await t.stripe.accounts.create({ ...params, individual: { ...params.individual, dob: { day: 1, month: 1, year: 1901 } } });
    expect(account.charges_enabled).toBe(false);
    expect(account.capabilities).toEqual({ card_payments: 'pending', transfers: 'pending' });
    expect(account.requirements?.currently_due).toEqual([]);
    expect(account.requirements?.pending_verification).toEqual(expect.arrayContaining(['individual.dob.year', 'individual.address.line1', 'individual.id_number']));
    expect(account.requirements?.disabled_reason).toBe('requirements.pending_verification');

    await t.sim.control.advanceTimers();
    const verified = await t.stripe.accounts.retrieve(account.id);
    expect(verified).toMatchObject({ charges_enabled: true, payouts_enabled: true, capabilities: { card_payments: 'active', transfers: 'active' } });
    expect(verified.requirements?.pending_verification).toEqual([]);
    const updated = await eventually(
      () => connect.received.find((w) => w.event.type === 'account.updated' && w.event.account === account.id && (w.event.data.object as unknown as Stripe.Account).charges_enabled),
      'account.updated with charges_enabled',
    );
    expect((updated.event as unknown as Stripe.Event).data.previous_attributes).toMatchObject({ charges_enabled: false });
    await eventually(
      () => connect.received.find((w) => w.event.type === 'capability.updated' && w.event.account === account.id && w.event.data.object.status === 'active'),
      'capability.updated active',
    );
  });

  it('fails Stripe test values that do not verify, with requirement errors', async () => {
    const params = verifiedAccountParams();
    const cases: [Stripe.AccountCreateParams.Individual, string, string][] = [
      [{ dob: { day: 15, month: 6, year: 1985 } }, 'individual.dob.day', 'verification_failed_keyed_identity'],
      [{ address: { ...params.individual!.address, line1: 'address_no_match' } }, 'individual.address.line1', 'verification_failed_address_match'],
      [{ id_number: '111111111' }, 'individual.id_number', 'verification_failed_id_number_match'],
    ];
    const ids: string[] = [];
    for (const [change] of cases) {
      ids.push((await t.stripe.accounts.create({ ...params, individual: { ...params.individual, dob: { day: 1, month: 1, year: 1901 }, ...change } })).id);
    }
    await t.sim.control.advanceTimers();
    for (const [index, [, requirement, code]] of cases.entries()) {
      const account = await t.stripe.accounts.retrieve(ids[index]!);
      expect(account.charges_enabled, requirement).toBe(false);
      expect(account.requirements?.currently_due).toContain(requirement);
      expect(account.requirements?.errors).toContainEqual({ code, reason: expect.any(String) as string, requirement });
      expect(account.capabilities?.card_payments).toBe('inactive');
    }
    // Correcting the failed field submits it again; it verifies and the account becomes ready.
    const fixed = await t.stripe.accounts.update(ids[2]!, { individual: { id_number: '000000000' } });
    expect(fixed.requirements?.pending_verification).toContain('individual.id_number');
    expect(fixed.requirements?.errors).toEqual([]);
    await t.sim.control.advanceTimers();
    expect((await t.stripe.accounts.retrieve(ids[2]!)).charges_enabled).toBe(true);
  });

  it('puts an account with the OFAC test DOB under review as listed', async () => {
    const params = verifiedAccountParams();
    const account = await t.stripe.accounts.create({ ...params, individual: { ...params.individual, dob: { day: 1, month: 1, year: 1900 } } });
    await t.sim.control.advanceTimers();
    const listed = await t.stripe.accounts.retrieve(account.id);
    expect(listed.requirements?.disabled_reason).toBe('listed');
    expect(listed.charges_enabled).toBe(false);
    expect(listed.payouts_enabled).toBe(false);
  });

  it('satisfies external_account with a bank account added later', async () => {
    const { external_account: _bank, ...params } = verifiedAccountParams();
    const account = await t.stripe.accounts.create(params);
    expect(account.requirements?.currently_due).toEqual(['external_account']);
    await t.stripe.accounts.createExternalAccount(account.id, { external_account: 'btok_us_verified' });
    expect((await t.stripe.accounts.retrieve(account.id)).charges_enabled).toBe(true);
  });
});

describe('Account Links', () => {
  it('creates a single-use link with Stripe’s shape', async () => {
    const account = await t.stripe.accounts.create({ type: 'express', country: 'US', capabilities: bothCapabilities });
    const link = await t.stripe.accountLinks.create({ account: account.id, type: 'account_onboarding', refresh_url: 'http://127.0.0.1:9/refresh', return_url: 'http://127.0.0.1:9/return' });
    expect(Object.keys(link).sort()).toEqual(['created', 'expires_at', 'object', 'url']);
    expect(link.object).toBe('account_link');
    expect(link.expires_at - link.created).toBe(300);
    expect(link.url.startsWith(t.sim.url)).toBe(true);
    const update = await errorOf(t.stripe.accountLinks.create({ account: account.id, type: 'account_update', refresh_url: 'http://127.0.0.1:9/r', return_url: 'http://127.0.0.1:9/r' }));
    expect(update.param).toBe('type');
    const badUrl = await errorOf(t.stripe.accountLinks.create({ account: account.id, type: 'account_onboarding', refresh_url: 'ftp://x', return_url: 'http://127.0.0.1:9/r' }));
    expect(badUrl).toMatchObject({ param: 'refresh_url', code: 'url_invalid' });
    const missing = await errorOf(t.stripe.accountLinks.create({ account: 'acct_nope', type: 'account_onboarding' }));
    expect(missing.code).toBe('resource_missing');
  });
});

describe('the hosted onboarding page', () => {
  const refreshUrl = 'http://127.0.0.1:9/onboarding/refresh';
  const returnUrl = 'http://127.0.0.1:9/onboarding/return';

  async function newLink(account: string): Promise<string> {
    return (await t.stripe.accountLinks.create({ account, type: 'account_onboarding', refresh_url: refreshUrl, return_url: returnUrl })).url;
  }

  async function open(url: string): Promise<{ html: string; session: string }> {
    const response = await fetch(url, { redirect: 'manual' });
    expect(response.status).toBe(200);
    const html = await response.text();
    const session = /name="session" value="([^"]+)"/.exec(html)?.[1];
    expect(session).toBeDefined();
    return { html, session: session! };
  }

  function post(url: string, fields: Record<string, string> | string): Promise<Response> {
    const body = typeof fields === 'string' ? fields : new URLSearchParams(fields).toString();
    return fetch(url, { method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body });
  }

  it('collects Stripe test data, returns to return_url, and the account becomes ready with account.updated', async () => {
    const account = await t.stripe.accounts.create({ type: 'express', country: 'US', capabilities: bothCapabilities });
    const url = await newLink(account.id);
    const { html, session } = await open(url);
    expect(html).toContain('business_profile.mcc');
    expect(html).toContain('Use test data (verifies)');
    expect(html).toContain('name="tos_acceptance"');

    const done = await post(url, { session, action: 'test_data' });
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(returnUrl);
    const submitted = await t.stripe.accounts.retrieve(account.id);
    expect(submitted).toMatchObject({ details_submitted: true, charges_enabled: false, business_type: 'individual' });
    expect(submitted.tos_acceptance).toMatchObject({ ip: '127.0.0.1', date: expect.any(Number) as number });
    expect(submitted.requirements?.pending_verification?.length).toBeGreaterThan(0);

    await t.sim.control.advanceTimers();
    const ready = await t.stripe.accounts.retrieve(account.id);
    expect(ready).toMatchObject({ charges_enabled: true, payouts_enabled: true, capabilities: { card_payments: 'active', transfers: 'active' } });
    await eventually(
      () => connect.received.find((w) => w.event.type === 'account.updated' && w.event.account === account.id && (w.event.data.object as unknown as Stripe.Account).charges_enabled),
      'account.updated for the onboarded account',
    );
    const pi = await t.stripe.paymentIntents.create({ amount: 2_500, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, transfer_data: { destination: account.id } });
    expect(pi.status).toBe('succeeded');

    // The link was used: visiting it again, or posting the finished session again, goes to refresh_url.
    const again = await fetch(url, { redirect: 'manual' });
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe(refreshUrl);
    const replay = await post(url, { session, action: 'test_data' });
    expect(replay.headers.get('location')).toBe(refreshUrl);
  });

  it('sends an expired link to refresh_url', async () => {
    const account = await t.stripe.accounts.create({ type: 'express', country: 'US', capabilities: bothCapabilities });
    await t.sim.control.setAccountLinkTtl(0);
    try {
      const url = await newLink(account.id);
      const response = await fetch(url, { redirect: 'manual' });
      expect(response.status).toBe(303);
      expect(response.headers.get('location')).toBe(refreshUrl);
    } finally {
      await t.sim.control.setAccountLinkTtl(300_000);
    }
    const unknown = await fetch(`${t.sim.url}/_sim/connect/setup/e/${account.id}/alink_nope`, { redirect: 'manual' });
    expect(unknown.status).toBe(404);
  });

  it('takes typed values: Stripe failing test values keep charges disabled with requirement errors', async () => {
    const account = await t.stripe.accounts.create({ type: 'express', country: 'US', business_type: 'individual', capabilities: bothCapabilities });
    const url = await newLink(account.id);
    const { html, session } = await open(url);
    expect(html).toContain('name="individual[dob][day]"');
    const typed = await post(url, {
      session,
      action: 'submit',
      'individual[first_name]': 'Jane',
      'individual[last_name]': 'Doe',
      'individual[email]': 'jane@example.com',
      'individual[phone]': '0000000000',
      'individual[dob][day]': '1',
      'individual[dob][month]': '1',
      'individual[dob][year]': '1901',
      'individual[address][line1]': 'address_no_match',
      'individual[address][city]': 'San Francisco',
      'individual[address][state]': 'CA',
      'individual[address][postal_code]': '94103',
      'individual[ssn_last_4]': '0000',
      'business_profile[mcc]': '5812',
      'business_profile[product_description]': 'Coffee and pastries',
      'external_account[routing_number]': '110000000',
      'external_account[account_number]': '000123456789',
      tos_acceptance: 'accepted',
    });
    expect(typed.status).toBe(303);
    expect(typed.headers.get('location')).toBe(returnUrl);
    await t.sim.control.advanceTimers();
    const failed = await t.stripe.accounts.retrieve(account.id);
    expect(failed.charges_enabled).toBe(false);
    expect(failed.requirements?.currently_due).toEqual(['individual.address.line1']);
    expect(failed.requirements?.errors).toEqual([{ code: 'verification_failed_address_match', reason: expect.any(String) as string, requirement: 'individual.address.line1' }]);
    // A new link shows the error and asks for the address again.
    const retry = await open(await newLink(account.id));
    expect(retry.html).toContain('The address on your account could not be verified');
    expect(retry.html).toContain('name="individual[address][line1]"');
  });

  it('answers hostile form input with a 400 page, never a 500', async () => {
    const account = await t.stripe.accounts.create({ type: 'express', country: 'US', business_type: 'individual', capabilities: bothCapabilities });
    const url = await newLink(account.id);
    const { session } = await open(url);
    const hostile: (Record<string, string> | string)[] = [
      { session, action: 'nuke' },
      { session, action: 'submit', 'individual[dob][day]': '31', 'individual[dob][month]': '2', 'individual[dob][year]': '1990' },
      { session, action: 'submit', 'individual[dob][day]': 'one', 'individual[dob][month]': '1', 'individual[dob][year]': '1990' },
      { session, action: 'submit', 'individual[email]': 'x'.repeat(10_000) },
      { session, action: 'submit', 'individual[admin]': 'true' },
      { session, action: 'submit', 'business_profile[url]': 'javascript:alert(1)' },
      { session, action: 'submit', 'external_account[routing_number]': '110000000' },
      { session, action: 'submit', 'external_account[account_number]': '12;DROP', 'external_account[routing_number]': '110000000' },
      `session=${session}&action=submit&individual[first_name][]=a&individual[first_name][]=b`,
      `session=${session}&action=submit&individual[address]=flat`,
      `session=${session}&action=submit&individual[first_name]=%00%01`,
      `session=${session}&action[x]=submit`,
    ];
    for (const fields of hostile) {
      const response = await post(url, fields);
      const label = typeof fields === 'string' ? fields : JSON.stringify(fields).slice(0, 200);
      expect(response.status, label).toBe(400);
      expect(response.headers.get('content-type'), label).toMatch(/text\/html/);
      const html = await response.text();
      expect(html, label).not.toContain('<script');
      expect(html, label).toContain('name="session"');
    }
    // A forged session, or none, is not the holder's: it goes to refresh_url.
    expect((await post(url, { session: 'forged', action: 'test_data' })).headers.get('location')).toBe(refreshUrl);
    expect((await post(url, 'action=test_data')).headers.get('location')).toBe(refreshUrl);
    const json = await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'Content-Type': 'application/json' }, body: '{"session": ' });
    expect(json.status).toBe(400);
    expect((await t.stripe.accounts.retrieve(account.id)).charges_enabled).toBe(false);
  });
});

describe('restart', () => {
  it('keeps pending verifications and unused links across a restart', async () => {
    const params = verifiedAccountParams();
    const pending = await t.stripe.accounts.create({ ...params, individual: { ...params.individual, dob: { day: 1, month: 1, year: 1901 } } });
    const express = await t.stripe.accounts.create({ type: 'express', country: 'US', capabilities: bothCapabilities });
    const link = await t.stripe.accountLinks.create({ account: express.id, type: 'account_onboarding', refresh_url: 'http://127.0.0.1:9/r', return_url: 'http://127.0.0.1:9/done' });
    await t.restart();
    expect((await t.stripe.accounts.retrieve(pending.id)).requirements?.disabled_reason).toBe('requirements.pending_verification');
    await t.sim.control.advanceTimers();
    expect((await t.stripe.accounts.retrieve(pending.id)).charges_enabled).toBe(true);
    // The simulator listens on a new port after the restart; the link's path is what identifies it.
    const moved = new URL(new URL(link.url).pathname, t.sim.url).toString();
    const page = await fetch(moved, { redirect: 'manual' });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Use test data (verifies)');
  });
});
