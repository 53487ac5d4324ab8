import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestSimulator, rejected, startTestSimulator } from '../simulator/testing/harness.js';
import { verifiedAccountParams } from '../simulator/testing/onboarding.js';

/**
 * The operations Stripe documents on the resources the simulator claims, through the official
 * `stripe` package: each answers as on Stripe, or is refused as Stripe refuses it in test mode.
 */

let t: TestSimulator;
let account: Stripe.Account;

beforeAll(async () => {
  t = await startTestSimulator();
  account = await t.stripe.accounts.create(verifiedAccountParams());
});
afterAll(async () => {
  await t.close();
});

async function paid(params: Partial<Stripe.PaymentIntentCreateParams> = {}): Promise<Stripe.PaymentIntent> {
  return t.stripe.paymentIntents.create({ amount: 2000, currency: 'usd', payment_method: 'pm_card_bypassPending', confirm: true, ...params });
}

describe('headers', () => {
  it('answers with the pinned or requested Stripe-Version and echoes the Idempotency-Key', async () => {
    const customer = await t.stripe.customers.create({ email: 'a@example.com' }, { idempotencyKey: 'key-headers-1' });
    expect(customer.lastResponse.apiVersion).toBe(Stripe.API_VERSION);
    expect(customer.lastResponse.idempotencyKey).toBe('key-headers-1');
    const older = await t.stripe.customers.retrieve(customer.id, {}, { apiVersion: '2024-06-20' });
    expect(older.lastResponse.apiVersion).toBe('2024-06-20');
  });
});

describe('search', () => {
  it('finds by email, metadata, status, amount and created with AND / OR, and pages with next_page', async () => {
    const tag = `s${Date.now()}`;
    const a = await t.stripe.customers.create({ email: `${tag}-a@example.com`, metadata: { tag } });
    const b = await t.stripe.customers.create({ email: `${tag}-b@example.com`, metadata: { tag } });
    const found = await t.stripe.customers.search({ query: `email:'${tag}-a@example.com'` });
    expect(found.data.map((c) => c.id)).toEqual([a.id]);
    const either = await t.stripe.customers.search({ query: `email:'${tag}-a@example.com' OR email:'${tag}-b@example.com'` });
    expect(either.data.map((c) => c.id)).toEqual([b.id, a.id]);
    const first = await t.stripe.customers.search({ query: `metadata['tag']:'${tag}'`, limit: 1 });
    expect(first.data.map((c) => c.id)).toEqual([b.id]);
    expect(first.has_more).toBe(true);
    const second = await t.stripe.customers.search({ query: `metadata['tag']:'${tag}'`, limit: 1, page: first.next_page! });
    expect(second.data.map((c) => c.id)).toEqual([a.id]);
    expect(second.next_page).toBeNull();

    const pi = await paid({ amount: 4321, metadata: { tag } });
    const intents = await t.stripe.paymentIntents.search({ query: `status:'succeeded' AND metadata['tag']:'${tag}' AND amount>4000 AND created>=${pi.created}` });
    expect(intents.data.map((p) => p.id)).toEqual([pi.id]);
    const none = await t.stripe.paymentIntents.search({ query: `status:'canceled' AND metadata['tag']:'${tag}'` });
    expect(none.data).toEqual([]);
    const charges = await t.stripe.charges.search({ query: `amount>999 AND metadata['tag']:'${tag}'` });
    expect(charges.data.map((c) => c.id)).toEqual([pi.latest_charge]);
    const byIntent = await t.stripe.charges.search({ query: `payment_intent:'${pi.id}'` });
    expect(byIntent.data.map((c) => c.id)).toEqual([pi.latest_charge]);

    expect((await rejected(t.stripe.customers.search({ query: `email:'x' AND name:'y' OR phone:'z'` }))).param).toBe('query');
    expect((await rejected(t.stripe.customers.search({ query: `colour:'red'` }))).message).toContain('unsupported search field');
  });
});

