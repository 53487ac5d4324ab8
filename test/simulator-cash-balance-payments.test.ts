import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestSimulator, rejected, startTestSimulator } from '../simulator/testing/harness.js';

/**
 * PaymentIntents paid from a customer's cash balance (`customer_balance`) through the official
 * `stripe` package: funded by Stripe's test helper, paid at once when the balance covers them,
 * otherwise waiting with bank transfer instructions until `apply_customer_balance` or automatic
 * reconciliation funds them; and what Stripe refuses on the way.
 */

let t: TestSimulator;

beforeAll(async () => {
  t = await startTestSimulator();
});
afterAll(async () => {
  await t.close();
});

async function customer(mode?: 'manual'): Promise<string> {
  const made = await t.stripe.customers.create({ email: 'cash@example.com', name: 'Jenny Rosen' });
  if (mode) await t.stripe.customers.updateCashBalance(made.id, { settings: { reconciliation_mode: mode } });
  return made.id;
}

function fromBalance(customerId: string, amount: number, options: { fundRest?: boolean; confirm?: boolean } = {}): Promise<Stripe.PaymentIntent> {
  return t.stripe.paymentIntents.create({
    amount,
    currency: 'usd',
    customer: customerId,
    allowed_payment_method_types: ['customer_balance'],
    payment_method_data: { type: 'customer_balance' },
    ...(options.fundRest === false ? {} : { payment_method_options: { customer_balance: { funding_type: 'bank_transfer', bank_transfer: { type: 'us_bank_transfer' } } } }),
    confirm: options.confirm ?? true,
  });
}

const remaining = (pi: Stripe.PaymentIntent) => pi.next_action?.display_bank_transfer_instructions?.amount_remaining;

describe('a PaymentIntent paid from a cash balance', () => {
  it('succeeds at once when the balance covers it, with its charge, fee and cash balance transactions', async () => {
    const cus = await customer();
    const funded = await t.stripe.testHelpers.customers.fundCashBalance(cus, { amount: 5000, currency: 'usd', reference: 'Order 7' });
    expect(funded).toMatchObject({ object: 'customer_cash_balance_transaction', type: 'funded', customer: cus, currency: 'usd', net_amount: 5000, ending_balance: 5000 });
    expect(funded.funded?.bank_transfer).toMatchObject({ type: 'us_bank_transfer', reference: 'Order 7' });

    const pi = await fromBalance(cus, 2000);
    expect(pi).toMatchObject({ status: 'succeeded', amount_received: 2000, next_action: null });
    const charge = await t.stripe.charges.retrieve(String(pi.latest_charge), { expand: ['balance_transaction'] });
    expect(charge).toMatchObject({ status: 'succeeded', captured: true, amount: 2000, payment_method_details: { type: 'customer_balance' } });
    // Stripe's US bank transfer fee: 0.5%, capped at $5.
    expect((charge.balance_transaction as Stripe.BalanceTransaction).fee).toBe(10);

    expect((await t.stripe.customers.retrieveCashBalance(cus)).available).toEqual({ usd: 3000 });
    const movements = await t.stripe.customers.listCashBalanceTransactions(cus);
    expect(movements.data.map((m) => [m.type, m.net_amount, m.ending_balance])).toEqual([
      ['applied_to_payment', -2000, 3000],
      ['funded', 5000, 5000],
    ]);
    expect(movements.data[0]?.applied_to_payment?.payment_intent).toBe(pi.id);
    expect((await t.stripe.customers.retrieveCashBalanceTransaction(cus, funded.id)).id).toBe(funded.id);
  });

  it('waits with the bank transfer instructions when the balance falls short, and apply_customer_balance funds it', async () => {
    const cus = await customer('manual');
    const pi = await fromBalance(cus, 3000);
    expect(pi.status).toBe('requires_action');
    expect(pi.next_action).toMatchObject({ type: 'display_bank_transfer_instructions', display_bank_transfer_instructions: { amount_remaining: 3000, currency: 'usd', type: 'us_bank_transfer' } });
    const aba = pi.next_action?.display_bank_transfer_instructions?.financial_addresses?.find((a) => a.type === 'aba');
    expect(aba?.aba?.routing_number).toBe('110000000');

    // Nothing to apply yet: it keeps waiting.
    expect(remaining(await t.stripe.paymentIntents.applyCustomerBalance(pi.id))).toBe(3000);
    // Manual reconciliation: funds that arrive wait in the balance.
    await t.stripe.testHelpers.customers.fundCashBalance(cus, { amount: 1000, currency: 'usd' });
    expect(remaining(await t.stripe.paymentIntents.retrieve(pi.id))).toBe(3000);

    expect(await rejected(t.stripe.paymentIntents.applyCustomerBalance(pi.id, { amount: 2000 }))).toMatchObject({ statusCode: 400, code: 'balance_insufficient', param: 'amount' });
    const partly = await t.stripe.paymentIntents.applyCustomerBalance(pi.id);
    expect(partly).toMatchObject({ status: 'requires_action', amount_received: 0 });
    expect(remaining(partly)).toBe(2000);

    await t.stripe.testHelpers.customers.fundCashBalance(cus, { amount: 5000, currency: 'usd' });
    expect(await rejected(t.stripe.paymentIntents.applyCustomerBalance(pi.id, { amount: 2500 }))).toMatchObject({ statusCode: 400, param: 'amount' });
    expect(await rejected(t.stripe.paymentIntents.applyCustomerBalance(pi.id, { amount: 2000, currency: 'eur' }))).toMatchObject({ statusCode: 400, param: 'currency' });
    const paid = await t.stripe.paymentIntents.applyCustomerBalance(pi.id, { amount: 2000, currency: 'usd' });
    expect(paid).toMatchObject({ status: 'succeeded', amount_received: 3000, next_action: null });
    expect((await t.stripe.customers.retrieveCashBalance(cus)).available).toEqual({ usd: 3000 });
    expect(await rejected(t.stripe.paymentIntents.applyCustomerBalance(pi.id))).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' });
  });

  it('in automatic reconciliation, is paid by funds as they arrive, oldest first; canceled, gives back what it took', async () => {
    const cus = await customer();
    const first = await fromBalance(cus, 1000);
    const second = await fromBalance(cus, 1500);
    expect([first.status, second.status]).toEqual(['requires_action', 'requires_action']);

    await t.stripe.testHelpers.customers.fundCashBalance(cus, { amount: 2000, currency: 'usd' });
    expect((await t.stripe.paymentIntents.retrieve(first.id)).status).toBe('succeeded');
    const waiting = await t.stripe.paymentIntents.retrieve(second.id);
    expect(waiting.status).toBe('requires_action');
    expect(remaining(waiting)).toBe(500);
    expect((await t.stripe.customers.retrieveCashBalance(cus)).available).toEqual({ usd: 0 });

    const canceled = await t.stripe.paymentIntents.cancel(second.id);
    expect(canceled.status).toBe('canceled');
    expect((await t.stripe.customers.retrieveCashBalance(cus)).available).toEqual({ usd: 1000 });
    const [latest] = (await t.stripe.customers.listCashBalanceTransactions(cus, { limit: 1 })).data;
    expect(latest).toMatchObject({ type: 'unapplied_from_payment', net_amount: 1000, unapplied_from_payment: { payment_intent: second.id } });

    // The balance left applies to the next payment as it is confirmed.
    const third = await fromBalance(cus, 1800);
    expect(remaining(third)).toBe(800);
  });
});

