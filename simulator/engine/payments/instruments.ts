import { createHash } from 'node:crypto';

/**
 * The test instruments of Stripe's testing documentation: card tokens (`pm_card_visa`, …), raw card
 * numbers, card-present numbers and amounts, and ACH test accounts, each with the outcome Stripe
 * documents for it.
 */

export interface Decline {
  code: string;
  declineCode: string;
  message: string;
}

export type CardOutcome = { kind: 'approve' } | { kind: 'decline'; decline: Decline } | { kind: 'authenticate' };

function decline(code: string, declineCode: string, message: string): Decline {
  return { code, declineCode, message };
}

const DECLINED = 'Your card was declined.';

export const DECLINES = {
  generic_decline: decline('card_declined', 'generic_decline', DECLINED),
  insufficient_funds: decline('card_declined', 'insufficient_funds', 'Your card has insufficient funds.'),
  lost_card: decline('card_declined', 'lost_card', DECLINED),
  stolen_card: decline('card_declined', 'stolen_card', DECLINED),
  expired_card: decline('expired_card', 'expired_card', 'Your card has expired.'),
  incorrect_cvc: decline('incorrect_cvc', 'incorrect_cvc', "Your card's security code is incorrect."),
  processing_error: decline('processing_error', 'processing_error', 'An error occurred while processing your card. Try again in a little bit.'),
  call_issuer: decline('card_declined', 'call_issuer', DECLINED),
  incorrect_pin: decline('card_declined', 'incorrect_pin', 'The PIN entered is incorrect.'),
  withdrawal_count_limit_exceeded: decline('card_declined', 'withdrawal_count_limit_exceeded', 'The customer has exceeded the balance or credit limit available on their card.'),
  pin_try_exceeded: decline('card_declined', 'pin_try_exceeded', 'The allowable number of PIN tries has been exceeded.'),
  offline_pin_required: decline('card_declined', 'offline_pin_required', DECLINED),
  online_or_offline_pin_required: decline('card_declined', 'online_or_offline_pin_required', DECLINED),
  fraudulent: decline('card_declined', 'fraudulent', DECLINED),
  card_velocity_exceeded: decline('card_declined', 'card_velocity_exceeded', DECLINED),
  /** Stripe's answer to a real card in test mode; the simulator never takes a real card, in either mode. */
  test_mode_live_card: decline(
    'card_declined',
    'test_mode_live_card',
    'Your card was declined. Your request was in test mode, but used a non test (live) card. For a list of valid test cards, visit: https://stripe.com/docs/testing.',
  ),
} as const satisfies Record<string, Decline>;

export type DeclineName = keyof typeof DECLINES;

export function isDeclineName(name: string): name is DeclineName {
  return Object.hasOwn(DECLINES, name);
}

export type Funding = 'credit' | 'debit' | 'prepaid' | 'unknown';

export interface TestCard {
  number: string;
  brand: string;
  funding: Funding;
  outcome: CardOutcome;
}

const approve: CardOutcome = { kind: 'approve' };
const declined = (name: DeclineName): CardOutcome => ({ kind: 'decline', decline: DECLINES[name] });
const authenticate: CardOutcome = { kind: 'authenticate' };

/** Card numbers with a documented behaviour other than a plain approval. */
const NUMBER_OUTCOMES: Record<string, { funding?: Funding; outcome: CardOutcome }> = {
  '4000056655665556': { funding: 'debit', outcome: approve },
  '5200828282828210': { funding: 'debit', outcome: approve },
  '5105105105105100': { funding: 'prepaid', outcome: approve },
  '4000000000000002': { outcome: declined('generic_decline') },
  '4000000000000341': { outcome: declined('generic_decline') },
  '4000000000009995': { outcome: declined('insufficient_funds') },
  '4000000000009987': { outcome: declined('lost_card') },
  '4000000000009979': { outcome: declined('stolen_card') },
  '4000000000000069': { outcome: declined('expired_card') },
  '4000000000000127': { outcome: declined('incorrect_cvc') },
  '4000000000000119': { outcome: declined('processing_error') },
  '4000002500003155': { outcome: authenticate },
  '4000002760003184': { outcome: authenticate },
  '4000000000003220': { outcome: authenticate },
  '4000000000003063': { outcome: authenticate },
  '4100000000000019': { outcome: declined('fraudulent') },
  '4000000000004954': { outcome: declined('fraudulent') },
  '4000000000006975': { outcome: declined('card_velocity_exceeded') },
};

