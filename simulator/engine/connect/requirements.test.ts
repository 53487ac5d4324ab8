import { describe, expect, it } from 'vitest';
import { COUNTRY_RULES, requiredFields, verifiesImmediately, verify } from './requirements.js';

describe('requiredFields', () => {
  it('asks a US individual for the SSN last four and a state, a German one for neither', () => {
    const us = requiredFields('US', 'individual');
    expect(us).toContain('individual.ssn_last_4');
    expect(us).toContain('individual.address.state');
    const de = requiredFields('DE', 'individual');
    expect(de.filter((f) => f.includes('ssn') || f.includes('id_number') || f.endsWith('.state'))).toEqual([]);
    expect(requiredFields('CA', 'individual')).toContain('individual.id_number');
  });

  it('lists only the common fields until the business type is known, sorted', () => {
    const unknown = requiredFields('US', null);
    expect(unknown).toEqual(['business_profile.mcc', 'business_profile.url', 'business_type', 'external_account', 'tos_acceptance.date', 'tos_acceptance.ip']);
    const company = requiredFields('GB', 'company');
    expect(company).toEqual([...company].sort());
    expect(company).toContain('company.tax_id');
  });

  it('has test data for every country it onboards', () => {
    for (const [country, rules] of Object.entries(COUNTRY_RULES)) {
      expect(rules.testAddress.postal_code, country).not.toBe('');
      expect(rules.address.includes('state'), country).toBe(rules.testAddress.state !== null);
    }
  });
});

describe("Stripe's test verification values", () => {
  const dob = (value: string, livemode = false) => verify({ field: 'individual.dob.year', value: value.slice(0, 4), dob: value, livemode });

  it('verifies 1901-01-01 and 1902-01-01 (the latter at once), lists 1900-01-01, fails any other DOB in test mode', () => {
    expect(dob('1901-01-01').result).toBe('verified');
    expect(dob('1902-01-01').result).toBe('verified');
    expect(verifiesImmediately('individual.dob.day', '1', '1902-01-01')).toBe(true);
    expect(verifiesImmediately('individual.dob.day', '1', '1901-01-01')).toBe(false);
    expect(dob('1900-01-01').result).toBe('listed');
    expect(dob('1985-06-15')).toMatchObject({ result: 'failed', code: 'verification_failed_keyed_identity' });
    expect(dob('1985-06-15', true).result).toBe('verified');
  });

  it('fails the no-match addresses and the failing id numbers', () => {
    const at = (field: string, value: string) => verify({ field, value, dob: null, livemode: false });
    expect(at('individual.address.line1', 'address_full_match').result).toBe('verified');
    expect(at('individual.address.line1', 'address_no_match')).toMatchObject({ result: 'failed', code: 'verification_failed_address_match' });
    expect(at('company.address.line1', 'address_line1_no_match')).toMatchObject({ result: 'failed', code: 'verification_failed_address_match' });
    expect(at('individual.id_number', '000000000').result).toBe('verified');
    expect(at('individual.id_number', '111111111')).toMatchObject({ result: 'failed', code: 'verification_failed_id_number_match' });
    expect(verifiesImmediately('individual.id_number', '222222222', null)).toBe(true);
    expect(at('company.tax_id', '111111111')).toMatchObject({ result: 'failed', code: 'verification_failed_tax_id_match' });
    expect(at('company.tax_id', '111111112')).toMatchObject({ result: 'failed', code: 'verification_failed_tax_id_not_issued' });
  });
});
