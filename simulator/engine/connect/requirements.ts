import type Stripe from 'stripe';

/**
 * What a connected account must provide before Stripe enables `card_payments` and `transfers`, per
 * country and business type (Stripe's "Required verification information", minimum for the full
 * service agreement), and how Stripe's test verification values verify or fail
 * (docs.stripe.com/connect/testing). Pure functions: verification.ts owns the state.
 */

export type BusinessKind = 'individual' | 'company';

interface CountryRules {
  currency: string;
  /** Address fields Stripe verifies for a person or company there. */
  address: readonly ('line1' | 'city' | 'postal_code' | 'state')[];
  /** The personal id number Stripe collects at onboarding: the SSN's last four in the US, a national id elsewhere, or none. */
  personalId: 'ssn_last_4' | 'id_number' | null;
  /** Values of Stripe's test data for a valid address there (line1 is always `address_full_match`). */
  testAddress: { city: string; state: string | null; postal_code: string };
  /** A test bank account Stripe accepts there: US routing and account numbers, or an IBAN/local number. */
  testBank: { routing_number?: string; account_number: string };
}

const WITH_STATE = ['line1', 'city', 'postal_code', 'state'] as const;
const WITHOUT_STATE = ['line1', 'city', 'postal_code'] as const;

/**
 * The countries the simulator onboards (those the platform sells in). Stripe's lists differ a little
 * more than this (Japan's kana and kanji names, Singapore's proof of address); those extras are not
 * modelled, and the table in simulator/README.md says so.
 */
export const COUNTRY_RULES: Record<string, CountryRules> = {
  US: { currency: 'usd', address: WITH_STATE, personalId: 'ssn_last_4', testAddress: { city: 'San Francisco', state: 'CA', postal_code: '94103' }, testBank: { routing_number: '110000000', account_number: '000123456789' } },
  CA: { currency: 'cad', address: WITH_STATE, personalId: 'id_number', testAddress: { city: 'Toronto', state: 'ON', postal_code: 'M5H 2N2' }, testBank: { routing_number: '11000-000', account_number: '000123456789' } },
  GB: { currency: 'gbp', address: WITHOUT_STATE, personalId: null, testAddress: { city: 'London', state: null, postal_code: 'WC2N 5DU' }, testBank: { routing_number: '108800', account_number: '00012345' } },
  IE: { currency: 'eur', address: WITHOUT_STATE, personalId: null, testAddress: { city: 'Dublin', state: null, postal_code: 'D02 X285' }, testBank: { account_number: 'IE29AIBK93115212345678' } },
  DE: { currency: 'eur', address: WITHOUT_STATE, personalId: null, testAddress: { city: 'Berlin', state: null, postal_code: '10115' }, testBank: { account_number: 'DE89370400440532013000' } },
  FR: { currency: 'eur', address: WITHOUT_STATE, personalId: null, testAddress: { city: 'Paris', state: null, postal_code: '75001' }, testBank: { account_number: 'FR1420041010050500013M02606' } },
  NL: { currency: 'eur', address: WITHOUT_STATE, personalId: null, testAddress: { city: 'Amsterdam', state: null, postal_code: '1012 JS' }, testBank: { account_number: 'NL39RABO0300065264' } },
  ES: { currency: 'eur', address: WITHOUT_STATE, personalId: null, testAddress: { city: 'Madrid', state: null, postal_code: '28001' }, testBank: { account_number: 'ES0700120345030000067890' } },
  IT: { currency: 'eur', address: WITHOUT_STATE, personalId: null, testAddress: { city: 'Roma', state: null, postal_code: '00184' }, testBank: { account_number: 'IT40S0542811101000000123456' } },
  CH: { currency: 'chf', address: WITHOUT_STATE, personalId: null, testAddress: { city: 'Zürich', state: null, postal_code: '8001' }, testBank: { account_number: 'CH9300762011623852957' } },
  AU: { currency: 'aud', address: WITH_STATE, personalId: null, testAddress: { city: 'Sydney', state: 'NSW', postal_code: '2000' }, testBank: { routing_number: '110000', account_number: '000123456' } },
  NZ: { currency: 'nzd', address: WITHOUT_STATE, personalId: null, testAddress: { city: 'Auckland', state: null, postal_code: '1010' }, testBank: { routing_number: '110000', account_number: '0000000010' } },
  JP: { currency: 'jpy', address: WITH_STATE, personalId: null, testAddress: { city: 'Chiyoda-ku', state: 'Tokyo', postal_code: '100-0001' }, testBank: { routing_number: '1100000', account_number: '0001234' } },
  SG: { currency: 'sgd', address: ['line1', 'postal_code'], personalId: 'id_number', testAddress: { city: 'Singapore', state: null, postal_code: '018989' }, testBank: { routing_number: '1100-000', account_number: '000123456' } },
};

export function countryRules(country: string): CountryRules | undefined {
  return Object.hasOwn(COUNTRY_RULES, country) ? COUNTRY_RULES[country] : undefined;
}

export function businessKind(type: string | null | undefined): BusinessKind | null {
  if (!type) return null;
  return type === 'individual' ? 'individual' : 'company';
}

/** Requirements every account has whatever its business type. */
const COMMON = ['business_profile.mcc', 'business_profile.url', 'external_account', 'tos_acceptance.date', 'tos_acceptance.ip'];

