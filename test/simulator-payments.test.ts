import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestSimulator, startTestSimulator } from '../simulator/testing/harness.js';
import { verifiedAccountParams } from '../simulator/testing/onboarding.js';

let t: TestSimulator;
beforeAll(async () => {
  t = await startTestSimulator();
});
afterAll(async () => {
  await t.close();
});

async function cardError(promise: Promise<unknown>): Promise<InstanceType<typeof Stripe.errors.StripeCardError>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Stripe.errors.StripeCardError);
  return error as InstanceType<typeof Stripe.errors.StripeCardError>;
}

async function invalidRequest(promise: Promise<unknown>): Promise<InstanceType<typeof Stripe.errors.StripeInvalidRequestError>> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
  return error as InstanceType<typeof Stripe.errors.StripeInvalidRequestError>;
}

describe('authentication', () => {
  it('refuses an unknown key with a 401 authentication error', async () => {
    const error = await t.client('sk_test_nope').paymentIntents.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    expect((error as Stripe.errors.StripeError).statusCode).toBe(401);
    expect((error as Stripe.errors.StripeError).type).toBe('StripeAuthenticationError');
  });

  it('refuses a publishable key on a server-side call', async () => {
    const error = await t.client(t.sim.keys.publishableTest).paymentIntents.create({ amount: 1000, currency: 'usd' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
  });

  it('answers every request with a Request-Id', async () => {
    const response = await fetch(`${t.sim.url}/v1/payment_intents`, { headers: { Authorization: `Bearer ${t.sim.keys.secretTest}` } });
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    const missing = await fetch(`${t.sim.url}/v1/nothing_here`, { headers: { Authorization: `Bearer ${t.sim.keys.secretTest}` } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get('request-id')).toMatch(/^req_/);
  });

  it('refuses unknown parameters the way Stripe does', async () => {
    const error = await invalidRequest(t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd', bogus: 1 } as Stripe.PaymentIntentCreateParams));
    expect(error.code).toBe('parameter_unknown');
    expect(error.param).toBe('bogus');
  });
});

describe('payment intents', () => {
  it('creates, retrieves, updates and lists', async () => {
    const created: Stripe.PaymentIntent = await t.stripe.paymentIntents.create({
      amount: 2000,
      currency: 'usd',
      metadata: { order: 'o-1' },
      description: 'Coffee',
      allowed_payment_method_types: ['card'],
    });
    expect(created.status).toBe('requires_payment_method');
    expect(created.client_secret).toMatch(new RegExp(`^${created.id}_secret_`));
    expect(created.livemode).toBe(false);
    const updated = await t.stripe.paymentIntents.update(created.id, { amount: 2500, metadata: { order: '', note: 'x' } });
    expect(updated.amount).toBe(2500);
    expect(updated.metadata).toEqual({ note: 'x' });
    const fetched = await t.stripe.paymentIntents.retrieve(created.id);
    expect(fetched.amount).toBe(2500);
    const list = await t.stripe.paymentIntents.list({ limit: 1 });
    expect(list.object).toBe('list');
    expect(list.data[0]?.id).toBe(created.id);
    expect(list.url).toBe('/v1/payment_intents');
  });

  it('refuses amounts below the minimum with amount_too_small', async () => {
    const error = await invalidRequest(t.stripe.paymentIntents.create({ amount: 49, currency: 'usd' }));
    expect(error.code).toBe('amount_too_small');
    expect(error.param).toBe('amount');
    expect(error.statusCode).toBe(400);
  });

  it('answers resource_missing for an unknown id, mentioning the other mode', async () => {
    const missing = await invalidRequest(t.stripe.paymentIntents.retrieve('pi_doesnotexist'));
    expect(missing.code).toBe('resource_missing');
    expect(missing.statusCode).toBe(404);
    const live = await t.live.paymentIntents.create({ amount: 1000, currency: 'usd' });
    expect(live.livemode).toBe(true);
    const other = await invalidRequest(t.stripe.paymentIntents.retrieve(live.id));
    expect(other.message).toContain('live mode');
  });

  it('confirms pm_card_visa and creates a captured charge', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 1099, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, expand: ['latest_charge', 'payment_method'] });
    expect(pi.status).toBe('succeeded');
    expect(pi.amount_received).toBe(1099);
    const charge = pi.latest_charge as Stripe.Charge;
    expect(charge.object).toBe('charge');
    expect(charge.captured).toBe(true);
    expect(charge.paid).toBe(true);
    expect(charge.amount_captured).toBe(1099);
    expect(charge.payment_method_details?.card?.brand).toBe('visa');
    expect(charge.payment_method_details?.card?.last4).toBe('4242');
    expect(charge.receipt_url).toContain('/_sim/receipts/');
    expect(charge.balance_transaction).toMatch(/^txn_/);
    const pm = pi.payment_method as Stripe.PaymentMethod;
    expect(pm.card?.last4).toBe('4242');
    const again: Stripe.Charge = await t.stripe.charges.retrieve(charge.id);
    expect(again.id).toBe(charge.id);
  });

  it('confirms in two steps and with each brand token', async () => {
    const tokens: [string, string, string][] = [
      ['pm_card_visa_debit', 'visa', 'debit'],
      ['pm_card_mastercard', 'mastercard', 'credit'],
      ['pm_card_amex', 'amex', 'credit'],
      ['pm_card_discover', 'discover', 'credit'],
    ];
    for (const [token, brand, funding] of tokens) {
      const created = await t.stripe.paymentIntents.create({ amount: 1500, currency: 'usd', payment_method: token });
      expect(created.status).toBe('requires_confirmation');
      const pi = await t.stripe.paymentIntents.confirm(created.id, { expand: ['latest_charge'] });
      expect(pi.status).toBe('succeeded');
      const card = (pi.latest_charge as Stripe.Charge).payment_method_details?.card;
      expect(card?.brand).toBe(brand);
      expect(card?.funding).toBe(funding);
    }
  });

  const declines: [string, string, string][] = [
    ['pm_card_visa_chargeDeclined', 'card_declined', 'generic_decline'],
    ['pm_card_chargeDeclined', 'card_declined', 'generic_decline'],
    ['pm_card_visa_chargeDeclinedInsufficientFunds', 'card_declined', 'insufficient_funds'],
    ['pm_card_chargeDeclinedInsufficientFunds', 'card_declined', 'insufficient_funds'],
    ['pm_card_chargeDeclinedLostCard', 'card_declined', 'lost_card'],
    ['pm_card_chargeDeclinedStolenCard', 'card_declined', 'stolen_card'],
    ['pm_card_chargeDeclinedExpiredCard', 'expired_card', 'expired_card'],
    ['pm_card_chargeDeclinedIncorrectCvc', 'incorrect_cvc', 'incorrect_cvc'],
    ['pm_card_chargeDeclinedProcessingError', 'processing_error', 'processing_error'],
  ];
  it.each(declines)('declines %s with %s / %s', async (token, code, declineCode) => {
    const created = await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd' });
    const error = await cardError(t.stripe.paymentIntents.confirm(created.id, { payment_method: token }));
    expect(error.code).toBe(code);
    expect(error.decline_code).toBe(declineCode);
    expect(error.statusCode).toBe(402);
    expect(error.payment_intent?.id).toBe(created.id);
    expect(error.payment_intent?.status).toBe('requires_payment_method');
    const after = await t.stripe.paymentIntents.retrieve(created.id, { expand: ['latest_charge'] });
    expect(after.status).toBe('requires_payment_method');
    expect(after.last_payment_error?.code).toBe(code);
    expect(after.last_payment_error?.decline_code).toBe(declineCode);
    expect((after.latest_charge as Stripe.Charge).status).toBe('failed');
  });

  const numbers: [string, string | null, string | null][] = [
    ['4242424242424242', null, null],
    ['5555555555554444', null, null],
    ['378282246310005', null, null],
    ['4000000000000002', 'card_declined', 'generic_decline'],
    ['4000000000009995', 'card_declined', 'insufficient_funds'],
    ['4000000000009987', 'card_declined', 'lost_card'],
    ['4000000000009979', 'card_declined', 'stolen_card'],
    ['4000000000000069', 'expired_card', 'expired_card'],
    ['4000000000000127', 'incorrect_cvc', 'incorrect_cvc'],
    ['4000000000000119', 'processing_error', 'processing_error'],
  ];
  it.each(numbers)('raw card number %s', async (number, code, declineCode) => {
    const params: Stripe.PaymentIntentCreateParams = {
      amount: 1200,
      currency: 'usd',
      confirm: true,
      payment_method_data: { type: 'card', card: { number, exp_month: 12, exp_year: 2034, cvc: '123' } } as Stripe.PaymentIntentCreateParams.PaymentMethodData,
    };
    if (code === null) {
      const pi = await t.stripe.paymentIntents.create({ ...params, expand: ['payment_method'] });
      expect(pi.status).toBe('succeeded');
      expect((pi.payment_method as Stripe.PaymentMethod).card?.last4).toBe(number.slice(-4));
      return;
    }
    const error = await cardError(t.stripe.paymentIntents.create(params));
    expect(error.code).toBe(code);
    expect(error.decline_code).toBe(declineCode);
  });

  it('refuses a Luhn-invalid number with incorrect_number', async () => {
    const error = await cardError(
      t.stripe.paymentIntents.create({
        amount: 1200,
        currency: 'usd',
        confirm: true,
        payment_method_data: { type: 'card', card: { number: '4242424242424241', exp_month: 12, exp_year: 2034 } } as Stripe.PaymentIntentCreateParams.PaymentMethodData,
      }),
    );
    expect(error.code).toBe('incorrect_number');
  });

  it('retrieves test payment methods and created ones', async () => {
    const visa: Stripe.PaymentMethod = await t.stripe.paymentMethods.retrieve('pm_card_visa');
    expect(visa.card?.brand).toBe('visa');
    const created = await t.stripe.paymentMethods.create({ type: 'card', card: { number: '5555555555554444', exp_month: 1, exp_year: 2040, cvc: '123' } } as Stripe.PaymentMethodCreateParams);
    expect(created.id).toMatch(/^pm_/);
    const fetched = await t.stripe.paymentMethods.retrieve(created.id);
    expect(fetched.card?.brand).toBe('mastercard');
  });
});

describe('3D Secure', () => {
  for (const token of ['pm_card_authenticationRequired', 'pm_card_threeDSecure2Required']) {
    it(`${token}: requires_action, completed by control`, async () => {
      const pi = await t.stripe.paymentIntents.create({ amount: 3000, currency: 'usd', payment_method: token, confirm: true, return_url: 'https://shop.example/return' });
      expect(pi.status).toBe('requires_action');
      expect(pi.next_action?.type).toBe('redirect_to_url');
      expect(pi.next_action?.redirect_to_url?.return_url).toBe('https://shop.example/return');
      expect(pi.next_action?.redirect_to_url?.url).toBe(`${t.sim.url}/_sim/3ds/${pi.id}`);
      const done = await t.sim.control.completeThreeDSecure(pi.id);
      expect(done.status).toBe('succeeded');
      const charge = await t.stripe.charges.retrieve(String(done.latest_charge));
      expect(charge.payment_method_details?.card?.three_d_secure?.result).toBe('authenticated');
    });
  }

  it('failing authentication sends the intent back to requires_payment_method', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 3000, currency: 'usd', payment_method: 'pm_card_authenticationRequired', confirm: true });
    const failed = await t.sim.control.failThreeDSecure(pi.id);
    expect(failed.status).toBe('requires_payment_method');
    const fetched = await t.stripe.paymentIntents.retrieve(pi.id);
    expect(fetched.last_payment_error?.code).toBe('payment_intent_authentication_failure');
  });

  it('the challenge page has two buttons and redirects to return_url', async () => {
    const pi = await t.stripe.paymentIntents.create({
      amount: 3000,
      currency: 'usd',
      confirm: true,
      capture_method: 'manual',
      return_url: 'https://shop.example/done',
      payment_method_data: { type: 'card', card: { number: '4000002760003184', exp_month: 12, exp_year: 2034 } } as Stripe.PaymentIntentCreateParams.PaymentMethodData,
    });
    expect(pi.status).toBe('requires_action');
    const url = pi.next_action!.redirect_to_url!.url!;
    const html = await (await fetch(url)).text();
    expect(html).toContain('Complete authentication');
    expect(html).toContain('Fail authentication');
    const answer = await fetch(url, { method: 'POST', body: new URLSearchParams({ result: 'complete' }), redirect: 'manual' });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toContain(`https://shop.example/done?payment_intent=${pi.id}`);
    const after = await t.stripe.paymentIntents.retrieve(pi.id);
    expect(after.status).toBe('requires_capture');
  });

  it('4000002500003155 requires authentication; the page can fail it without return_url', async () => {
    const pi = await t.stripe.paymentIntents.create({
      amount: 3000,
      currency: 'usd',
      confirm: true,
      payment_method_data: { type: 'card', card: { number: '4000002500003155', exp_month: 12, exp_year: 2034 } } as Stripe.PaymentIntentCreateParams.PaymentMethodData,
    });
    const answer = await fetch(pi.next_action!.redirect_to_url!.url!, { method: 'POST', body: new URLSearchParams({ result: 'fail' }) });
    expect(await answer.text()).toContain('requires_payment_method');
  });

  it('the challenge page and the receipt show a yen amount in yen, which has no minor unit', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 1000, currency: 'jpy', payment_method: 'pm_card_authenticationRequired', confirm: true });
    const challenge = await (await fetch(pi.next_action!.redirect_to_url!.url!)).text();
    expect(challenge).toContain('¥1,000');
    expect(challenge).not.toContain('10.00');
    const done = await t.sim.control.completeThreeDSecure(pi.id);
    const charge = await t.stripe.charges.retrieve(String(done.latest_charge));
    const receipt = await (await fetch(String(charge.receipt_url))).text();
    expect(receipt).toContain('¥1,000, succeeded; refunded ¥0.');
  });
});

