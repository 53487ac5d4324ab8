import { describe, expect, it } from 'vitest';
import { achOutcome, brandOf, cardPresentAmountOutcome, cardTokenNumber, isTestCardNumber, luhnValid, publishedTestNumbers, testCard } from './instruments.js';

describe('test instruments', () => {
  it('validates Luhn', () => {
    expect(luhnValid('4242424242424242')).toBe(true);
    expect(luhnValid('378282246310005')).toBe(true);
    expect(luhnValid('4242424242424241')).toBe(false);
    expect(luhnValid('42')).toBe(false);
  });

  it('knows brands by prefix', () => {
    expect(brandOf('4242424242424242')).toBe('visa');
    expect(brandOf('5555555555554444')).toBe('mastercard');
    expect(brandOf('2223003122003222')).toBe('mastercard');
    expect(brandOf('378282246310005')).toBe('amex');
    expect(brandOf('6011111111111117')).toBe('discover');
  });

  it('maps tokens to numbers with documented outcomes', () => {
    expect(testCard(cardTokenNumber('pm_card_visa_chargeDeclinedInsufficientFunds')!).outcome).toMatchObject({
      kind: 'decline',
      decline: { code: 'card_declined', declineCode: 'insufficient_funds' },
    });
    expect(testCard(cardTokenNumber('pm_card_threeDSecure2Required')!).outcome.kind).toBe('authenticate');
    expect(testCard('4242424242424242').outcome.kind).toBe('approve');
  });

  it('every published test number is a valid card number', () => {
    for (const number of publishedTestNumbers()) expect(luhnValid(number), number).toBe(true);
  });

  it('looks nothing up on the prototype chain', () => {
    for (const key of ['constructor', 'toString', '__proto__', 'valueOf']) {
      expect(cardTokenNumber(key)).toBeUndefined();
      expect(testCard(key).outcome).toMatchObject({ kind: 'decline' });
      expect(achOutcome(key).succeeds).toBe(true);
    }
  });

  it("takes only Stripe's published test numbers: any other card is declined test_mode_live_card", () => {
    for (const number of ['4242424242424242', '4012888888881881', '2223003122003222', '371449635398431', '6205500000000000004']) {
      expect(isTestCardNumber(number)).toBe(true);
      expect(testCard(number).outcome.kind).toBe('approve');
    }
    // Luhn-valid numbers outside the list: a common processor's test number, and a made-up one.
    for (const number of ['4111111111111111', '4916338506082832']) {
      expect(luhnValid(number)).toBe(true);
      expect(testCard(number).outcome).toMatchObject({ kind: 'decline', decline: { code: 'card_declined', declineCode: 'test_mode_live_card' } });
    }
    // Every token stands for a listed number.
    expect(isTestCardNumber(cardTokenNumber('pm_card_unionpay')!)).toBe(true);
  });

  it('chooses card-present outcomes by the last two digits of the amount', () => {
    expect(cardPresentAmountOutcome(1000).kind).toBe('approve');
    expect(cardPresentAmountOutcome(1099).kind).toBe('approve');
    const declines = [1001, 1005, 1055, 1065, 1075].map((amount) => {
      const outcome = cardPresentAmountOutcome(amount);
      return outcome.kind === 'decline' ? outcome.decline.declineCode : 'approve';
    });
    expect(declines).toEqual(['call_issuer', 'generic_decline', 'incorrect_pin', 'withdrawal_count_limit_exceeded', 'pin_try_exceeded']);
  });

  it('fails the documented ACH accounts', () => {
    expect(achOutcome('000123456789').succeeds).toBe(true);
    expect(achOutcome('000111111116')).toMatchObject({ succeeds: false, code: 'no_account' });
    expect(achOutcome('000222222227')).toMatchObject({ succeeds: false, code: 'insufficient_funds' });
  });
});