/**
 * The numbers Stripe's testing page publishes that approve: by brand (with the numbers of its older
 * pages, still accepted), co-branded, by country, and the cards whose special behaviour (balance,
 * address and risk checks, later disputes and refunds) follows an approval. Any other number is a
 * real card, which the simulator declines as Stripe's test mode does.
 */
const APPROVING_NUMBERS: ReadonlySet<string> = new Set([
  // By brand.
  '4242424242424242', '4012888888881881', '5555555555554444', '2223003122003222', '378282246310005', '371449635398431',
  '6011111111111117', '6011000990139424', '6011981111111113', '3056930009020004', '36227206271667', '30569309025904',
  '38520000023237', '6555900000604105', '3566002020360505', '3530111333300000', '6200000000000005', '6200000000000047',
  '6205500000000000004',
  // Co-branded (Cartes Bancaires with Visa and Mastercard, eftpos with Mastercard) and Interac (card present).
  '4000002500001001', '5555552500001001', '5555050360000080', '4506445006931933',
  // By country: the Americas.
  '4000000760000002', '4000000320000021', '4000001240000000', '4000001520000001', '4000001700000003', '4000001880000005',
  '4000002180000000', '4000004840008001', '5062210000000009', '4000005910000000', '4000006000000066', '4000006040000068',
  '4000008580000003',
  // Europe and the Middle East.
  '4000000400000008', '4000000560000004', '4000001000000000', '4000001120000005', '4000001910000009', '4000001960000008',
  '4000002030000002', '4000002080000001', '4000002330000009', '4000002460000001', '4000002500000003', '4000002760000016',
  '4000002920000005', '4000003000000030', '4000003480000005', '4000003720000005', '4000003800000008', '4000004280000005',
  '4000004380000004', '4000004400000000', '4000004420000006', '4000004700000007', '4000005280000002', '4000005780000007',
  '4000006160000005', '4000006200000007', '4000006420000001', '4000006820000007', '4000007050000006', '4000007030000001',
  '4000007240000007', '4000007520000008', '4000007560000009', '4000008260000000', '4000058260000005', '5555558265554449',
  '4000007840000001', '5200007840000022',
  // Asia and the Pacific.
  '4000000360000006', '4000001560000002', '4000003440000004', '4000003560000008', '4000003920000003', '4000004580000002',
  '4000005540000008', '4000007020000003', '4000001580000008', '4000007640000003',
  // Special behaviour after an approval.
  '4000000000000077', '4000003720000278', '4000000000000093', '4000000000000010', '4000000000000028', '4000000000000036',
  '4000000000000044', '4000000000000259', '4000000000002685', '4000000000001976', '4000000000005423', '4000000000007726',
  '4000000000005126', '4000000000009235', '4000000000003055',
]);

/** Whether Stripe publishes this number as a test card (every other number is a real card). */
export function isTestCardNumber(number: string): boolean {
  return APPROVING_NUMBERS.has(number) || Object.hasOwn(NUMBER_OUTCOMES, number);
}

/** Every number with a documented behaviour, for checks of the list itself. */
export function publishedTestNumbers(): string[] {
  return [...APPROVING_NUMBERS, ...Object.keys(NUMBER_OUTCOMES)];
}

const liveCard: CardOutcome = declined('test_mode_live_card');

