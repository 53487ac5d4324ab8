import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestSimulator, eventually, startTestSimulator, rejected } from '../simulator/testing/harness.js';
import { verifiedAccountParams } from '../simulator/testing/onboarding.js';

let t: TestSimulator;
beforeAll(async () => {
  t = await startTestSimulator({ achSettlementDelayMs: 80 });
});
afterAll(async () => {
  await t.close();
});

async function paid(amount: number, extra: Partial<Stripe.PaymentIntentCreateParams> = {}): Promise<Stripe.PaymentIntent> {
  return t.stripe.paymentIntents.create({ amount, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, ...extra });
}

describe('refunds', () => {
  it('refunds part, then the rest, then refuses more', async () => {
    const pi = await paid(3000);
    const partial: Stripe.Refund = await t.stripe.refunds.create({ payment_intent: pi.id, amount: 1000, reason: 'requested_by_customer', metadata: { why: 'spilt' } });
    expect(partial.status).toBe('succeeded');
    expect(partial.amount).toBe(1000);
    expect(partial.charge).toBe(pi.latest_charge);
    let charge = await t.stripe.charges.retrieve(String(pi.latest_charge));
    expect(charge.amount_refunded).toBe(1000);
    expect(charge.refunded).toBe(false);
    const over = await rejected(t.stripe.refunds.create({ payment_intent: pi.id, amount: 2500 }));
    expect(over).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(over.code).toBe('amount_too_large');
    const rest = await t.stripe.refunds.create({ charge: String(pi.latest_charge) });
    expect(rest.amount).toBe(2000);
    charge = await t.stripe.charges.retrieve(String(pi.latest_charge));
    expect(charge.refunded).toBe(true);
    expect(charge.amount_refunded).toBe(3000);
    const again = await rejected(t.stripe.refunds.create({ payment_intent: pi.id }));
    expect(again.code).toBe('charge_already_refunded');
    const listed = await t.stripe.refunds.list({ payment_intent: pi.id });
    expect(listed.data.map((r) => r.id)).toEqual([rest.id, partial.id]);
    const fetched = await t.stripe.refunds.retrieve(partial.id, { expand: ['charge'] });
    expect((fetched.charge as Stripe.Charge).id).toBe(pi.latest_charge);
  });

  it('refuses to refund an intent without a successful charge', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 1000, currency: 'usd' });
    const error = await rejected(t.stripe.refunds.create({ payment_intent: pi.id }));
    expect(error.statusCode).toBe(400);
  });

  it('reverses the transfer and refunds the application fee proportionally', async () => {
    const account = await t.stripe.accounts.create(verifiedAccountParams());
    const pi = await paid(10_000, { transfer_data: { destination: account.id }, application_fee_amount: 1_000 });
    const charge = await t.stripe.charges.retrieve(String(pi.latest_charge));
    const refund = await t.stripe.refunds.create({ payment_intent: pi.id, amount: 5_000, reverse_transfer: true, refund_application_fee: true });
    expect(refund.transfer_reversal).toMatch(/^trr_/);
    const transfer = await t.stripe.transfers.retrieve(String(charge.transfer));
    expect(transfer.amount).toBe(9_000);
    expect(transfer.amount_reversed).toBe(4_500);
    expect(transfer.reversals.data[0]?.id).toBe(refund.transfer_reversal);
    const fee = await t.stripe.applicationFees.retrieve(String(charge.application_fee));
    expect(fee.amount_refunded).toBe(500);
    expect(fee.refunds.data[0]?.amount).toBe(500);
  });

  it('refunds what a partial capture took', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 5000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true, capture_method: 'manual' });
    await t.stripe.paymentIntents.capture(pi.id, { amount_to_capture: 4000 });
    const over = await rejected(t.stripe.refunds.create({ payment_intent: pi.id, amount: 4001 }));
    expect(over.code).toBe('amount_too_large');
    const refund = await t.stripe.refunds.create({ payment_intent: pi.id });
    expect(refund.amount).toBe(4000);
  });
});