describe('PaymentIntent updates by status', () => {
  it('keeps metadata and description updatable after success and refuses the amount', async () => {
    const pi = await paid();
    const updated = await t.stripe.paymentIntents.update(pi.id, { metadata: { order: '1' }, description: 'after' });
    expect(updated.metadata).toEqual({ order: '1' });
    expect(updated.description).toBe('after');
    const error = await rejected(t.stripe.paymentIntents.update(pi.id, { amount: 3000 }));
    expect(error.code).toBe('payment_intent_unexpected_state');
    expect(error.message).toContain("This PaymentIntent's amount could not be updated because it has a status of succeeded");
  });

  it('refuses the amount of an authorised intent but not its application fee; increment_authorization raises it', async () => {
    const pi = await paid({ capture_method: 'manual', payment_method: 'pm_card_visa' });
    expect(pi.status).toBe('requires_capture');
    expect((await rejected(t.stripe.paymentIntents.update(pi.id, { amount: 2500 }))).message).toContain('requires_capture');
    const incremented = await t.stripe.paymentIntents.incrementAuthorization(pi.id, { amount: 2500 });
    expect(incremented.amount).toBe(2500);
    expect(incremented.amount_capturable).toBe(2500);
    expect((await rejected(t.stripe.paymentIntents.incrementAuthorization(pi.id, { amount: 100 }))).param).toBe('amount');
    const captured = await t.stripe.charges.capture(String(pi.latest_charge));
    expect(captured.captured).toBe(true);
    expect(captured.amount_captured).toBe(2500);
  });
});

describe('charges, refunds and PaymentMethods', () => {
  it('updates a charge and refuses to cancel a card refund, as Stripe does', async () => {
    const pi = await paid();
    const charge = await t.stripe.charges.update(String(pi.latest_charge), { metadata: { order_id: '6735' }, description: 'desk' });
    expect(charge.metadata).toEqual({ order_id: '6735' });
    expect(charge.description).toBe('desk');
    const refund = await t.stripe.refunds.create({ payment_intent: pi.id, amount: 500 });
    const error = await rejected(t.stripe.refunds.cancel(refund.id));
    expect(error.message).toContain('requires_action');
  });

  it('creates from card[token], attaches, lists, updates and detaches', async () => {
    const customer = await t.stripe.customers.create({ email: 'pm@example.com' });
    const pm = await t.stripe.paymentMethods.create({ type: 'card', card: { token: 'tok_visa' } });
    expect(pm.card?.last4).toBe('4242');
    expect((await rejected(t.stripe.paymentMethods.update(pm.id, { metadata: { a: '1' } }))).message).toContain('save this PaymentMethod to a customer');
    const attached = await t.stripe.paymentMethods.attach(pm.id, { customer: customer.id });
    expect(attached.customer).toBe(customer.id);
    const listed = await t.stripe.paymentMethods.list({ customer: customer.id, type: 'card' });
    expect(listed.data.map((p) => p.id)).toEqual([pm.id]);
    const viaCustomer = await t.stripe.customers.listPaymentMethods(customer.id, { type: 'card' });
    expect(viaCustomer.data.map((p) => p.id)).toEqual([pm.id]);
    expect((await t.stripe.paymentMethods.update(pm.id, { metadata: { a: '1' } })).metadata).toEqual({ a: '1' });
    const detached = await t.stripe.paymentMethods.detach(pm.id);
    expect(detached.customer).toBeNull();
    expect((await rejected(t.stripe.paymentMethods.attach(pm.id, { customer: customer.id }))).message).toContain('may not be used again');
    expect((await rejected(t.stripe.paymentMethods.create({ type: 'card', card: { token: 'tok_nope' } }))).code).toBe('resource_missing');
  });
});