/** `pm_card_*` tokens and the test number each one stands for. */
const CARD_TOKENS: Record<string, string> = {
  pm_card_visa: '4242424242424242',
  pm_card_us: '4242424242424242',
  pm_card_visa_debit: '4000056655665556',
  pm_card_mastercard: '5555555555554444',
  pm_card_mastercard_debit: '5200828282828210',
  pm_card_mastercard_prepaid: '5105105105105100',
  pm_card_amex: '378282246310005',
  pm_card_discover: '6011111111111117',
  pm_card_diners: '3056930009020004',
  pm_card_jcb: '3566002020360505',
  pm_card_unionpay: '6200000000000005',
  pm_card_chargeDeclined: '4000000000000002',
  pm_card_visa_chargeDeclined: '4000000000000002',
  pm_card_chargeCustomerFail: '4000000000000341',
  pm_card_chargeDeclinedInsufficientFunds: '4000000000009995',
  pm_card_visa_chargeDeclinedInsufficientFunds: '4000000000009995',
  pm_card_chargeDeclinedLostCard: '4000000000009987',
  pm_card_visa_chargeDeclinedLostCard: '4000000000009987',
  pm_card_chargeDeclinedStolenCard: '4000000000009979',
  pm_card_visa_chargeDeclinedStolenCard: '4000000000009979',
  pm_card_chargeDeclinedExpiredCard: '4000000000000069',
  pm_card_visa_chargeDeclinedExpiredCard: '4000000000000069',
  pm_card_chargeDeclinedIncorrectCvc: '4000000000000127',
  pm_card_visa_chargeDeclinedIncorrectCvc: '4000000000000127',
  pm_card_chargeDeclinedProcessingError: '4000000000000119',
  pm_card_visa_chargeDeclinedProcessingError: '4000000000000119',
  pm_card_authenticationRequired: '4000002760003184',
  pm_card_authenticationRequiredOnSetup: '4000002500003155',
  pm_card_threeDSecure2Required: '4000000000003220',
  pm_card_bypassPending: '4000000000000077',
  pm_card_bypassPendingInternational: '4000003720000278',
  pm_card_createDispute: '4000000000000259',
  pm_card_createDisputeProductNotReceived: '4000000000002685',
  pm_card_createDisputeInquiry: '4000000000001976',
};

/** Cards whose funds skip the pending balance: available as soon as the charge is captured. */
const BYPASS_PENDING = new Set(['4000000000000077', '4000003720000278']);

export function bypassesPending(number: string): boolean {
  return BYPASS_PENDING.has(number);
}

/**
 * Cards whose successful charge is disputed afterwards (Stripe's testing docs, "Disputes"), with
 * the reason, whether it is an inquiry (a retrieval request: no funds withdrawn until it escalates)
 * and the Visa reason code a real dispute of that kind carries.
 */
export interface DisputeBehaviour {
  reason: 'fraudulent' | 'product_not_received';
  inquiry: boolean;
  networkReasonCode: string;
}

const DISPUTE_CARDS: Record<string, DisputeBehaviour> = {
  '4000000000000259': { reason: 'fraudulent', inquiry: false, networkReasonCode: '10.4' },
  '4000000000002685': { reason: 'product_not_received', inquiry: false, networkReasonCode: '13.1' },
  '4000000000001976': { reason: 'fraudulent', inquiry: true, networkReasonCode: '10.4' },
};

export function disputeBehaviour(number: string): DisputeBehaviour | undefined {
  return Object.hasOwn(DISPUTE_CARDS, number) ? DISPUTE_CARDS[number] : undefined;
}

export function cardTokenNumber(token: string): string | undefined {
  return Object.hasOwn(CARD_TOKENS, token) ? CARD_TOKENS[token] : undefined;
}