describe('ACH direct debit', () => {
  it('pm_usBankAccount_success settles after the delay', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 20_000, currency: 'usd', allowed_payment_method_types: ['us_bank_account'], payment_method: 'pm_usBankAccount_success', confirm: true });
    expect(pi.status).toBe('processing');
    const settled = await eventually(async () => {
      const p = await t.stripe.paymentIntents.retrieve(pi.id);
      return p.status === 'succeeded' ? p : undefined;
    }, 'ACH settlement');
    expect(settled.amount_received).toBe(20_000);
    const after = await t.stripe.charges.retrieve(String(pi.latest_charge));
    expect(after.paid).toBe(true);
  });

  it('payment_method_data with the test routing and account numbers settles', async () => {
    const pi = await t.stripe.paymentIntents.create({
      amount: 7_500,
      currency: 'usd',
      allowed_payment_method_types: ['us_bank_account'],
      confirm: true,
      payment_method_data: {
        type: 'us_bank_account',
        us_bank_account: { routing_number: '110000000', account_number: '000123456789', account_holder_type: 'individual' },
        billing_details: { name: 'Jenny Rosen' },
      },
      expand: ['payment_method'],
    });
    expect(pi.status).toBe('processing');
    expect((pi.payment_method as Stripe.PaymentMethod).us_bank_account?.last4).toBe('6789');
    await eventually(async () => ((await t.stripe.paymentIntents.retrieve(pi.id)).status === 'succeeded' ? true : undefined), 'ACH settlement');
  });

  it('a failing account fails the payment after the delay', async () => {
    const pi = await t.stripe.paymentIntents.create({
      amount: 7_500,
      currency: 'usd',
      allowed_payment_method_types: ['us_bank_account'],
      confirm: true,
      payment_method_data: {
        type: 'us_bank_account',
        us_bank_account: { routing_number: '110000000', account_number: '000222222227' },
        billing_details: { name: 'Jenny Rosen' },
      },
    });
    const failed = await eventually(async () => {
      const p = await t.stripe.paymentIntents.retrieve(pi.id);
      return p.status === 'requires_payment_method' ? p : undefined;
    }, 'ACH failure');
    expect(failed.last_payment_error?.code).toBe('insufficient_funds');
    const noAccount = await t.stripe.paymentIntents.create({ amount: 7_500, currency: 'usd', allowed_payment_method_types: ['us_bank_account'], payment_method: 'pm_usBankAccount_noAccount', confirm: true });
    await t.sim.control.advanceTimers();
    const after = await t.stripe.paymentIntents.retrieve(noAccount.id, { expand: ['latest_charge'] });
    expect(after.status).toBe('requires_payment_method');
    expect((after.latest_charge as Stripe.Charge).failure_code).toBe('no_account');
  });

  it('is processing with a pending charge until settled, and cannot be canceled meanwhile', async () => {
    // A settlement delay that cannot elapse during the assertions; the control API settles it.
    await t.sim.control.setAchSettlementDelay(60_000);
    try {
      const pi = await t.stripe.paymentIntents.create({ amount: 5_000, currency: 'usd', allowed_payment_method_types: ['us_bank_account'], payment_method: 'pm_usBankAccount_success', confirm: true });
      const charge = await t.stripe.charges.retrieve(String(pi.latest_charge));
      expect(charge.status).toBe('pending');
      expect(charge.payment_method_details?.type).toBe('us_bank_account');
      expect((await t.stripe.paymentIntents.retrieve(pi.id)).status).toBe('processing');
      const error = await rejected(t.stripe.paymentIntents.cancel(pi.id));
      expect(error.code).toBe('payment_intent_unexpected_state');
      await t.sim.control.advanceTimers();
      expect((await t.stripe.paymentIntents.retrieve(pi.id)).status).toBe('succeeded');
    } finally {
      await t.sim.control.setAchSettlementDelay(80);
    }
  });

  it('live mode requires the destination to have an active ACH capability; test mode does not', async () => {
    const capabilities = { card_payments: { requested: true }, transfers: { requested: true }, us_bank_account_ach_payments: { requested: true } };
    const liveAccount = await t.live.accounts.create({ ...verifiedAccountParams(), capabilities });
    const params: Stripe.PaymentIntentCreateParams = {
      amount: 5_000,
      currency: 'usd',
      allowed_payment_method_types: ['us_bank_account'],
      transfer_data: { destination: liveAccount.id },
    };
    const refused = await rejected(t.live.paymentIntents.create(params));
    expect(refused).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(refused.message).toContain('us_bank_account_ach_payments');
    await t.sim.control.setCapability(liveAccount.id, 'us_bank_account_ach_payments', 'active');
    const accepted = await t.live.paymentIntents.create(params);
    expect(accepted.livemode).toBe(true);
    await t.sim.control.setCapability(liveAccount.id, 'us_bank_account_ach_payments', 'inactive');
    await rejected(t.live.paymentIntents.create(params));

    const testAccount = await t.stripe.accounts.create({ ...verifiedAccountParams(), capabilities });
    const testPi = await t.stripe.paymentIntents.create({ ...params, transfer_data: { destination: testAccount.id } });
    expect(testPi.status).toBe('requires_payment_method');
  });
});