describe('capture and cancel', () => {
  it('captures a manual intent in full', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 5000, currency: 'usd', capture_method: 'manual', payment_method: 'pm_card_visa', confirm: true });
    expect(pi.status).toBe('requires_capture');
    expect(pi.amount_capturable).toBe(5000);
    const uncaptured = await t.stripe.charges.retrieve(String(pi.latest_charge));
    expect(uncaptured.captured).toBe(false);
    const captured = await t.stripe.paymentIntents.capture(pi.id);
    expect(captured.status).toBe('succeeded');
    expect(captured.amount_received).toBe(5000);
    const charge = await t.stripe.charges.retrieve(String(captured.latest_charge));
    expect(charge.captured).toBe(true);
    expect(charge.amount_captured).toBe(5000);
  });

  it('captures part of a manual intent', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 5000, currency: 'usd', capture_method: 'manual', payment_method: 'pm_card_visa', confirm: true });
    const tooMuch = await invalidRequest(t.stripe.paymentIntents.capture(pi.id, { amount_to_capture: 6000 }));
    expect(tooMuch.param).toBe('amount_to_capture');
    const captured = await t.stripe.paymentIntents.capture(pi.id, { amount_to_capture: 3000 });
    expect(captured.amount_received).toBe(3000);
    const charge = await t.stripe.charges.retrieve(String(captured.latest_charge));
    expect(charge.amount_captured).toBe(3000);
    expect(charge.amount_refunded).toBe(2000);
  });

  it('refuses to capture an intent that is not requires_capture', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 5000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
    const error = await invalidRequest(t.stripe.paymentIntents.capture(pi.id));
    expect(error.code).toBe('payment_intent_unexpected_state');
  });

  it('cancels, and refuses to cancel twice', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 5000, currency: 'usd', capture_method: 'manual', payment_method: 'pm_card_visa', confirm: true });
    const canceled = await t.stripe.paymentIntents.cancel(pi.id, { cancellation_reason: 'requested_by_customer' });
    expect(canceled.status).toBe('canceled');
    expect(canceled.cancellation_reason).toBe('requested_by_customer');
    const charge = await t.stripe.charges.retrieve(String(pi.latest_charge));
    expect(charge.refunded).toBe(true);
    const error = await invalidRequest(t.stripe.paymentIntents.cancel(pi.id));
    expect(error.code).toBe('payment_intent_unexpected_state');
  });
});

