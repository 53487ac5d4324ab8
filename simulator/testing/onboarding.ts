import type Stripe from 'stripe';
import { COUNTRY_RULES, TEST_VALUES } from '../engine/connect/requirements.js';

/**
 * Parameters of `POST /v1/accounts` that make a `custom` connected account ready to charge at
 * once, through the same rules as any account: Stripe's test verification values, with the DOB
 * that verifies immediately (1902-01-01), terms accepted by the platform and a test bank account.
 * What a platform sends in test mode (simulator/README.md, "Onboarding").
 */
export function verifiedAccountParams(options: { country?: string; capabilities?: Stripe.AccountCreateParams.Capabilities } = {}): Stripe.AccountCreateParams {
  const country = options.country ?? 'US';
  const rules = COUNTRY_RULES[country];
  if (!rules) throw new Error(`The simulator does not onboard accounts in ${country}.`);
  const individual: Stripe.AccountCreateParams.Individual = {
    first_name: TEST_VALUES.first_name,
    last_name: TEST_VALUES.last_name,
    email: TEST_VALUES.email,
    phone: TEST_VALUES.phone,
    dob: { day: 1, month: 1, year: 1902 },
    address: { line1: TEST_VALUES.line1, city: rules.testAddress.city, postal_code: rules.testAddress.postal_code, country, ...(rules.testAddress.state ? { state: rules.testAddress.state } : {}) },
  };
  if (rules.personalId) individual.id_number = TEST_VALUES.id_number;
  return {
    type: 'custom',
    country,
    business_type: 'individual',
    individual,
    business_profile: { mcc: TEST_VALUES.mcc, url: TEST_VALUES.url },
    external_account:
      country === 'US'
        ? 'btok_us_verified'
        : ({ object: 'bank_account', country, currency: rules.currency, account_number: rules.testBank.account_number, ...(rules.testBank.routing_number ? { routing_number: rules.testBank.routing_number } : {}) } as unknown as string),
    tos_acceptance: { date: Math.floor(Date.now() / 1000), ip: '127.0.0.1' },
    capabilities: options.capabilities ?? { card_payments: { requested: true }, transfers: { requested: true } },
  };
}
