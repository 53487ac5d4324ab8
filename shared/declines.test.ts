import { describe, expect, it } from 'vitest';
import { CANCEL_WORDS, cancelWords, DECLINE_WORDS, declineWords } from './declines.js';

/** What each code must say: the staff sentence, checked row by row against the table. */
const EXPECTED: Record<string, RegExp> = {
  incorrect_pin: /^Wrong PIN: ask the customer to try again$/,
  invalid_pin: /^Wrong PIN/,
  pin_try_exceeded: /^Too many wrong PINs/,
  offline_pin_required: /enter the PIN/,
  online_or_offline_pin_required: /enter the PIN/,
  insufficient_funds: /^Insufficient funds/,
  withdrawal_count_limit_exceeded: /over its limit/,
  card_velocity_exceeded: /over its limit/,
  call_issuer: /call their bank/,
  do_not_honor: /call their bank/,
  generic_decline: /^Declined: ask for another card$/,
  card_declined: /^Declined: ask for another card$/,
  no_action_taken: /another card/,
  not_permitted: /cannot be used here/,
  transaction_not_allowed: /cannot be used here/,
  service_not_allowed: /cannot be used here/,
  card_not_supported: /not supported/,
  currency_not_supported: /currency/,
  restricted_card: /^Declined: do not retry this card$/,
  lost_card: /^Declined: do not retry this card$/,
  stolen_card: /^Declined: do not retry this card$/,
  pickup_card: /do not retry/,
  fraudulent: /do not retry/,
  merchant_blacklist: /do not retry/,
  security_violation: /do not retry/,
  do_not_try_again: /do not retry/,
  stop_payment_order: /do not retry/,
  revocation_of_authorization: /do not retry/,
  revocation_of_all_authorizations: /do not retry/,
  expired_card: /expired/,
  incorrect_cvc: /security code/,
  invalid_cvc: /security code/,
  incorrect_number: /card number/,
  invalid_number: /card number/,
  invalid_expiry_month: /expiry/,
  invalid_expiry_year: /expiry/,
  incorrect_zip: /postal code/,
  invalid_account: /not valid/,
  new_account_information_available: /new card/,
  approve_with_id: /try again/,
  processing_error: /^Try again/,
  reenter_transaction: /^Try again/,
  try_again_later: /^Try again/,
  issuer_not_available: /^Try again/,
  duplicate_transaction: /duplicate/,
  invalid_amount: /amount/,
  authentication_required: /confirm/,
  payment_intent_authentication_failure: /did not confirm/,
  testmode_decline: /live mode/,
  test_mode_live_card: /test mode/,
  customer_canceled: /customer/,
};

describe('decline words', () => {
  it('has a test row for every row of the table, and no more', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(Object.keys(DECLINE_WORDS).sort());
  });

  it.each(Object.entries(EXPECTED))('%s', (code, words) => {
    expect(declineWords({ decline_code: code, failure_code: 'card_declined' })).toMatch(words);
    expect(declineWords(code)).toMatch(words);
    // Said in staff words: no code, no underscore.
    expect(declineWords(code)).not.toMatch(/_/);
  });

  it('prefers the issuer’s reason over the generic failure code', () => {
    expect(declineWords({ failure_code: 'card_declined', decline_code: 'insufficient_funds' })).toBe('Insufficient funds: ask for another card');
    expect(declineWords({ failure_code: 'card_declined', decline_code: null })).toBe('Declined: ask for another card');
  });

  it('still says something useful for a code it does not know', () => {
    expect(declineWords('brand_new_code')).toBe('Declined (brand new code): ask for another card');
    expect(declineWords(null)).toBe('Declined: ask for another card');
    expect(declineWords('constructor')).toBe('Declined (constructor): ask for another card');
  });

  it('never tells staff to retry a card the issuer flagged', () => {
    for (const code of ['lost_card', 'stolen_card', 'fraudulent', 'pickup_card', 'pin_try_exceeded']) expect(DECLINE_WORDS[code]?.retrySameCard).toBe(false);
  });
});

describe('cancel words', () => {
  it.each([
    ['canceled_by_staff', 'canceled by staff'],
    ['customer_canceled_on_reader', 'canceled by the customer on the reader'],
    ['requested_by_customer', 'canceled at the customer’s request'],
    ['abandoned', 'abandoned: it never finished on the reader'],
    ['duplicate', 'canceled as a duplicate'],
    ['fraudulent', 'canceled as fraudulent'],
  ])('%s → %s', (reason, words) => {
    expect(cancelWords(reason)).toBe(words);
  });

  it('covers every row, and says something for a reason typed by hand', () => {
    expect(Object.keys(CANCEL_WORDS)).toHaveLength(6);
    expect(cancelWords('wrong_item')).toBe('wrong item');
    expect(cancelWords(null)).toBeNull();
  });
});
