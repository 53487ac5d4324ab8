import type Stripe from 'stripe';

/**
 * Stripe's test verification values ("Testing Stripe Connect", "Testing account verification
 * during API onboarding"): in test mode they pass every check at once, so a connected account
 * filled with them can charge and pay out as soon as it exists. Only test-mode keys accept them;
 * a live account never gets them. Platforms do the same in test mode so their demos and tests
 * charge without walking onboarding.
 */
export const TEST_VERIFICATION = {
  /** 1902-01-01 verifies at once (1901-01-01 verifies too, after a delay; any other date fails). */
  dob: { day: 1, month: 1, year: 1902 },
  /** `address_full_match` passes the address check; `address_no_match` fails it. */
  addressLine1: 'address_full_match',
  /** `000000000` passes the US id-number check; `111111111` fails it. */
  idNumber: '000000000',
  ssnLast4: '0000',
  phone: '0000000000',
  /** A URL Stripe's test mode accepts as the business's website. */
  url: 'https://accessible.stripe.com',
  /** Computer software stores: a merchant category code every country accepts. */
  mcc: '5734',
} as const;

/** A postal address in the country that Stripe's test mode verifies (its line 1 says so). */
const TEST_ADDRESSES: Record<string, { city: string; postal_code: string; state?: string }> = {
  US: { city: 'South San Francisco', postal_code: '94080', state: 'CA' },
  CA: { city: 'Toronto', postal_code: 'M5V 2T6', state: 'ON' },
  GB: { city: 'London', postal_code: 'EC1V 9HX' },
  IE: { city: 'Dublin', postal_code: 'D02 X285' },
  DE: { city: 'Berlin', postal_code: '10115' },
  FR: { city: 'Paris', postal_code: '75001' },
  NL: { city: 'Amsterdam', postal_code: '1012 AB' },
  AU: { city: 'Sydney', postal_code: '2000', state: 'NSW' },
  JP: { city: 'Chiyoda-ku', postal_code: '100-0001', state: 'Tokyo' },
};

/**
 * Stripe's test bank accounts that pay out, per country (Stripe's "Testing payouts"): routing or
 * sort code and account number, or an IBAN where the account number is one.
 */
const TEST_BANKS: Record<string, { currency: string; routing_number?: string; account_number: string }> = {
  US: { currency: 'usd', routing_number: '110000000', account_number: '000123456789' },
  CA: { currency: 'cad', routing_number: '11000-000', account_number: '000123456789' },
  GB: { currency: 'gbp', routing_number: '108800', account_number: '00012345' },
  IE: { currency: 'eur', account_number: 'IE29AIBK93115212345678' },
  DE: { currency: 'eur', account_number: 'DE89370400440532013000' },
  FR: { currency: 'eur', account_number: 'FR1420041010050500013M02606' },
  NL: { currency: 'eur', account_number: 'NL39RABO0300065264' },
  AU: { currency: 'aud', routing_number: '110000', account_number: '000123456' },
  JP: { currency: 'jpy', routing_number: '1100000', account_number: '0001234' },
};

/**
 * The create parameters of a test-mode connected account that is ready at once: a `custom`
 * account (only those take identity details and the service agreement's acceptance from the
 * platform by API) for an individual, filled with the values above.
 */
export function prefilledAccountParams(input: { country: string; businessName: string; merchantId: string; acceptedAt: number }): Stripe.AccountCreateParams {
  const address = TEST_ADDRESSES[input.country] ?? TEST_ADDRESSES.US;
  const bank = TEST_BANKS[input.country];
  return {
    type: 'custom',
    country: input.country,
    business_type: 'individual',
    business_profile: { name: input.businessName, mcc: TEST_VERIFICATION.mcc, url: TEST_VERIFICATION.url },
    individual: {
      first_name: 'Test',
      last_name: 'Merchant',
      email: `merchant+${input.merchantId}@example.com`,
      phone: TEST_VERIFICATION.phone,
      dob: { ...TEST_VERIFICATION.dob },
      address: { line1: TEST_VERIFICATION.addressLine1, ...address, country: input.country },
      ...(input.country === 'US' ? { ssn_last_4: TEST_VERIFICATION.ssnLast4 } : {}),
      // US accounts need the ID number eventually, Canadian ones at once.
      ...(input.country === 'US' || input.country === 'CA' ? { id_number: TEST_VERIFICATION.idNumber } : {}),
    },
    ...(bank ? { external_account: { object: 'bank_account', country: input.country, ...bank } } : {}),
    tos_acceptance: { date: Math.floor(input.acceptedAt / 1000), ip: '127.0.0.1' },
    capabilities: { card_payments: { requested: true }, transfers: { requested: true } },
    metadata: { pos_merchant_id: input.merchantId, pos_prefilled: 'test_values' },
  };
}