describe('idempotency', () => {
  it('replays the stored response for the same key and params', async () => {
    const key = `key-${Date.now()}`;
    const first = await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd' }, { idempotencyKey: key });
    const second = await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd' }, { idempotencyKey: key });
    expect(second.id).toBe(first.id);
    expect(second.lastResponse.headers['idempotent-replayed']).toBe('true');
  });

  it('replays a decline too', async () => {
    const key = `decline-${Date.now()}`;
    const params = { amount: 1000, currency: 'usd', payment_method: 'pm_card_chargeDeclined', confirm: true };
    const first = await cardError(t.stripe.paymentIntents.create(params, { idempotencyKey: key }));
    const second = await cardError(t.stripe.paymentIntents.create(params, { idempotencyKey: key }));
    expect(second.payment_intent?.id).toBe(first.payment_intent?.id);
    expect(second.headers?.['idempotent-replayed']).toBe('true');
  });

  it('refuses the same key with different params', async () => {
    const key = `mismatch-${Date.now()}`;
    await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd' }, { idempotencyKey: key });
    const error = await t.stripe.paymentIntents.create({ amount: 2000, currency: 'usd' }, { idempotencyKey: key }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect((error as Stripe.errors.StripeError).statusCode).toBe(400);
  });

  it('creates one object for concurrent duplicates', async () => {
    const key = `concurrent-${Date.now()}`;
    const results = await Promise.all(
      Array.from({ length: 8 }, () => t.stripe.paymentIntents.create({ amount: 1234, currency: 'usd', metadata: { k: key } }, { idempotencyKey: key })),
    );
    expect(new Set(results.map((pi) => pi.id)).size).toBe(1);
  });

  it('scopes keys by mode', async () => {
    const key = `mode-${Date.now()}`;
    const test = await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd' }, { idempotencyKey: key });
    const live = await t.live.paymentIntents.create({ amount: 1000, currency: 'usd' }, { idempotencyKey: key });
    expect(live.id).not.toBe(test.id);
  });
});

describe('client-side confirmation with a publishable key', () => {
  it('confirms and retrieves with the client_secret', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 1800, currency: 'usd' });
    const browser = t.client(t.sim.keys.publishableTest);
    const fetched = await browser.paymentIntents.retrieve(pi.id, { client_secret: pi.client_secret! } as Stripe.PaymentIntentRetrieveParams);
    expect(fetched.id).toBe(pi.id);
    const confirmed = await browser.paymentIntents.confirm(pi.id, { payment_method: 'pm_card_visa', client_secret: pi.client_secret! } as Stripe.PaymentIntentConfirmParams);
    expect(confirmed.status).toBe('succeeded');
  });

  it('answers a browser preflight and allows any origin, as api.stripe.com does', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 1800, currency: 'usd' });
    const preflight = await fetch(`${t.sim.url}/v1/payment_intents/${pi.id}/confirm`, {
      method: 'OPTIONS',
      headers: { origin: 'http://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    const form = new URLSearchParams({ client_secret: pi.client_secret!, 'payment_method_data[type]': 'card', 'payment_method_data[card][number]': '4242424242424242', 'payment_method_data[card][exp_month]': '12', 'payment_method_data[card][exp_year]': '2040', 'payment_method_data[card][cvc]': '123' });
    const confirmed = await fetch(`${t.sim.url}/v1/payment_intents/${pi.id}/confirm`, {
      method: 'POST',
      headers: { origin: 'http://shop.example', authorization: `Bearer ${t.sim.keys.publishableTest}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    expect(confirmed.headers.get('access-control-allow-origin')).toBe('*');
    const body = (await confirmed.json()) as { status?: string };
    expect(body.status, JSON.stringify(body)).toBe('succeeded');
  });

  it('refuses without the client_secret and with a wrong one', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 1800, currency: 'usd' });
    const browser = t.client(t.sim.keys.publishableTest);
    const refused = await browser.paymentIntents.confirm(pi.id, { payment_method: 'pm_card_visa' }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
    const wrong = await invalidRequest(browser.paymentIntents.confirm(pi.id, { payment_method: 'pm_card_visa', client_secret: 'pi_x_secret_y' } as Stripe.PaymentIntentConfirmParams));
    expect(wrong.param).toBe('client_secret');
    const refusedRetrieve = await browser.paymentIntents.retrieve(pi.id).catch((e: unknown) => e);
    expect(refusedRetrieve).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
  });
});

describe('connected accounts', () => {
  it('creates a verified account whose requested capabilities become active, except ACH', async () => {
    const verified = verifiedAccountParams();
    const account: Stripe.Account = await t.stripe.accounts.create({
      ...verified,
      email: 'shop@example.com',
      business_profile: { ...verified.business_profile, name: 'Corner Shop', mcc: '5812' },
      capabilities: { card_payments: { requested: true }, transfers: { requested: true }, us_bank_account_ach_payments: { requested: true } },
      metadata: { shop: '1' },
    });
    expect(account.id).toMatch(/^acct_/);
    expect(account.capabilities?.card_payments).toBe('active');
    expect(account.capabilities?.transfers).toBe('active');
    expect(account.capabilities?.us_bank_account_ach_payments).toBe('pending');
    expect(account.charges_enabled).toBe(true);
    const fetched = await t.stripe.accounts.retrieve(account.id);
    expect(fetched.email).toBe('shop@example.com');
    expect(fetched.business_profile?.name).toBe('Corner Shop');
    const capabilities = await t.stripe.accounts.listCapabilities(account.id);
    expect(capabilities.data.map((c) => c.id).sort()).toEqual(['card_payments', 'transfers', 'us_bank_account_ach_payments']);
    const ach: Stripe.Capability = await t.stripe.accounts.retrieveCapability(account.id, 'us_bank_account_ach_payments');
    expect(ach.status).toBe('pending');
    const activated = await t.sim.control.setCapability(account.id, 'us_bank_account_ach_payments', 'active');
    expect(activated.status).toBe('active');
    const link = await t.stripe.accounts.updateCapability(account.id, 'link_payments', { requested: true });
    expect(link.status).toBe('active');
  });

  it('scopes objects to the Stripe-Account header', async () => {
    const account = await t.stripe.accounts.create(verifiedAccountParams());
    const direct = await t.stripe.paymentIntents.create(
      { amount: 4000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, application_fee_amount: 300 },
      { stripeAccount: account.id },
    );
    expect(direct.status).toBe('succeeded');
    const seen = await t.stripe.paymentIntents.retrieve(direct.id, {}, { stripeAccount: account.id });
    expect(seen.id).toBe(direct.id);
    const platform = await invalidRequest(t.stripe.paymentIntents.retrieve(direct.id));
    expect(platform.code).toBe('resource_missing');
    const charge = await t.stripe.charges.retrieve(String(direct.latest_charge), {}, { stripeAccount: account.id });
    const fee: Stripe.ApplicationFee = await t.stripe.applicationFees.retrieve(String(charge.application_fee));
    expect(fee.amount).toBe(300);
    expect(fee.account).toBe(account.id);
    const unknown = await t.stripe.paymentIntents.list({}, { stripeAccount: 'acct_unknown' }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(Stripe.errors.StripePermissionError);
  });

  it('destination charges create a transfer and an application fee', async () => {
    const account = await t.stripe.accounts.create(verifiedAccountParams());
    const pi = await t.stripe.paymentIntents.create({
      amount: 10_000,
      currency: 'usd',
      payment_method: 'pm_card_visa',
      confirm: true,
      application_fee_amount: 500,
      transfer_data: { destination: account.id },
      on_behalf_of: account.id,
      expand: ['latest_charge'],
    });
    const charge = pi.latest_charge as Stripe.Charge;
    expect(charge.transfer).toMatch(/^tr_/);
    expect(charge.application_fee).toMatch(/^fee_/);
    const transfer: Stripe.Transfer = await t.stripe.transfers.retrieve(String(charge.transfer));
    expect(transfer.amount).toBe(9_500);
    expect(transfer.destination).toBe(account.id);
    const bad = await invalidRequest(
      t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd', transfer_data: { destination: 'acct_missing' } }),
    );
    expect(bad.param).toBe('transfer_data[destination]');
  });
});