describe('customer objects', () => {
  it('keeps tax ids, balance transactions and sources', async () => {
    const customer = await t.stripe.customers.create({ email: 'objects@example.com' });
    const taxId = await t.stripe.customers.createTaxId(customer.id, { type: 'eu_vat', value: 'DE123456789' });
    expect((await t.stripe.customers.listTaxIds(customer.id)).data.map((x) => x.id)).toEqual([taxId.id]);
    expect((await t.stripe.customers.deleteTaxId(customer.id, taxId.id)).deleted).toBe(true);
    const credit = await t.stripe.customers.createBalanceTransaction(customer.id, { amount: -500, currency: 'usd' });
    expect(credit.ending_balance).toBe(-500);
    expect((await t.stripe.customers.retrieve(customer.id)) as Stripe.Customer).toMatchObject({ balance: -500 });
    const card = await t.stripe.customers.createSource(customer.id, { source: 'tok_visa' });
    expect(card.object).toBe('card');
    const bank = await t.stripe.customers.createSource(customer.id, { source: 'btok_us_verified' });
    await rejected(t.stripe.customers.verifySource(customer.id, bank.id, { amounts: [1, 2] }));
    expect((await t.stripe.customers.verifySource(customer.id, bank.id, { amounts: [32, 45] })).status).toBe('verified');
    expect((await t.stripe.customers.listSources(customer.id, { object: 'card' })).data.map((x) => x.id)).toEqual([card.id]);
    expect((await t.stripe.customers.deleteSource(customer.id, card.id)) as { deleted?: boolean }).toMatchObject({ deleted: true });
  });
});

