import { isIP } from 'node:net';
import type Stripe from 'stripe';
import { invalidRequest } from '../../errors.js';
import { unixSeconds } from '../kernel.js';
import { emptyAddress } from '../shapes.js';
import { type AccountRow, type AccountUpdateInput, type AddressInput, type Submitter, collectedByStripe } from './accountTypes.js';
import { businessKind } from './requirements.js';

/**
 * The fields an account holder gives (email, business profile, the individual or the company, the
 * terms of service), each validated as Stripe validates it before it is stored. What they verify
 * to is verification.ts's business.
 */

export function blankProfile(): Stripe.Account.BusinessProfile {
  return {
    annual_revenue: null,
    estimated_worker_count: null,
    mcc: null,
    minority_owned_business_designation: null,
    name: null,
    product_description: null,
    specified_commercial_transactions_act_url: null,
    support_address: emptyAddress(),
    support_email: null,
    support_phone: null,
    support_url: null,
    url: null,
  };
}

const PROFILE_KEYS = ['mcc', 'name', 'product_description', 'support_email', 'support_phone', 'support_url', 'url'] as const;

function checkUrl(value: string, param: string): void {
  let ok = false;
  try {
    const parsed = new URL(value);
    ok = (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname.includes('.');
  } catch {
    ok = false;
  }
  if (!ok) throw invalidRequest('Not a valid URL', param, 'url_invalid');
}

function checkPhone(value: string, param: string): void {
  if (!/^\+?[0-9][0-9 ().-]{5,19}$/.test(value)) throw invalidRequest(`Invalid phone number: ${value}`, param, 'phone_number_invalid');
}

function checkEmail(value: string, param: string): void {
  if (value.length > 254 || !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) throw invalidRequest(`Invalid email address: ${value}`, param, 'email_invalid');
}

/** Free-text fields: Stripe caps names and addresses; 200 characters is more than any of them. */
const MAX_TEXT = 200;

function checkText(value: string, param: string): void {
  if (value.length > MAX_TEXT || /[\u0000-\u001f]/.test(value)) throw invalidRequest(`Invalid ${param}: at most ${MAX_TEXT} printable characters.`, param, 'parameter_invalid');
}

function applyProfile(base: Stripe.Account.BusinessProfile, input: Record<string, string | undefined> | undefined): Stripe.Account.BusinessProfile {
  const next = { ...base };
  for (const [key, value] of Object.entries(input ?? {})) {
    if (!(PROFILE_KEYS as readonly string[]).includes(key)) {
      throw invalidRequest(`Received unknown parameter: business_profile[${key}]`, `business_profile[${key}]`, 'parameter_unknown');
    }
    if (value === undefined) continue;
    const param = `business_profile[${key}]`;
    if (value !== '') {
      checkText(key === 'product_description' ? value.slice(0, MAX_TEXT) : value, param);
      if (key === 'mcc' && !/^\d{4}$/.test(value)) throw invalidRequest(`Invalid mcc: ${value} is not a merchant category code.`, param, 'parameter_invalid');
      if (key === 'url' || key === 'support_url') checkUrl(value, param);
      if (key === 'support_email') checkEmail(value, param);
      if (key === 'support_phone') checkPhone(value, param);
    }
    next[key as (typeof PROFILE_KEYS)[number]] = value === '' ? null : value;
  }
  return next;
}

function blankPerson(accountId: string, personId: string, created: number): Stripe.Person {
  return {
    id: personId,
    object: 'person',
    account: accountId,
    additional_tos_acceptances: { account: { date: null, ip: null, user_agent: null } },
    address: emptyAddress(),
    created,
    dob: { day: null, month: null, year: null },
    email: null,
    first_name: null,
    future_requirements: { alternatives: [], currently_due: [], errors: [], eventually_due: [], past_due: [], pending_verification: [] },
    id_number_provided: false,
    last_name: null,
    metadata: {},
    phone: null,
    relationship: { authorizer: null, director: false, executive: false, legal_guardian: false, owner: false, percent_ownership: null, representative: true, title: null },
    requirements: { alternatives: [], currently_due: [], errors: [], eventually_due: [], past_due: [], pending_verification: [] },
    ssn_last_4_provided: false,
    verification: {
      additional_document: { back: null, details: null, details_code: null, front: null },
      details: null,
      details_code: null,
      document: { back: null, details: null, details_code: null, front: null },
      status: 'unverified',
    },
  } as Stripe.Person;
}

function blankCompany(): Stripe.Account.Company {
  return {
    address: emptyAddress(),
    directors_provided: false,
    executives_provided: false,
    name: null,
    owners_provided: false,
    phone: null,
    tax_id_provided: false,
    verification: { document: { back: null, details: null, details_code: null, front: null } },
  } as Stripe.Account.Company;
}

function applyAddress(target: Stripe.Address, input: AddressInput | undefined, param: string): void {
  for (const [key, value] of Object.entries(input ?? {})) {
    if (value === undefined) continue;
    if (value !== '') checkText(value, `${param}[${key}]`);
    (target as unknown as Record<string, string | null>)[key] = value === '' ? null : key === 'country' ? value.toUpperCase() : value;
  }
}

/** Day, month and year of a date of birth that exists and is not in the future. */
function checkDob(dob: { day?: number | undefined; month?: number | undefined; year?: number | undefined }, now: number): void {
  const { day, month, year } = dob;
  if (day === undefined || month === undefined || year === undefined) {
    throw invalidRequest('A date of birth needs day, month and year.', 'individual[dob]', 'parameter_missing');
  }
  const date = new Date(Date.UTC(year, month - 1, day));
  const valid = year >= 1900 && date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day && date.getTime() <= now;
  if (!valid) throw invalidRequest('Invalid date of birth: it must be a real date after 1900 and not in the future.', 'individual[dob]', 'invalid_dob');
}

export function dobString(person: Stripe.Person | undefined): string | null {
  const dob = person?.dob;
  if (!dob?.year || !dob.month || !dob.day) return null;
  return `${String(dob.year).padStart(4, '0')}-${String(dob.month).padStart(2, '0')}-${String(dob.day).padStart(2, '0')}`;
}

/** Applies identity, profile and terms-of-service input, validating every field; `now` in ms. */
export function applyIdentity(row: AccountRow, input: AccountUpdateInput, submitter: Submitter, now: number): void {
  const body = row.body;
  const onboarding = row.internal.onboarding;
  if (input.email !== undefined) {
    if (input.email !== '') checkEmail(input.email, 'email');
    body.email = input.email === '' ? null : input.email;
  }
  if (input.business_type !== undefined) body.business_type = input.business_type;
  if (input.business_profile !== undefined) body.business_profile = applyProfile(body.business_profile ?? blankProfile(), input.business_profile);
  const kind = businessKind(body.business_type);
  if (input.individual !== undefined) {
    if (kind === 'company') throw invalidRequest('You can only provide `individual` for accounts whose `business_type` is `individual`.', 'individual');
    if (!onboarding) throw invalidRequest('This account was created before identity information was modelled; create a new account.', 'individual');
    const person = body.individual ?? blankPerson(row.id, onboarding.personId, body.created ?? unixSeconds(now));
    const i = input.individual;
    for (const key of ['first_name', 'last_name'] as const) {
      const value = i[key];
      if (value === undefined) continue;
      if (value !== '') checkText(value, `individual[${key}]`);
      person[key] = value === '' ? null : value;
    }
    if (i.email !== undefined) {
      if (i.email !== '') checkEmail(i.email, 'individual[email]');
      person.email = i.email === '' ? null : i.email;
    }
    if (i.phone !== undefined) {
      if (i.phone !== '') checkPhone(i.phone, 'individual[phone]');
      person.phone = i.phone === '' ? null : i.phone;
    }
    if (i.dob !== undefined) {
      if (i.dob === '') person.dob = { day: null, month: null, year: null };
      else {
        checkDob(i.dob, now);
        person.dob = { day: i.dob.day ?? null, month: i.dob.month ?? null, year: i.dob.year ?? null };
      }
    }
    if (i.address !== undefined) {
      const address = person.address ?? emptyAddress();
      applyAddress(address, i.address, 'individual[address]');
      person.address = address;
    }
    if (i.ssn_last_4 !== undefined) {
      if (i.ssn_last_4 !== '' && !/^\d{4}$/.test(i.ssn_last_4)) throw invalidRequest('The last 4 digits of the SSN must be 4 digits.', 'individual[ssn_last_4]', 'parameter_invalid');
      onboarding.ssnLast4 = i.ssn_last_4 === '' ? null : i.ssn_last_4;
    }
    if (i.id_number !== undefined) {
      const digitsOnly = body.country === 'US';
      if (i.id_number !== '' && !(digitsOnly ? /^\d{9}$/ : /^[A-Za-z0-9-]{4,30}$/).test(i.id_number)) {
        throw invalidRequest(digitsOnly ? 'A US id_number is the 9 digits of the SSN or ITIN.' : 'Invalid id_number.', 'individual[id_number]', 'parameter_invalid');
      }
      onboarding.idNumber = i.id_number === '' ? null : i.id_number;
    }
    body.individual = person;
  }
  if (input.company !== undefined) {
    if (kind === 'individual') throw invalidRequest('You can only provide `company` for accounts whose `business_type` is not `individual`.', 'company');
    if (!onboarding) throw invalidRequest('This account was created before identity information was modelled; create a new account.', 'company');
    const company = body.company ?? blankCompany();
    const c = input.company;
    if (c.name !== undefined) {
      if (c.name !== '') checkText(c.name, 'company[name]');
      company.name = c.name === '' ? null : c.name;
    }
    if (c.phone !== undefined) {
      if (c.phone !== '') checkPhone(c.phone, 'company[phone]');
      company.phone = c.phone === '' ? null : c.phone;
    }
    if (c.address !== undefined) {
      const address = company.address ?? emptyAddress();
      applyAddress(address, c.address, 'company[address]');
      company.address = address;
    }
    for (const key of ['owners_provided', 'directors_provided', 'executives_provided'] as const) {
      if (c[key] !== undefined) company[key] = c[key];
    }
    if (c.tax_id !== undefined) {
      if (c.tax_id !== '' && !/^[A-Za-z0-9-]{4,30}$/.test(c.tax_id)) throw invalidRequest('Invalid tax_id.', 'company[tax_id]', 'parameter_invalid');
      onboarding.taxId = c.tax_id === '' ? null : c.tax_id;
      company.tax_id_provided = onboarding.taxId !== null;
    }
    body.company = company;
  }
  if (input.tos_acceptance !== undefined) {
    if (collectedByStripe(row) && !submitter.hostedPage) {
      throw invalidRequest(
        'You cannot accept the Terms of Service on behalf of accounts where controller[requirement_collection]=stripe, which includes Standard and Express accounts.',
        'tos_acceptance',
      );
    }
    const tos = { ...(body.tos_acceptance ?? { date: null, ip: null, user_agent: null }) };
    const t = input.tos_acceptance;
    if (t.date !== undefined) {
      if (t.date <= 0) throw invalidRequest('tos_acceptance[date] must be a Unix timestamp.', 'tos_acceptance[date]', 'parameter_invalid');
      tos.date = t.date;
    }
    if (t.ip !== undefined) {
      if (isIP(t.ip) === 0) throw invalidRequest(`Invalid IP address: ${t.ip}`, 'tos_acceptance[ip]', 'parameter_invalid');
      tos.ip = t.ip;
    }
    if (t.user_agent !== undefined) tos.user_agent = t.user_agent === '' ? null : t.user_agent.slice(0, 500);
    if (t.service_agreement !== undefined) tos.service_agreement = t.service_agreement;
    body.tos_acceptance = tos;
  }
}