describe('refused as Stripe refuses them', () => {
  it('without funding_type a short balance fails the attempt; no customer, manual capture or another currency are refused', async () => {
    const cus = await customer();
    const failed = await fromBalance(cus, 2000, { fundRest: false });
    expect(failed).toMatchObject({ status: 'requires_payment_method', payment_method: null, last_payment_error: { payment_method_type: 'customer_balance' } });

    const base = { allowed_payment_method_types: ['customer_balance'], payment_method_data: { type: 'customer_balance' as const }, confirm: true };
    expect(await rejected(t.stripe.paymentIntents.create({ ...base, amount: 2000, currency: 'usd' }))).toMatchObject({ statusCode: 400, param: 'customer' });
    expect(await rejected(t.stripe.paymentIntents.create({ ...base, amount: 2000, currency: 'usd', customer: cus, capture_method: 'manual' }))).toMatchObject({ statusCode: 400, param: 'capture_method' });
    expect(await rejected(t.stripe.paymentIntents.create({ ...base, amount: 2000, currency: 'eur', customer: cus }))).toMatchObject({ statusCode: 400, param: 'currency' });
    expect(await rejected(t.stripe.testHelpers.customers.fundCashBalance(cus, { amount: 30, currency: 'eur' }))).toMatchObject({ statusCode: 400, param: 'currency' });
  });

  it('apply_customer_balance on an intent that does not wait for funds', async () => {
    const cus = await customer();
    const unconfirmed = await fromBalance(cus, 2000, { confirm: false });
    expect(await rejected(t.stripe.paymentIntents.applyCustomerBalance(unconfirmed.id))).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' });
    const card = await t.stripe.paymentIntents.create({ amount: 2000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
    const error = await rejected(t.stripe.paymentIntents.applyCustomerBalance(card.id));
    expect(error).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' });
    expect(error.message).toContain('customer_balance');
  });
});
