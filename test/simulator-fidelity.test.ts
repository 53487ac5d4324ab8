import { readFileSync } from 'node:fs';
import Stripe from 'stripe';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TestSimulator, eventually, startTestSimulator } from '../simulator/testing/harness.js';
import { verifiedAccountParams } from '../simulator/testing/onboarding.js';

/**
 * Shape fidelity: every object the simulator returns carries every top-level key that Stripe's own
 * example of that type carries (fixtures from Stripe's OpenAPI repository, MIT), and is typed by the
 * SDK as that type.
 */

const fixtures = (
  JSON.parse(readFileSync(new URL('../simulator/testing/stripe-fixtures.json', import.meta.url), 'utf8')) as {
    resources: Record<string, Record<string, unknown>>;
  }
).resources;

let t: TestSimulator;
const seen = new Map<string, number>();

beforeAll(async () => {
  t = await startTestSimulator({ authorizationDelayMs: 20, achSettlementDelayMs: 20 });
});
afterAll(async () => {
  await t.close();
});

function fixtureKey(object: Record<string, unknown>): string {
  const type = String(object.object);
  return object.deleted === true ? `deleted_${type}` : type;
}

/** Asserts the key set, and walks nested Stripe objects and lists the same way. */
function check(value: unknown, where: string): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => check(item, `${where}[${index}]`));
    return;
  }
  if (value === null || typeof value !== 'object') return;
  const object = value as Record<string, unknown>;
  if (object.object === 'list') {
    expect(Object.keys(object).sort(), `${where} list keys`).toEqual(expect.arrayContaining(['data', 'has_more', 'object', 'url']));
    check(object.data, `${where}.data`);
    return;
  }
  if (typeof object.object === 'string') {
    const key = fixtureKey(object);
    const fixture = fixtures[key];
    if (fixture) {
      const missing = Object.keys(fixture).filter((k) => !(k in object));
      expect(missing, `${where} (${key}) is missing keys`).toEqual([]);
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
  }
  for (const [field, nested] of Object.entries(object)) {
    if (field === 'metadata') continue;
    check(nested, `${where}.${field}`);
  }
}

