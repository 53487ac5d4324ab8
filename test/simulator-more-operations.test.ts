import type Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestSimulator, rejected, startTestSimulator } from '../simulator/testing/harness.js';
import { verifiedAccountParams } from '../simulator/testing/onboarding.js';

/**
 * More of the operations Stripe documents on the resources the simulator claims, through the
 * official `stripe` package: debit cards as external accounts, the Charges API's create, a
 * customer's cash balance and funding instructions; and the calls the simulator refuses as Stripe
 * refuses them here (a local payment method in the wrong currency, applying a cash balance or
 * microdeposits to a card payment, files and SetupIntents it never has).
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

describe("a connected account's debit cards", () => {
  it('are added from a debit card token, listed beside the bank account, retrieved, updated and deleted', async () => {
    const card = (await t.stripe.accounts.createExternalAccount(account.id, { external_account: 'tok_visa_debit', metadata: { till: '1' } })) as Stripe.Card;
    expect(card).toMatchObject({ object: 'card', account: account.id, funding: 'debit', last4: '5556', brand: 'Visa', currency: 'usd', default_for_currency: false, metadata: { till: '1' } });
    expect((await t.stripe.accounts.retrieveExternalAccount(account.id, card.id)).id).toBe(card.id);

    const all = await t.stripe.accounts.listExternalAccounts(account.id);
    expect(all.data.map((e) => e.object)).toEqual(['card', 'bank_account']);
    const cards = await t.stripe.accounts.listExternalAccounts(account.id, { object: 'card' });
    expect(cards.data.map((e) => e.id)).toEqual([card.id]);
    expect((await t.stripe.accounts.retrieve(account.id)).external_accounts?.data.map((e) => e.id)).toContain(card.id);

    const updated = (await t.stripe.accounts.updateExternalAccount(account.id, card.id, { metadata: { order_id: '6735' } })) as Stripe.Card;
    expect(updated.metadata).toEqual({ till: '1', order_id: '6735' });

    const deleted = await t.stripe.accounts.deleteExternalAccount(account.id, card.id);
    expect(deleted).toMatchObject({ id: card.id, object: 'card', deleted: true });
    expect((await rejected(t.stripe.accounts.retrieveExternalAccount(account.id, card.id))).code).toBe('resource_missing');
  });

  it('refuses a credit card, as Stripe pays out to debit cards only', async () => {
    const error = await rejected(t.stripe.accounts.createExternalAccount(account.id, { external_account: 'tok_visa' }));
    expect(error).toMatchObject({ statusCode: 400, code: 'invalid_card_type', param: 'external_account' });
  });
});

describe("the Charges API's create", () => {
  it('charges a card token at once, or leaves it uncaptured, and the charge is refundable', async () => {
    const charge = await t.stripe.charges.create({ amount: 2000, currency: 'usd', source: 'tok_visa', description: 'My First Test Charge', metadata: { order: '7' } });
    expect(charge).toMatchObject({ object: 'charge', amount: 2000, currency: 'usd', status: 'succeeded', paid: true, captured: true, description: 'My First Test Charge', metadata: { order: '7' } });
    expect((await t.stripe.charges.retrieve(charge.id)).id).toBe(charge.id);
    const refund = await t.stripe.refunds.create({ charge: charge.id, amount: 500 });
    expect(refund).toMatchObject({ charge: charge.id, amount: 500, status: 'succeeded' });

    const held = await t.stripe.charges.create({ amount: 1500, currency: 'usd', source: 'tok_mastercard', capture: false });
    expect(held).toMatchObject({ captured: false, status: 'succeeded' });
    expect((await t.stripe.charges.capture(held.id)).captured).toBe(true);
  });

  it('answers a declined card with the card error naming the charge it left', async () => {
    const error = await rejected(t.stripe.charges.create({ amount: 2000, currency: 'usd', source: 'tok_chargeDeclined' }));
    expect(error).toMatchObject({ statusCode: 402, type: 'StripeCardError', code: 'card_declined', decline_code: 'generic_decline' });
    const failed = await t.stripe.charges.retrieve(String(error.charge));
    expect(failed).toMatchObject({ status: 'failed', amount: 2000 });
  });

  it('needs a source, and takes card tokens only', async () => {
    expect(await rejected(t.stripe.charges.create({ amount: 2000, currency: 'usd' }))).toMatchObject({ code: 'parameter_missing', param: 'source' });
    expect(await rejected(t.stripe.charges.create({ amount: 2000, currency: 'usd', source: 'src_nope' }))).toMatchObject({ code: 'resource_missing', param: 'source' });
  });
});

describe("a customer's cash balance", () => {
  it('is retrieved empty, takes its reconciliation mode, and lists no transactions', async () => {
    const customer = await t.stripe.customers.create({ email: 'cash@example.com' });
    expect(await t.stripe.customers.retrieveCashBalance(customer.id)).toMatchObject({
      object: 'cash_balance',
      customer: customer.id,
      available: null,
      livemode: false,
      settings: { reconciliation_mode: 'automatic', using_merchant_default: true },
    });
    const manual = await t.stripe.customers.updateCashBalance(customer.id, { settings: { reconciliation_mode: 'manual' } });
    expect(manual.settings).toEqual({ reconciliation_mode: 'manual', using_merchant_default: false });
    expect((await t.stripe.customers.retrieveCashBalance(customer.id)).settings.reconciliation_mode).toBe('manual');
    const transactions = await t.stripe.customers.listCashBalanceTransactions(customer.id, { limit: 3 });
    expect(transactions.data).toEqual([]);
    expect((await rejected(t.stripe.customers.retrieveCashBalance('cus_nope'))).code).toBe('resource_missing');
  });

  it('gives US bank transfer funding instructions, and refuses a transfer type in another currency', async () => {
    const customer = await t.stripe.customers.create({ email: 'transfer@example.com' });
    const instructions = await t.stripe.customers.createFundingInstructions(customer.id, { currency: 'usd', funding_type: 'bank_transfer', bank_transfer: { type: 'us_bank_transfer' } });
    expect(instructions).toMatchObject({ object: 'funding_instructions', currency: 'usd', funding_type: 'bank_transfer', bank_transfer: { type: 'us_bank_transfer', country: 'US' } });
    const aba = instructions.bank_transfer.financial_addresses.find((a) => a.type === 'aba');
    expect(aba?.aba?.routing_number).toBe('110000000');
    const again = await t.stripe.customers.createFundingInstructions(customer.id, { currency: 'usd', funding_type: 'bank_transfer', bank_transfer: { type: 'us_bank_transfer' } });
    expect(again.bank_transfer.financial_addresses).toEqual(instructions.bank_transfer.financial_addresses);

    const wrong = await rejected(
      t.stripe.customers.createFundingInstructions(customer.id, { currency: 'usd', funding_type: 'bank_transfer', bank_transfer: { type: 'jp_bank_transfer', requested_address_types: ['zengin'] } }),
    );
    expect(wrong).toMatchObject({ statusCode: 400, param: 'currency' });
    expect(wrong.message).toContain('jpy');
  });
});

describe('a US bank account verified by microdeposits', () => {
  const bankPayment = (): Promise<Stripe.PaymentIntent> =>
    t.stripe.paymentIntents.create({
      amount: 2500,
      currency: 'usd',
      allowed_payment_method_types: ['us_bank_account'],
      payment_method_data: { type: 'us_bank_account', us_bank_account: { account_number: '000123456789', routing_number: '110000000', account_holder_type: 'individual' }, billing_details: { name: 'Jenny Rosen' } },
      payment_method_options: { us_bank_account: { verification_method: 'microdeposits' } },
      confirm: true,
    });

  it('waits for the deposits, then Stripe test amounts or descriptor code start the debit', async () => {
    const pi = await bankPayment();
    expect(pi).toMatchObject({ status: 'requires_action', next_action: { type: 'verify_with_microdeposits', verify_with_microdeposits: { microdeposit_type: 'amounts' } } });
    const verified = await t.stripe.paymentIntents.verifyMicrodeposits(pi.id, { amounts: [32, 45] });
    expect(verified.status).toBe('processing');
    expect(verified.next_action).toBeNull();
    const byCode = await t.stripe.paymentIntents.verifyMicrodeposits((await bankPayment()).id, { descriptor_code: 'SM11AA' });
    expect(byCode.status).toBe('processing');
    expect(await rejected(t.stripe.paymentIntents.verifyMicrodeposits(verified.id, { amounts: [32, 45] }))).toMatchObject({ code: 'payment_intent_unexpected_state' });
  });

  it('refuses other amounts, another code, or neither', async () => {
    const pi = await bankPayment();
    expect(await rejected(t.stripe.paymentIntents.verifyMicrodeposits(pi.id, { amounts: [10, 20] }))).toMatchObject({ code: 'payment_method_microdeposit_verification_amounts_mismatch', param: 'amounts' });
    expect(await rejected(t.stripe.paymentIntents.verifyMicrodeposits(pi.id, { descriptor_code: 'SM00XX' }))).toMatchObject({ code: 'payment_method_microdeposit_verification_descriptor_code_mismatch' });
    expect(await rejected(t.stripe.paymentIntents.verifyMicrodeposits(pi.id))).toMatchObject({ code: 'parameter_missing' });
    expect((await t.stripe.paymentIntents.retrieve(pi.id)).status).toBe('requires_action');
  });
});

describe('calls refused as Stripe refuses them here', () => {
  it('a local payment method in a currency it is not presented in', async () => {
    const error = await rejected(t.stripe.paymentIntents.create({ amount: 200, currency: 'usd', payment_method_data: { type: 'p24', p24: { bank: 'blik' } } }));
    expect(error).toMatchObject({ statusCode: 400, param: 'currency' });
    expect(error.message).toBe('The currency provided (usd) is invalid. Payments with p24 support the following currencies: eur, pln.');
  });

  it('paying from a cash balance, or verifying microdeposits, on an intent that cannot', async () => {
    const pi = await t.stripe.paymentIntents.create({ amount: 2000, currency: 'usd', payment_method: 'pm_card_visa', confirm: true });
    expect(await rejected(t.stripe.paymentIntents.applyCustomerBalance(pi.id))).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' });
    expect(await rejected(t.stripe.paymentIntents.verifyMicrodeposits(pi.id, { amounts: [32, 45] }))).toMatchObject({ statusCode: 400, code: 'payment_intent_unexpected_state' });
    expect((await rejected(t.stripe.paymentIntents.verifyMicrodeposits('pi_nope'))).code).toBe('resource_missing');
  });

  it('a splash screen file or a reader SetupIntent, neither of which can exist in the simulator', async () => {
    const splash = await rejected(t.stripe.terminal.configurations.create({ bbpos_wisepos_e: { splashscreen: 'file_123' } }));
    expect(splash).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'bbpos_wisepos_e[splashscreen]' });
    const location = await t.stripe.terminal.locations.create({ display_name: 'Store', address: { line1: '1 Main', city: 'San Francisco', state: 'CA', postal_code: '94111', country: 'US' } });
    const reader = await t.stripe.terminal.readers.create({ registration_code: 'simulated-wpe', location: location.id });
    const setup = await rejected(t.stripe.terminal.readers.processSetupIntent(reader.id, { setup_intent: 'seti_123', allow_redisplay: 'always' }));
    expect(setup).toMatchObject({ statusCode: 400, code: 'resource_missing', param: 'setup_intent' });
    expect(setup.message).toBe("No such setupintent: 'seti_123'");
  });
});