/** Every field due for an account of this country and business type, sorted as Stripe sorts them (alphabetically). */
export function requiredFields(country: string, kind: BusinessKind | null): string[] {
  const rules = countryRules(country) ?? COUNTRY_RULES.US!;
  const fields = [...COMMON, 'business_type'];
  if (kind === 'individual') {
    for (const part of rules.address) fields.push(`individual.address.${part}`);
    fields.push('individual.dob.day', 'individual.dob.month', 'individual.dob.year', 'individual.email', 'individual.first_name', 'individual.last_name', 'individual.phone');
    if (rules.personalId) fields.push(`individual.${rules.personalId}`);
  } else if (kind === 'company') {
    for (const part of rules.address) fields.push(`company.address.${part}`);
    fields.push('company.name', 'company.phone', 'company.tax_id');
  }
  return fields.sort();
}

/** Fields whose values Stripe verifies against records (the rest are only checked for presence). */
export function isVerifiedField(field: string): boolean {
  return (
    /^(individual|company)\.address\./.test(field) ||
    /^individual\.(first_name|last_name|dob\.(day|month|year)|ssn_last_4|id_number)$/.test(field) ||
    /^company\.(name|tax_id)$/.test(field)
  );
}

/** The alternative Stripe offers for a website: a description of the product. */
export const URL_ALTERNATIVE: Stripe.Account.Requirements.Alternative = {
  alternative_fields_due: ['business_profile.product_description'],
  original_fields_due: ['business_profile.url'],
};

export type VerificationOutcome =
  | { result: 'verified' }
  | { result: 'failed'; code: Stripe.Account.Requirements.Error.Code; reason: string }
  /** Stripe's OFAC test value: the account is put under review as listed. */
  | { result: 'listed' };

/** Stripe's test DOBs: 1901-01-01 verifies, 1902-01-01 verifies at once, 1900-01-01 raises an OFAC alert. */
const DOB_VERIFIES = '1901-01-01';
const DOB_VERIFIES_IMMEDIATELY = '1902-01-01';
const DOB_OFAC = '1900-01-01';
/** Stripe's test id numbers: 000000000 verifies, 111111111 fails, 222222222 verifies at once. */
const ID_FAILS = '111111111';
const ID_VERIFIES_IMMEDIATELY = '222222222';
/** Stripe's test business tax ids: 111111111 does not match, 111111112 was never issued. */
const TAX_ID_NOT_ISSUED = '111111112';

export interface VerificationInput {
  field: string;
  value: string;
  /** The whole date of birth, `YYYY-MM-DD`, for the dob fields. */
  dob: string | null;
  livemode: boolean;
}

/**
 * The verdict on one submitted field. Stripe's testing docs: in test mode any DOB other than the
 * test DOBs fails verification; address line1 `address_no_match` / `address_line1_no_match` fail;
 * the id number 111111111 fails. Live mode cannot check real identities offline, so there only the
 * failing test values fail (the simulator's live mode accepts test values, see README).
 */
export function verify(input: VerificationInput): VerificationOutcome {
  const { field, value } = input;
  if (field.startsWith('individual.dob.')) {
    if (input.dob === DOB_OFAC) return { result: 'listed' };
    if (input.dob === DOB_VERIFIES || input.dob === DOB_VERIFIES_IMMEDIATELY || input.livemode) return { result: 'verified' };
    return {
      result: 'failed',
      code: 'verification_failed_keyed_identity',
      reason: 'The identity information you entered cannot be verified. Please correct any errors or upload a document that matches the identity fields (e.g., name and date of birth) that you entered.',
    };
  }
  if (/\.address\.line1$/.test(field) && (value === 'address_no_match' || value === 'address_line1_no_match')) {
    return {
      result: 'failed',
      code: 'verification_failed_address_match',
      reason: 'The address on your account could not be verified. Please correct any errors in the address field or upload a document that includes the address.',
    };
  }
  if (field === 'individual.id_number' && value === ID_FAILS) {
    return {
      result: 'failed',
      code: 'verification_failed_id_number_match',
      reason: 'The ID number you provided could not be verified. Please correct any errors in the ID number field or upload a document that matches the identity fields that you entered.',
    };
  }
  if (field === 'company.tax_id' && value === ID_FAILS) {
    return { result: 'failed', code: 'verification_failed_tax_id_match', reason: 'The tax ID number you provided could not be verified. Please correct the tax ID number or upload a document that shows it.' };
  }
  if (field === 'company.tax_id' && value === TAX_ID_NOT_ISSUED) {
    return { result: 'failed', code: 'verification_failed_tax_id_not_issued', reason: 'The tax ID number you provided has not been issued. Please correct the tax ID number.' };
  }
  return { result: 'verified' };
}

/** Test values whose verification Stripe returns in the response itself rather than later. */
export function verifiesImmediately(field: string, value: string, dob: string | null): boolean {
  if (field.startsWith('individual.dob.')) return dob === DOB_VERIFIES_IMMEDIATELY;
  return (field === 'individual.id_number' || field === 'company.tax_id') && value === ID_VERIFIES_IMMEDIATELY;
}

/** Stripe's test values that verify, for the hosted page's "Use test data" and the README. */
export const TEST_VALUES = {
  first_name: 'Jenny',
  last_name: 'Rosen',
  dob: { day: 1, month: 1, year: 1901 },
  line1: 'address_full_match',
  email: 'jenny.rosen@example.com',
  phone: '0000000000',
  ssn_last_4: '0000',
  id_number: '000000000',
  tax_id: '000000000',
  company_name: 'Test Company',
  /** Eating places and restaurants: the kind of merchant pos serves. */
  mcc: '5812',
  url: 'https://accessible.stripe.com',
} as const;