it('returns objects with every key of Stripe fixtures, for every type', async () => {
  const account: Stripe.Account = await t.stripe.accounts.create({
    ...verifiedAccountParams(),
    capabilities: { card_payments: { requested: true }, transfers: { requested: true }, us_bank_account_ach_payments: { requested: true } },
  });
  check(account, 'account');
  const express = await t.stripe.accounts.create({ type: 'express', country: 'US', business_type: 'individual', capabilities: { card_payments: { requested: true } } });
  check(express, 'account (requirements due)');
  const link: Stripe.AccountLink = await t.stripe.accountLinks.create({ account: express.id, type: 'account_onboarding', refresh_url: 'http://127.0.0.1:9/refresh', return_url: 'http://127.0.0.1:9/return' });
  check(link, 'account_link');
  const capability: Stripe.Capability = await t.stripe.accounts.retrieveCapability(account.id, 'card_payments');
  check(capability, 'capability');
  check(await t.stripe.accounts.listCapabilities(account.id), 'capabilities');
  check(await t.stripe.accounts.list(), 'accounts');

  const endpoint: Stripe.WebhookEndpoint = await t.stripe.webhookEndpoints.create({ url: 'http://127.0.0.1:9/hooks', enabled_events: ['*'], connect: false });
  check(endpoint, 'webhook_endpoint');
  check(await t.stripe.webhookEndpoints.list(), 'webhook_endpoints');
  await t.stripe.webhookEndpoints.update(endpoint.id, { disabled: true });

  const created: Stripe.PaymentIntent = await t.stripe.paymentIntents.create({ amount: 10_000, currency: 'usd' });
  check(created, 'payment_intent (created)');
  const pi: Stripe.PaymentIntent = await t.stripe.paymentIntents.create({
    amount: 10_000,
    currency: 'usd',
    payment_method: 'pm_card_visa',
    confirm: true,
    application_fee_amount: 700,
    transfer_data: { destination: account.id },
    expand: ['latest_charge', 'payment_method'],
  });
  check(pi, 'payment_intent (expanded)');
  const charge: Stripe.Charge = await t.stripe.charges.retrieve(String((pi.latest_charge as Stripe.Charge).id));
  check(charge, 'charge');
  check(await t.stripe.charges.list({ payment_intent: pi.id }), 'charges');
  const refund: Stripe.Refund = await t.stripe.refunds.create({ payment_intent: pi.id, amount: 1_000, reverse_transfer: true, refund_application_fee: true });
  check(refund, 'refund');
  check(await t.stripe.refunds.list({ payment_intent: pi.id }), 'refunds');
  const transfer: Stripe.Transfer = await t.stripe.transfers.retrieve(String(charge.transfer));
  check(transfer, 'transfer');
  const fee: Stripe.ApplicationFee = await t.stripe.applicationFees.retrieve(String(charge.application_fee));
  check(fee, 'application_fee');

  const declined = await t.stripe.paymentIntents.create({ amount: 1_000, currency: 'usd', payment_method: 'pm_card_chargeDeclined', confirm: true }).catch((e: unknown) => e);
  expect(declined).toBeInstanceOf(Stripe.errors.StripeCardError);
  check((declined as Stripe.errors.StripeCardError).payment_intent, 'card error payment_intent');
  check((declined as Stripe.errors.StripeCardError).payment_method, 'card error payment_method');

  const card: Stripe.PaymentMethod = await t.stripe.paymentMethods.create({ type: 'card', card: { number: '4242424242424242', exp_month: 4, exp_year: 2040, cvc: '314' } } as Stripe.PaymentMethodCreateParams);
  check(card, 'payment_method (card)');
  check(await t.stripe.paymentMethods.retrieve('pm_card_amex'), 'payment_method (token)');

  const ach = await t.stripe.paymentIntents.create({ amount: 5_000, currency: 'usd', allowed_payment_method_types: ['us_bank_account'], payment_method: 'pm_usBankAccount_success', confirm: true, expand: ['payment_method'] });
  check(ach, 'payment_intent (ach)');
  await eventually(async () => ((await t.stripe.paymentIntents.retrieve(ach.id)).status === 'succeeded' ? true : undefined), 'ACH');

  const manual = await t.stripe.paymentIntents.create({ amount: 3_000, currency: 'usd', capture_method: 'manual', payment_method: 'pm_card_mastercard', confirm: true });
  check(await t.stripe.paymentIntents.capture(manual.id, { amount_to_capture: 2_000 }), 'payment_intent (captured)');
  const toCancel = await t.stripe.paymentIntents.create({ amount: 3_000, currency: 'usd' });
  check(await t.stripe.paymentIntents.cancel(toCancel.id), 'payment_intent (canceled)');
  const threeDs = await t.stripe.paymentIntents.create({ amount: 3_000, currency: 'usd', payment_method: 'pm_card_threeDSecure2Required', confirm: true });
  check(threeDs, 'payment_intent (requires_action)');
  check(await t.stripe.paymentIntents.list({ limit: 100 }), 'payment_intents');

  const location: Stripe.Terminal.Location = await t.stripe.terminal.locations.create({ display_name: 'Shop', address: { country: 'US', line1: '1 Main St', city: 'Springfield', postal_code: '62701', state: 'IL' } });
  check(location, 'terminal.location');
  check(await t.stripe.terminal.locations.list(), 'terminal.locations');
  const token: Stripe.Terminal.ConnectionToken = await t.stripe.terminal.connectionTokens.create();
  check(token, 'terminal.connection_token');
  const reader: Stripe.Terminal.Reader = await t.stripe.terminal.readers.create({ registration_code: 'simulated-wpe', location: location.id });
  check(reader, 'terminal.reader');
  const cp = await t.stripe.paymentIntents.create({ amount: 1_000, currency: 'usd', allowed_payment_method_types: ['card_present'] });
  check(await t.stripe.terminal.readers.processPaymentIntent(reader.id, { payment_intent: cp.id }), 'terminal.reader (in_progress)');
  check(await t.stripe.testHelpers.terminal.readers.presentPaymentMethod(reader.id, { amount_tip: 100 }), 'terminal.reader (presented)');
  const cpDone = await eventually(async () => {
    const p = await t.stripe.paymentIntents.retrieve(cp.id, { expand: ['latest_charge', 'payment_method'] });
    return p.status === 'succeeded' ? p : undefined;
  }, 'card-present');
  check(cpDone, 'payment_intent (card_present)');
  check(await t.stripe.terminal.readers.list(), 'terminal.readers');

  const deletedReader: Stripe.Terminal.DeletedReader = await t.stripe.terminal.readers.del(reader.id);
  check(deletedReader, 'deleted reader');
  const deletedLocation: Stripe.Terminal.DeletedLocation = await t.stripe.terminal.locations.del(location.id);
  check(deletedLocation, 'deleted location');
  const deletedEndpoint: Stripe.DeletedWebhookEndpoint = await t.stripe.webhookEndpoints.del(endpoint.id);
  check(deletedEndpoint, 'deleted endpoint');

  const customer: Stripe.Customer = await t.stripe.customers.create({ name: 'Jenny Rosen', email: 'jenny@example.com' });
  check(customer, 'customer');
  check(await t.stripe.customers.list(), 'customers');
  const disputed = await t.stripe.paymentIntents.create({ amount: 4_000, currency: 'usd', payment_method: 'pm_card_createDispute', confirm: true, customer: customer.id });
  await t.stripe.paymentIntents.create({ amount: 6_000, currency: 'usd', payment_method: 'pm_card_bypassPending', confirm: true, transfer_data: { destination: account.id } });
  const payout: Stripe.Payout = await t.stripe.payouts.create({ amount: 1_000, currency: 'usd' }, { stripeAccount: account.id });
  check(payout, 'payout');
  // Opens the dispute and moves the payout and every pending balance transaction to its end.
  await t.sim.control.advanceTimers();
  const dispute: Stripe.Dispute = (await t.stripe.disputes.list({ payment_intent: disputed.id })).data[0]!;
  check(dispute, 'dispute');
  check(await t.stripe.disputes.update(dispute.id, { evidence: { uncategorized_text: 'winning_evidence' } }), 'dispute (submitted)');
  check(await t.stripe.payouts.list({}, { stripeAccount: account.id }), 'payouts');
  const balance: Stripe.Balance = await t.stripe.balance.retrieve();
  check(balance, 'balance');
  check(await t.stripe.balance.retrieve({}, { stripeAccount: account.id }), 'balance (connected)');
  check(await t.stripe.balanceTransactions.list({ limit: 100 }), 'balance_transactions');
  const deletedCustomer: Stripe.DeletedCustomer = await t.stripe.customers.del(customer.id);
  check(deletedCustomer, 'deleted customer');

  // Every event, and every object carried in an event.
  const events: Stripe.Event[] = [];
  for await (const event of t.stripe.events.list({ limit: 100 })) events.push(event);
  for await (const event of t.stripe.events.list({ limit: 100 }, { stripeAccount: account.id })) events.push(event);
  expect(events.length).toBeGreaterThan(20);
  for (const event of events) check(event, `event ${event.type}`);
  const one: Stripe.Event = await t.stripe.events.retrieve(events[0]!.id);
  check(one, 'event (retrieved)');

  const covered = [...seen.keys()].sort();
  expect(covered).toEqual(
    [
      'account',
      'account_link',
      'application_fee',
      'balance',
      'balance_transaction',
      'capability',
      'charge',
      'customer',
      'deleted_customer',
      'deleted_terminal.location',
      'deleted_terminal.reader',
      'deleted_webhook_endpoint',
      'dispute',
      'event',
      'fee_refund',
      'payment_intent',
      'payment_method',
      'payout',
      'person',
      'refund',
      'terminal.connection_token',
      'terminal.location',
      'terminal.reader',
      'transfer',
      'transfer_reversal',
      'webhook_endpoint',
    ].sort(),
  );
});