export function luhnValid(number: string): boolean {
  if (!/^\d{12,19}$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}

export function brandOf(number: string): string {
  if (/^4/.test(number)) return 'visa';
  if (/^(5[1-5]|2(2[2-9]|[3-6]\d|7[01]|720))/.test(number)) return 'mastercard';
  if (/^3[47]/.test(number)) return 'amex';
  if (/^(6011|65|64[4-9])/.test(number)) return 'discover';
  if (/^(36|30[0-5]|38)/.test(number)) return 'diners';
  if (/^35/.test(number)) return 'jcb';
  if (/^62/.test(number)) return 'unionpay';
  return 'unknown';
}

export function testCard(number: string): TestCard {
  const known = Object.hasOwn(NUMBER_OUTCOMES, number) ? NUMBER_OUTCOMES[number] : undefined;
  const outcome = known?.outcome ?? (APPROVING_NUMBERS.has(number) ? approve : liveCard);
  return { number, brand: brandOf(number), funding: known?.funding ?? 'credit', outcome };
}

/** Stable per card number, like Stripe's fingerprints, without revealing the number. */
export function fingerprint(value: string): string {
  return createHash('sha256').update(`sim-fingerprint:${value}`).digest('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 16);
}

/**
 * Simulated card-present amounts (Stripe Terminal testing docs): the last two digits of the amount
 * choose the issuer's answer. 02 and 03 ask a physical reader for a PIN; a simulated reader
 * approves them after the PIN step.
 */
export function cardPresentAmountOutcome(amount: number): CardOutcome {
  switch (amount % 100) {
    case 1:
      return declined('call_issuer');
    case 5:
      return declined('generic_decline');
    case 55:
      return declined('incorrect_pin');
    case 65:
      return declined('withdrawal_count_limit_exceeded');
    case 75:
      return declined('pin_try_exceeded');
    default:
      return approve;
  }
}

export interface AchOutcome {
  succeeds: boolean;
  code?: string;
  message?: string;
}

const ACH_FAILURES: Record<string, { code: string; message: string }> = {
  '000111111113': { code: 'account_closed', message: "The customer's bank account has been closed." },
  '000111111116': { code: 'no_account', message: "The customer's bank account could not be located." },
  '000222222227': { code: 'insufficient_funds', message: "The customer's account has insufficient funds to cover this payment." },
  '000333333335': { code: 'debit_not_authorized', message: 'The customer has notified their bank that this payment was unauthorized.' },
  '000444444440': { code: 'invalid_currency', message: 'The bank was unable to process this payment because of its currency.' },
};

export function achOutcome(accountNumber: string): AchOutcome {
  const failure = Object.hasOwn(ACH_FAILURES, accountNumber) ? ACH_FAILURES[accountNumber] : undefined;
  return failure ? { succeeds: false, ...failure } : { succeeds: true };
}

export const ACH_TEST_ROUTING = '110000000';

/**
 * Payouts to Stripe's test bank accounts (Connect testing docs, routing 110000000): the same account
 * numbers as the ACH debit failures, with the messages Stripe gives a failed payout.
 */
const PAYOUT_FAILURES: Record<string, { code: string; message: string }> = {
  '000111111116': { code: 'no_account', message: 'The bank account details on file are probably incorrect. No bank account could be located with those details.' },
  '000111111113': { code: 'account_closed', message: 'The bank account has been closed.' },
  '000222222227': { code: 'insufficient_funds', message: 'Your Stripe account has insufficient funds to cover the payout.' },
  '000333333335': { code: 'debit_not_authorized', message: 'Debit transactions are not approved on the bank account. (Stripe requires bank accounts to be set up for both credit and debit payouts.)' },
  '000444444440': { code: 'invalid_currency', message: 'The bank was unable to process this payout because of its currency.' },
};

export function payoutOutcome(accountNumber: string): AchOutcome {
  const failure = Object.hasOwn(PAYOUT_FAILURES, accountNumber) ? PAYOUT_FAILURES[accountNumber] : undefined;
  return failure ? { succeeds: false, ...failure } : { succeeds: true };
}

/** The account that pays: every test connected account starts with it as its bank account. */
export const PAYOUT_TEST_ACCOUNT = '000123456789';

/** `btok_us_verified*` bank account tokens (Connect testing docs) and the account number of each. */
const BANK_TOKENS: Record<string, string> = {
  btok_us_verified: PAYOUT_TEST_ACCOUNT,
  btok_us_verified_noAccount: '000111111116',
  btok_us_verified_accountClosed: '000111111113',
  btok_us_verified_insufficientFunds: '000222222227',
  btok_us_verified_debitNotAuthorized: '000333333335',
  btok_us_verified_invalidCurrency: '000444444440',
};

export function bankTokenAccount(token: string): string | undefined {
  return Object.hasOwn(BANK_TOKENS, token) ? BANK_TOKENS[token] : undefined;
}

/** `pm_usBankAccount_*` tokens and the test account number each one stands for. */
const ACH_TOKENS: Record<string, string> = {
  pm_usBankAccount_success: '000123456789',
  pm_usBankAccount_accountClosed: '000111111113',
  pm_usBankAccount_noAccount: '000111111116',
  pm_usBankAccount_insufficientFunds: '000222222227',
  pm_usBankAccount_debitNotAuthorized: '000333333335',
  pm_usBankAccount_invalidCurrency: '000444444440',
};

export function achTokenAccount(token: string): string | undefined {
  return Object.hasOwn(ACH_TOKENS, token) ? ACH_TOKENS[token] : undefined;
}
