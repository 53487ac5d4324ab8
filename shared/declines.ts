/**
 * Why a payment failed, in the words staff at a counter need: what happened and what to do next.
 * One sentence per Stripe `decline_code` (the issuer's reason) and per `failure_code` (Stripe's
 * error code, which is all a failure has when the issuer gave no reason). Covers the codes of
 * Stripe's card-present test amounts and cards and of its online test cards (Stripe's "Decline
 * codes" and "Testing" pages); the counter, `pos pay --wait`, `pos simulate tap` and History all
 * read this table, so a code is explained the same way everywhere.
 */

export interface DeclineWords {
  /** What the screen says, ending with what to do. */
  words: string;
  /** Whether the same card may be tried again: false when the issuer said never (lost, stolen, fraud). */
  retrySameCard: boolean;
}

const w = (words: string, retrySameCard: boolean): DeclineWords => ({ words, retrySameCard });

const ANOTHER_CARD = 'Declined: ask for another card';
const DO_NOT_RETRY = 'Declined: do not retry this card';

/** Keyed by decline_code first, then failure_code. */
export const DECLINE_WORDS: Readonly<Record<string, DeclineWords>> = {
  // PIN (card-present): the customer can fix these on the same card.
  incorrect_pin: w('Wrong PIN: ask the customer to try again', true),
  invalid_pin: w('Wrong PIN: ask the customer to try again', true),
  pin_try_exceeded: w('Too many wrong PINs: ask for another card', false),
  offline_pin_required: w('The card needs its PIN: charge again and have the customer insert the card and enter the PIN', true),
  online_or_offline_pin_required: w('The card needs its PIN: charge again and have the customer insert the card and enter the PIN', true),
  // Money and limits.
  insufficient_funds: w('Insufficient funds: ask for another card', false),
  withdrawal_count_limit_exceeded: w('The card is over its limit: ask for another card', false),
  card_velocity_exceeded: w('The card is over its limit: ask for another card', false),
  // The issuer wants to be called, or said no without a reason.
  call_issuer: w('Declined: the customer should call their bank; ask for another card', false),
  do_not_honor: w('Declined by the bank: the customer should call their bank; ask for another card', false),
  generic_decline: w(ANOTHER_CARD, false),
  card_declined: w(ANOTHER_CARD, false),
  no_action_taken: w(ANOTHER_CARD, false),
  not_permitted: w('This card cannot be used here: ask for another card', false),
  transaction_not_allowed: w('This card cannot be used here: ask for another card', false),
  service_not_allowed: w('This card cannot be used here: ask for another card', false),
  card_not_supported: w('This card is not supported: ask for another card', false),
  currency_not_supported: w('This card cannot pay in this currency: ask for another card', false),
  restricted_card: w(DO_NOT_RETRY, false),
  // Never again with this card.
  lost_card: w(DO_NOT_RETRY, false),
  stolen_card: w(DO_NOT_RETRY, false),
  pickup_card: w(DO_NOT_RETRY, false),
  fraudulent: w(DO_NOT_RETRY, false),
  merchant_blacklist: w(DO_NOT_RETRY, false),
  security_violation: w(DO_NOT_RETRY, false),
  do_not_try_again: w(DO_NOT_RETRY, false),
  stop_payment_order: w(DO_NOT_RETRY, false),
  revocation_of_authorization: w(DO_NOT_RETRY, false),
  revocation_of_all_authorizations: w(DO_NOT_RETRY, false),
  // The card's details.
  expired_card: w('The card has expired: ask for another card', false),
  incorrect_cvc: w('Wrong security code: check the card and try again', true),
  invalid_cvc: w('Wrong security code: check the card and try again', true),
  incorrect_number: w('Wrong card number: check the card and try again', true),
  invalid_number: w('Wrong card number: check the card and try again', true),
  invalid_expiry_month: w('Wrong expiry date: check the card and try again', true),
  invalid_expiry_year: w('Wrong expiry date: check the card and try again', true),
  incorrect_zip: w('Wrong postal code: check it and try again', true),
  invalid_account: w('The card or its account is not valid: ask for another card', false),
  new_account_information_available: w('The card has been replaced: ask for the new card', false),
  approve_with_id: w('The bank could not approve it: try again', true),
  // The network, not the card.
  processing_error: w('Try again: the payment could not be processed', true),
  reenter_transaction: w('Try again: the bank asked for the payment again', true),
  try_again_later: w('Try again: the bank asked to try later', true),
  issuer_not_available: w('Try again: the bank could not be reached', true),
  duplicate_transaction: w('Looks like a duplicate of a payment just made: check History before charging again', false),
  invalid_amount: w('The bank refused this amount: check it and charge again', false),
  // Online payments (hosted pages and links).
  authentication_required: w('The bank asked the customer to confirm the payment: try again and let them confirm', true),
  payment_intent_authentication_failure: w('The customer did not confirm the payment with their bank', true),
  testmode_decline: w('A test card was used in live mode: use a real card', false),
  test_mode_live_card: w('A real card was used in test mode: use a test card', false),
  // The reader.
  customer_canceled: w('Canceled on the reader by the customer', true),
};

function lookup(code: string | null | undefined): DeclineWords | undefined {
  return code && Object.hasOwn(DECLINE_WORDS, code) ? DECLINE_WORDS[code] : undefined;
}

/** Staff words for a failed payment: the decline code's if it has one, else the failure code's. */
export function declineWords(codes: { decline_code?: string | null; failure_code?: string | null } | string | null | undefined): string {
  const c = typeof codes === 'string' || codes == null ? { failure_code: codes ?? null } : codes;
  const known = lookup(c.decline_code) ?? lookup(c.failure_code);
  if (known) return known.words;
  const code = c.decline_code ?? c.failure_code;
  return code ? `Declined (${code.replace(/_/g, ' ')}): ask for another card` : ANOTHER_CARD;
}

/**
 * Why a payment was canceled, for staff: Stripe's reasons and the ones our counters send (kept on
 * our side only; Stripe takes just its four). Null when no reason was given.
 */
export const CANCEL_WORDS: Readonly<Record<string, string>> = {
  canceled_by_staff: 'canceled by staff',
  customer_canceled_on_reader: 'canceled by the customer on the reader',
  requested_by_customer: 'canceled at the customer’s request',
  abandoned: 'abandoned: it never finished on the reader',
  duplicate: 'canceled as a duplicate',
  fraudulent: 'canceled as fraudulent',
};

export function cancelWords(reason: string | null | undefined): string | null {
  if (!reason) return null;
  return Object.hasOwn(CANCEL_WORDS, reason) ? CANCEL_WORDS[reason]! : reason.replace(/_/g, ' ');
}