describe('Connect', () => {
  it('answers the platform account, or the connected one with Stripe-Account', async () => {
    const platform = await t.stripe.accounts.retrieveCurrent();
    expect(platform.object).toBe('account');
    expect(platform.id).not.toBe(account.id);
    expect((await t.stripe.accounts.retrieveCurrent()).id).toBe(platform.id);
    const connected = await t.stripe.rawRequest('GET', '/v1/account', {}, { stripeAccount: account.id });
    expect((connected as unknown as { id: string }).id).toBe(account.id);
  });

  it('transfers from the available balance, reverses, lists and updates', async () => {
    await paid({ amount: 5000 });
    const transfer = await t.stripe.transfers.create({ amount: 400, currency: 'usd', destination: account.id, transfer_group: 'ORDER_95' });
    expect(transfer.destination).toBe(account.id);
    expect((await t.stripe.transfers.list({ limit: 3 })).data[0]?.id).toBe(transfer.id);
    expect((await t.stripe.transfers.update(transfer.id, { metadata: { order_id: '6735' } })).metadata).toEqual({ order_id: '6735' });
    const reversal = await t.stripe.transfers.createReversal(transfer.id, { amount: 100 });
    expect(reversal.amount).toBe(100);
    expect((await t.stripe.transfers.listReversals(transfer.id)).data.map((r) => r.id)).toEqual([reversal.id]);
    expect((await t.stripe.transfers.retrieveReversal(transfer.id, reversal.id)).id).toBe(reversal.id);
    expect((await t.stripe.transfers.updateReversal(transfer.id, reversal.id, { metadata: { a: 'b' } })).metadata).toEqual({ a: 'b' });
    expect((await rejected(t.stripe.transfers.createReversal(transfer.id, { amount: 1000 }))).param).toBe('amount');
    const broke = await rejected(t.stripe.transfers.create({ amount: 99_999_999, currency: 'usd', destination: account.id }));
    expect(broke.code).toBe('balance_insufficient');
  });

  it('lists application fees and refunds them', async () => {
    const pi = await paid({ amount: 3000, transfer_data: { destination: account.id }, application_fee_amount: 300 });
    const fees = await t.stripe.applicationFees.list({ limit: 3 });
    const fee = fees.data.find((f) => f.charge === pi.latest_charge);
    expect(fee?.amount).toBe(300);
    const refund = await t.stripe.applicationFees.createRefund(fee!.id, { amount: 100 });
    expect(refund.amount).toBe(100);
    expect((await t.stripe.applicationFees.listRefunds(fee!.id)).data.map((r) => r.id)).toEqual([refund.id]);
    expect((await t.stripe.applicationFees.retrieveRefund(fee!.id, refund.id)).fee).toBe(fee!.id);
    expect((await t.stripe.applicationFees.updateRefund(fee!.id, refund.id, { metadata: { order_id: '6735' } })).metadata).toEqual({ order_id: '6735' });
    expect((await t.stripe.applicationFees.retrieve(fee!.id)).amount_refunded).toBe(100);
  });

  it('keeps persons, rejects, refuses login links for custom accounts, deletes', async () => {
    const other = await t.stripe.accounts.create(verifiedAccountParams());
    const person = await t.stripe.accounts.createPerson(other.id, { first_name: 'Jane', last_name: 'Diaz' });
    expect(person.first_name).toBe('Jane');
    expect((await t.stripe.accounts.updatePerson(other.id, person.id, { metadata: { order_id: '6735' } })).metadata).toEqual({ order_id: '6735' });
    expect((await t.stripe.accounts.retrievePerson(other.id, person.id)).last_name).toBe('Diaz');
    expect((await t.stripe.accounts.listPersons(other.id, { limit: 3 })).data.map((p) => p.id)).toEqual([person.id]);
    expect((await t.stripe.accounts.deletePerson(other.id, person.id)).deleted).toBe(true);
    await rejected(t.stripe.accounts.createLoginLink(other.id));
    const rejectedAccount = await t.stripe.accounts.reject(other.id, { reason: 'fraud' });
    expect(rejectedAccount.requirements?.disabled_reason).toBe('rejected.fraud');
    expect(rejectedAccount.charges_enabled).toBe(false);
    expect((await t.stripe.accounts.del(other.id)).deleted).toBe(true);
    expect((await rejected(t.stripe.accounts.retrieve(other.id))).statusCode).toBe(404);
  });

  it('updates and deletes external accounts, never the default for a currency', async () => {
    const first = String(account.external_accounts?.data[0]?.id);
    const second = await t.stripe.accounts.createExternalAccount(account.id, { external_account: 'btok_us_verified' });
    expect((await t.stripe.accounts.updateExternalAccount(account.id, second.id, { metadata: { order_id: '6735' } })).metadata).toEqual({ order_id: '6735' });
    expect((await rejected(t.stripe.accounts.deleteExternalAccount(account.id, first))).message).toContain('default bank account');
    expect((await t.stripe.accounts.deleteExternalAccount(account.id, second.id)).deleted).toBe(true);
  });
});

describe('payouts', () => {
  it('pays out the platform balance to its own bank account', async () => {
    await paid({ amount: 5000 });
    const payout = await t.stripe.payouts.create({ amount: 1100, currency: 'usd' });
    expect(payout.status).toBe('pending');
    expect((await t.stripe.payouts.retrieve(payout.id)).amount).toBe(1100);
    await t.sim.control.advanceTimers();
    expect((await t.stripe.payouts.retrieve(payout.id)).status).toBe('paid');
    expect((await rejected(t.stripe.payouts.reverse(payout.id))).message).toContain('connected accounts');
  });

  it("reverses a connected account's paid payout, and refuses a pending one", async () => {
    await paid({ amount: 5000, transfer_data: { destination: account.id } });
    const payout = await t.stripe.payouts.create({ amount: 1000, currency: 'usd' }, { stripeAccount: account.id });
    expect((await rejected(t.stripe.payouts.reverse(payout.id, {}, { stripeAccount: account.id }))).message).toContain('cancel');
    await t.sim.control.advanceTimers();
    const reversal = await t.stripe.payouts.reverse(payout.id, {}, { stripeAccount: account.id });
    expect(reversal.original_payout).toBe(payout.id);
    expect((await t.stripe.payouts.retrieve(payout.id, {}, { stripeAccount: account.id })).reversed_by).toBe(reversal.id);
  });
});
