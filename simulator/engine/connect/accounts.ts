import { isIP } from 'node:net';
import type Stripe from 'stripe';
import { newAccountId, newId } from '../../ids.js';
import { invalidRequest } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getAny, getScoped, systemOrigin, unixSeconds } from '../kernel.js';
import { emptyAddress, emptyRequirements, list, type ListEnvelope, type Metadata, mergeMetadata } from '../shapes.js';
import { DEFAULT_DELAY_DAYS } from '../ledger.js';
import type { BankAccountHashInput, BankAccounts, ExternalAccountInput } from './bankAccounts.js';
import { COUNTRY_RULES, URL_ALTERNATIVE, businessKind, countryRules, isVerifiedField, requiredFields, verifiesImmediately, verify } from './requirements.js';

/**
 * Connect accounts: their identity, requirements, capabilities and payout schedule. A new account
 * has requirements due (engine/requirements.ts) and its capabilities stay `inactive` until nothing is
 * due; submitted identity fields are `pending_verification` for the verification delay and then
 * verified or failed by Stripe's test values. Every change of requirements, capabilities or the
 * enabled flags is an `account.updated` (and `capability.updated`) Connect event.
 */

export type CapabilityStatus = Stripe.Capability.Status;

interface CapabilityState {
  requested: boolean;
  requestedAt: number | null;
  /** The status last rendered, to tell which capabilities changed. */
  status: CapabilityStatus;
  /** Stripe's own review (control API); null lets the requirements decide. */
  review?: CapabilityStatus | null;
}

interface FailedField {
  value: string;
  code: Stripe.Account.Requirements.Error.Code;
  reason: string;
}

interface Onboarding {
  /** Identity numbers Stripe never returns (only `*_provided`). */
  idNumber: string | null;
  ssnLast4: string | null;
  taxId: string | null;
  /** Field → the value that was verified. */
  verified: Record<string, string>;
  /** Field → the value submitted and awaiting verification. */
  pending: Record<string, string>;
  failed: Record<string, FailedField>;
  /** Stripe's OFAC test DOB: the account is under review as listed and stays disabled. */
  listed: boolean;
  verificationTimerId: string | null;
  personId: string;
}

export interface AccountInternal {
  capabilities: Record<string, CapabilityState>;
  /** The automatic payout run due for this account, if any (payouts.ts). */
  payoutRunTimerId?: string | null;
  /** Absent on accounts stored before requirements were modelled: they stay as they were (active). */
  onboarding?: Onboarding;
}

export type AccountRow = StoredObject<Stripe.Account, AccountInternal>;

/** Capabilities the simulator knows; any other name is an unknown parameter, as on Stripe. */
export const KNOWN_CAPABILITIES = [
  'card_payments',
  'transfers',
  'us_bank_account_ach_payments',
  'link_payments',
  'cashapp_payments',
  'affirm_payments',
  'klarna_payments',
  'afterpay_clearpay_payments',
  'bank_transfer_payments',
  'legacy_payments',
  'tax_reporting_us_1099_k',
  'card_issuing',
  'treasury',
] as const;

/** Capabilities Stripe reviews before enabling: meeting the requirements is not enough. */
const REVIEWED_CAPABILITIES = new Set(['us_bank_account_ach_payments']);

export const ACH_CAPABILITY = 'us_bank_account_ach_payments';

export interface AddressInput {
  line1?: string | undefined;
  line2?: string | undefined;
  city?: string | undefined;
  state?: string | undefined;
  postal_code?: string | undefined;
  country?: string | undefined;
}

export interface IndividualInput {
  first_name?: string | undefined;
  last_name?: string | undefined;
  email?: string | undefined;
  phone?: string | undefined;
  dob?: { day?: number | undefined; month?: number | undefined; year?: number | undefined } | '' | undefined;
  address?: AddressInput | undefined;
  id_number?: string | undefined;
  ssn_last_4?: string | undefined;
}

export interface CompanyInput {
  name?: string | undefined;
  phone?: string | undefined;
  tax_id?: string | undefined;
  address?: AddressInput | undefined;
  owners_provided?: boolean | undefined;
  directors_provided?: boolean | undefined;
  executives_provided?: boolean | undefined;
}

export interface TosInput {
  date?: number | undefined;
  ip?: string | undefined;
  user_agent?: string | undefined;
  service_agreement?: 'full' | 'recipient' | undefined;
}

export interface ControllerInput {
  fees?: { payer?: 'account' | 'application' | undefined } | undefined;
  losses?: { payments?: 'application' | 'stripe' | undefined } | undefined;
  requirement_collection?: 'application' | 'stripe' | undefined;
  stripe_dashboard?: { type?: 'express' | 'full' | 'none' | undefined } | undefined;
}

export interface AccountUpdateInput {
  email?: string | undefined;
  business_type?: Stripe.Account.BusinessType | undefined;
  business_profile?: Record<string, string | undefined> | undefined;
  individual?: IndividualInput | undefined;
  company?: CompanyInput | undefined;
  tos_acceptance?: TosInput | undefined;
  external_account?: string | BankAccountHashInput | undefined;
  capabilities?: Record<string, { requested?: boolean | undefined }> | undefined;
  metadata?: Metadata | '' | undefined;
  settings?: { payouts?: { schedule?: PayoutScheduleInput | undefined } | undefined } | undefined;
}

export interface AccountCreateInput extends AccountUpdateInput {
  type?: 'custom' | 'express' | 'standard' | undefined;
  controller?: ControllerInput | undefined;
  country?: string | undefined;
  default_currency?: string | undefined;
}

export interface PayoutScheduleInput {
  interval?: string | undefined;
  delay_days?: number | 'minimum' | undefined;
}

/** Who submits a change: the platform through the API, or the account holder on the hosted onboarding page. */
export interface Submitter {
  hostedPage: boolean;
  ip?: string | undefined;
  userAgent?: string | undefined;
}

const PLATFORM: Submitter = { hostedPage: false };

function platformScope(scope: Scope): Scope {
  return { livemode: scope.livemode, account: null };
}

function blankProfile(): Stripe.Account.BusinessProfile {
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

/** A new account's default currency is its country's, as Stripe sets it. */
function currencyOf(country: string): string {
  return countryRules(country)?.currency ?? 'usd';
}

function defaultSettings(): Stripe.Account.Settings {
  return {
    bacs_debit_payments: { display_name: null, service_user_number: null },
    branding: { icon: null, logo: null, primary_color: null, secondary_color: null },
    card_issuing: { tos_acceptance: { date: null, ip: null } },
    card_payments: {
      decline_on: { avs_failure: false, cvc_failure: false },
      statement_descriptor_prefix: null,
      statement_descriptor_prefix_kana: null,
      statement_descriptor_prefix_kanji: null,
    },
    dashboard: { display_name: null, timezone: 'Etc/UTC' },
    invoices: { default_account_tax_ids: null, hosted_payment_method_save: null },
    payments: {
      statement_descriptor: null,
      statement_descriptor_kana: null,
      statement_descriptor_kanji: null,
      statement_descriptor_prefix_kana: null,
      statement_descriptor_prefix_kanji: null,
    },
    payouts: { debit_negative_balances: true, schedule: { delay_days: 2, interval: 'daily' }, statement_descriptor: null },
    sepa_debit_payments: {},
  } as Stripe.Account.Settings;
}

/**
 * Stripe's controller properties for each account type, and the type that controller properties
 * stand for (`none` when they match no classic type).
 */
function resolveController(type: AccountCreateInput['type'], input: ControllerInput | undefined): { type: Stripe.Account.Type; controller: Stripe.Account.Controller } {
  if (type && input) throw invalidRequest('You cannot specify both `type` and `controller`.', 'controller');
  let collection: 'application' | 'stripe';
  let dashboard: 'express' | 'full' | 'none';
  let payer: string;
  let losses: 'application' | 'stripe';
  if (input) {
    collection = input.requirement_collection ?? 'stripe';
    dashboard = input.stripe_dashboard?.type ?? (collection === 'application' ? 'none' : 'full');
    payer = input.fees?.payer ?? (dashboard === 'full' ? 'account' : 'application');
    losses = input.losses?.payments ?? (dashboard === 'full' ? 'stripe' : 'application');
    if (collection === 'application' && dashboard !== 'none') {
      throw invalidRequest('controller[requirement_collection]=application is only supported with controller[stripe_dashboard][type]=none.', 'controller[requirement_collection]');
    }
  } else {
    const chosen = type ?? 'custom';
    collection = chosen === 'custom' ? 'application' : 'stripe';
    dashboard = chosen === 'custom' ? 'none' : chosen === 'express' ? 'express' : 'full';
    payer = chosen === 'standard' ? 'account' : chosen === 'express' ? 'application_express' : 'application_custom';
    losses = chosen === 'standard' ? 'stripe' : 'application';
  }
  const resolved: Stripe.Account.Type =
    type ?? (collection === 'application' ? 'custom' : dashboard === 'express' ? 'express' : dashboard === 'full' ? 'standard' : 'none');
  return {
    type: resolved,
    controller: {
      fees: { payer },
      is_controller: true,
      losses: { payments: losses },
      requirement_collection: collection,
      stripe_dashboard: { type: dashboard },
      type: 'application',
    } as Stripe.Account.Controller,
  };
}

type Requirements = ReturnType<typeof emptyRequirements>;

/** The account's requirements as rendered by `refresh` (always complete lists). */
function requirementsOf(body: Stripe.Account): Requirements {
  return (body.requirements as Requirements | undefined) ?? emptyRequirements();
}

function capabilityObject(accountId: string, name: string, state: CapabilityState | undefined, requirements: Requirements): Stripe.Capability {
  const applies = state?.requested === true;
  return {
    id: name,
    object: 'capability',
    account: accountId,
    future_requirements: emptyRequirements(),
    requested: state?.requested ?? false,
    requested_at: state?.requestedAt ?? null,
    requirements: applies ? structuredClone(requirements) : emptyRequirements(),
    status: state?.status ?? 'inactive',
  };
}

/**
 * The payout schedules the simulator runs: `daily` (Stripe's default) and `manual`. Weekly and
 * monthly anchors are refused rather than silently run daily.
 */
function applySchedule(settings: Stripe.Account.Settings, input: PayoutScheduleInput | undefined): void {
  if (!input || !settings.payouts) return;
  const schedule = settings.payouts.schedule;
  if (input.interval !== undefined) {
    if (input.interval !== 'daily' && input.interval !== 'manual') {
      throw invalidRequest(
        `The simulator runs daily and manual payout schedules only, not ${input.interval}.`,
        'settings[payouts][schedule][interval]',
        'parameter_invalid',
      );
    }
    schedule.interval = input.interval;
  }
  if (input.delay_days !== undefined) {
    const days = input.delay_days === 'minimum' ? DEFAULT_DELAY_DAYS : input.delay_days;
    if (days < DEFAULT_DELAY_DAYS) {
      throw invalidRequest(
        `delay_days must be at least ${DEFAULT_DELAY_DAYS}, the minimum for US accounts (or 'minimum').`,
        'settings[payouts][schedule][delay_days]',
        'parameter_invalid',
      );
    }
    schedule.delay_days = days;
  }
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

function dobString(person: Stripe.Person | undefined): string | null {
  const dob = person?.dob;
  if (!dob?.year || !dob.month || !dob.day) return null;
  return `${String(dob.year).padStart(4, '0')}-${String(dob.month).padStart(2, '0')}-${String(dob.day).padStart(2, '0')}`;
}

export class Accounts {
  constructor(
    private readonly kernel: Kernel,
    private readonly bankAccounts: BankAccounts,
  ) {}

  private assertKnown(name: string, param: string): void {
    if (!(KNOWN_CAPABILITIES as readonly string[]).includes(name)) {
      throw invalidRequest(`Received unknown parameter: ${param}`, param, 'parameter_unknown');
    }
  }

  private request(internal: AccountInternal, name: string, requested: boolean): void {
    const now = unixSeconds(this.kernel.now());
    const current = internal.capabilities[name];
    if (requested) {
      if (current?.requested) return;
      internal.capabilities[name] = { requested: true, requestedAt: now, status: current?.status ?? 'inactive', review: current?.review ?? null };
      return;
    }
    if (!current?.requested) return;
    internal.capabilities[name] = { requested: false, requestedAt: null, status: 'inactive', review: null };
  }

  create(origin: Origin, input: AccountCreateInput): Stripe.Account {
    if (origin.scope.account !== null) {
      throw invalidRequest('Connected accounts can only be created by the platform; remove the Stripe-Account header.');
    }
    const country = (input.country ?? 'US').toUpperCase();
    if (!countryRules(country)) {
      throw invalidRequest(`Country '${input.country ?? ''}' is unknown or not supported by the simulator (it onboards accounts in ${Object.keys(COUNTRY_RULES).join(', ')}).`, 'country', 'country_unsupported');
    }
    const { type, controller } = resolveController(input.type, input.controller);
    const id = newAccountId();
    const created = unixSeconds(this.kernel.now());
    const internal: AccountInternal = {
      capabilities: {},
      onboarding: { idNumber: null, ssnLast4: null, taxId: null, verified: {}, pending: {}, failed: {}, listed: false, verificationTimerId: null, personId: newId('person') },
    };
    for (const [name, value] of Object.entries(input.capabilities ?? {})) {
      this.assertKnown(name, `capabilities[${name}]`);
      if (value.requested) this.request(internal, name, true);
    }
    const defaultCurrency = input.default_currency?.toLowerCase() ?? currencyOf(country);
    if (!/^[a-z]{3}$/.test(defaultCurrency)) throw invalidRequest(`Invalid currency: ${input.default_currency ?? ''}.`, 'default_currency', 'parameter_invalid');
    const draft: Stripe.Account = {
      id,
      object: 'account',
      business_profile: blankProfile(),
      business_type: null,
      capabilities: {},
      charges_enabled: false,
      controller,
      country,
      created,
      default_currency: defaultCurrency,
      details_submitted: false,
      email: null,
      external_accounts: list(`/v1/accounts/${id}/external_accounts`, []) as unknown as Stripe.ApiList<Stripe.BankAccount | Stripe.Card>,
      future_requirements: emptyRequirements(),
      metadata: mergeMetadata({}, input.metadata),
      payouts_enabled: false,
      requirements: emptyRequirements(),
      settings: defaultSettings(),
      tos_acceptance: { date: null, ip: null, user_agent: null },
      type,
    };
    const row: AccountRow = { seq: 0, id, type: 'account', livemode: origin.scope.livemode, account: null, body: draft, internal };
    this.applyIdentity(row, input, PLATFORM);
    if (draft.settings) applySchedule(draft.settings, input.settings?.payouts?.schedule);
    this.refresh(row);
    const stored = this.kernel.store.insert<Stripe.Account, AccountInternal>('account', platformScope(origin.scope), row.body, row.internal);
    if (input.external_account !== undefined) {
      this.bankAccounts.create(origin, id, { external_account: input.external_account });
      Object.assign(stored, this.kernel.store.find<Stripe.Account, AccountInternal>(id));
    }
    this.settle(origin, stored);
    // Stripe announces each requested capability of a new account, and the account with them.
    const requested = Object.entries(stored.internal.capabilities).filter(([, state]) => state.requested).map(([name]) => name);
    const accountOrigin = this.accountOrigin(origin, stored);
    for (const name of requested) this.kernel.events.emit(accountOrigin, 'capability.updated', this.capability(stored, name));
    if (requested.length > 0) this.kernel.events.emit(accountOrigin, 'account.updated', stored.body);
    return stored.body;
  }

  retrieve(scope: Scope, id: string): AccountRow {
    if (scope.account !== null && scope.account !== id) {
      throw invalidRequest(`The account '${id}' is not reachable with Stripe-Account '${scope.account}'.`, 'account', 'account_invalid');
    }
    return getScoped<Stripe.Account, AccountInternal>(this.kernel, 'account', platformScope(scope), id, 'account', 'account');
  }

  /** The account of a `Stripe-Account` header, if it exists in that mode. */
  findConnected(livemode: boolean, id: string): AccountRow | undefined {
    const row = this.kernel.store.find<Stripe.Account, AccountInternal>(id);
    return row && row.type === 'account' && row.livemode === livemode ? row : undefined;
  }

  update(origin: Origin, id: string, input: AccountUpdateInput, submitter: Submitter = PLATFORM): Stripe.Account {
    const row = this.retrieve(origin.scope, id);
    const before = structuredClone(row.body);
    const beforeCapabilities = this.statuses(row);
    for (const [name, value] of Object.entries(input.capabilities ?? {})) {
      this.assertKnown(name, `capabilities[${name}]`);
      if (value.requested !== undefined) this.request(row.internal, name, value.requested);
    }
    this.applyIdentity(row, input, submitter);
    row.body.metadata = mergeMetadata(row.body.metadata ?? {}, input.metadata);
    if (row.body.settings) applySchedule(row.body.settings, input.settings?.payouts?.schedule);
    this.kernel.store.save(row);
    if (input.external_account !== undefined) {
      this.bankAccounts.create(origin, row.id, { external_account: input.external_account });
      Object.assign(row, this.kernel.store.find<Stripe.Account, AccountInternal>(row.id));
    }
    this.settle(origin, row);
    this.announce(origin, row, before, beforeCapabilities, Object.keys(input.capabilities ?? {}));
    return row.body;
  }

  /** `POST /v1/accounts/:id/external_accounts`: the bank account may satisfy the `external_account` requirement. */
  addExternalAccount(origin: Origin, id: string, input: ExternalAccountInput): Stripe.BankAccount {
    const row = this.retrieve(origin.scope, id);
    const before = structuredClone(row.body);
    const beforeCapabilities = this.statuses(row);
    const bank = this.bankAccounts.create(origin, row.id, input);
    Object.assign(row, this.kernel.store.find<Stripe.Account, AccountInternal>(row.id));
    this.settle(origin, row);
    this.announce(origin, row, before, beforeCapabilities, []);
    return bank;
  }

  list(scope: Scope, limit: number, startingAfter?: string, endingBefore?: string): ListEnvelope<Stripe.Account> {
    const page = this.kernel.store.list<Stripe.Account, AccountInternal>('account', platformScope(scope), {}, { limit, startingAfter, endingBefore });
    return list('/v1/accounts', page.data.map((row) => row.body), page.hasMore);
  }

  listCapabilities(scope: Scope, id: string): ListEnvelope<Stripe.Capability> {
    const row = this.retrieve(scope, id);
    const data = Object.entries(row.internal.capabilities)
      .filter(([, state]) => state.requested || state.status === 'active')
      .map(([name]) => this.capability(row, name));
    return list(`/v1/accounts/${id}/capabilities`, data);
  }

  retrieveCapability(scope: Scope, id: string, name: string): Stripe.Capability {
    const row = this.retrieve(scope, id);
    this.assertKnown(name, 'capability');
    return this.capability(row, name);
  }

  updateCapability(origin: Origin, id: string, name: string, requested: boolean | undefined): Stripe.Capability {
    this.assertKnown(name, 'capability');
    if (requested !== undefined) this.update(origin, id, { capabilities: { [name]: { requested } } });
    return this.capability(this.retrieve(origin.scope, id), name);
  }

  /** Control API: what Stripe's review decides, whatever the requirements say. */
  setCapabilityStatus(origin: Origin, id: string, name: string, status: CapabilityStatus): Stripe.Capability {
    const row = getAny<Stripe.Account, AccountInternal>(this.kernel, 'account', id, 'account');
    this.assertKnown(name, 'capability');
    const before = structuredClone(row.body);
    const current = row.internal.capabilities[name];
    row.internal.capabilities[name] = {
      requested: current?.requested ?? status !== 'inactive',
      requestedAt: current?.requestedAt ?? unixSeconds(this.kernel.now()),
      status: current?.status ?? 'inactive',
      review: status,
    };
    const beforeCapabilities = this.statuses(row);
    const scoped = { ...origin, scope: platformScope({ livemode: row.livemode, account: null }) };
    this.settle(scoped, row);
    this.announce(scoped, row, before, beforeCapabilities, [name]);
    return this.capability(row, name);
  }

  /**
   * A direct charge (or one on behalf of the account) needs the account's `card_payments` capability
   * active; Stripe refuses it otherwise, with these messages.
   */
  assertCanCharge(row: AccountRow): void {
    const state = row.internal.capabilities.card_payments;
    if (!state?.requested && state?.status !== 'active') {
      throw invalidRequest('You cannot create a charge on a connected account without the `card_payments` capability enabled.');
    }
    if (state.status !== 'active') {
      throw invalidRequest(
        `Your account cannot currently make charges. To find out why charge creation is currently disabled, look at the \`requirements.disabled_reason\` property on this account (/v1/accounts/${row.id}).`,
      );
    }
  }

  capabilityStatus(row: AccountRow, name: string): CapabilityStatus {
    return row.internal.capabilities[name]?.status ?? 'inactive';
  }

  /** Timer: Stripe's verification of the submitted identity fields comes back. */
  completeVerification(raw: unknown): void {
    const payload = raw as { account: string; apiVersion: string };
    const row = this.kernel.store.find<Stripe.Account, AccountInternal>(payload.account);
    if (!row || row.type !== 'account' || !row.internal.onboarding) return;
    row.internal.onboarding.verificationTimerId = null;
    const before = structuredClone(row.body);
    const beforeCapabilities = this.statuses(row);
    this.runVerification(row);
    const origin = systemOrigin({ livemode: row.livemode, account: null }, payload.apiVersion);
    this.settle(origin, row);
    this.announce(origin, row, before, beforeCapabilities, []);
  }

  /** Fields due on the account now (for the hosted onboarding page). */
  due(row: AccountRow, eventually: boolean): string[] {
    const requirements = requirementsOf(row.body);
    return [...(eventually ? requirements.eventually_due : requirements.currently_due)];
  }

  /** Whether the platform or Stripe collects this account's requirements (`controller.requirement_collection`). */
  collectedByStripe(row: AccountRow): boolean {
    return (row.body.controller as { requirement_collection?: string } | undefined)?.requirement_collection === 'stripe';
  }

  private capability(row: AccountRow, name: string): Stripe.Capability {
    return capabilityObject(row.id, name, row.internal.capabilities[name], requirementsOf(row.body));
  }

  private statuses(row: AccountRow): Record<string, CapabilityStatus> {
    return Object.fromEntries(Object.entries(row.internal.capabilities).map(([name, state]) => [name, state.status]));
  }

  private accountOrigin(origin: Origin, row: AccountRow): Origin {
    return { ...origin, scope: { livemode: row.livemode, account: row.id } };
  }

  /**
   * Connect events for a change: `capability.updated` for each capability whose status changed (or
   * that was named in the request), then `account.updated` with the top-level fields that changed
   * in `previous_attributes`, if any did.
   */
  private announce(origin: Origin, row: AccountRow, before: Stripe.Account, beforeCapabilities: Record<string, CapabilityStatus>, named: string[]): void {
    const accountOrigin = this.accountOrigin(origin, row);
    for (const name of Object.keys(row.internal.capabilities)) {
      if (named.includes(name) || beforeCapabilities[name] !== row.internal.capabilities[name]?.status) {
        this.kernel.events.emit(accountOrigin, 'capability.updated', this.capability(row, name));
      }
    }
    const previous: Record<string, unknown> = {};
    const now = row.body as unknown as Record<string, unknown>;
    const old = before as unknown as Record<string, unknown>;
    for (const key of Object.keys(now)) {
      if (JSON.stringify(now[key]) !== JSON.stringify(old[key])) previous[key] = old[key] ?? null;
    }
    if (Object.keys(previous).length > 0) this.kernel.events.emit(accountOrigin, 'account.updated', row.body, previous);
  }

  /**
   * Starts verification of newly submitted fields (at once for Stripe's immediate test values,
   * else after the verification delay), re-renders and saves.
   */
  private settle(origin: Origin, row: AccountRow): void {
    this.refresh(row);
    const onboarding = row.internal.onboarding;
    if (onboarding) {
      const pending = Object.entries(onboarding.pending);
      const dob = dobString(row.body.individual);
      if (pending.some(([field, value]) => verifiesImmediately(field, value, dob))) {
        this.runVerification(row);
        this.refresh(row);
      } else if (pending.length > 0 && onboarding.verificationTimerId === null) {
        onboarding.verificationTimerId = this.kernel.timers.schedule('account_verification', this.kernel.now() + this.kernel.config.verificationDelayMs, {
          account: row.id,
          apiVersion: origin.apiVersion,
        });
      }
    }
    this.kernel.store.save(row);
  }

  private runVerification(row: AccountRow): void {
    const onboarding = row.internal.onboarding;
    if (!onboarding) return;
    if (onboarding.verificationTimerId) {
      this.kernel.timers.cancel(onboarding.verificationTimerId);
      onboarding.verificationTimerId = null;
    }
    const dob = dobString(row.body.individual);
    for (const [field, value] of Object.entries(onboarding.pending)) {
      const outcome = verify({ field, value, dob, livemode: row.livemode });
      if (outcome.result === 'failed') {
        onboarding.failed[field] = { value, code: outcome.code, reason: outcome.reason };
        delete onboarding.verified[field];
      } else {
        if (outcome.result === 'listed') onboarding.listed = true;
        onboarding.verified[field] = value;
        delete onboarding.failed[field];
      }
    }
    onboarding.pending = {};
  }

  /** The value of a requirement on the account, or null when it is missing. */
  private valueOf(row: AccountRow, field: string): string | null {
    const onboarding = row.internal.onboarding;
    const body = row.body;
    const text = (value: unknown): string | null => (value === null || value === undefined || value === '' ? null : String(value));
    switch (field) {
      case 'external_account':
        return (body.external_accounts?.data.length ?? 0) > 0 ? 'provided' : null;
      case 'business_profile.url':
        return text(body.business_profile?.url) ?? text(body.business_profile?.product_description);
      case 'individual.id_number':
        return onboarding?.idNumber ?? null;
      case 'individual.ssn_last_4':
        return onboarding?.ssnLast4 ?? onboarding?.idNumber?.slice(-4) ?? null;
      case 'company.tax_id':
        return onboarding?.taxId ?? null;
      default: {
        let value: unknown = body;
        for (const part of field.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
        return text(value);
      }
    }
  }

  /**
   * Recomputes requirements, capability statuses and the enabled flags from what the account holds.
   * A verified field whose value changed is submitted again (pending), a failed one stays due with
   * its error until it changes.
   */
  private refresh(row: AccountRow): void {
    const onboarding = row.internal.onboarding;
    const body = row.body;
    const requirements = emptyRequirements();
    if (onboarding) {
      const country = body.country ?? 'US';
      const kind = businessKind(body.business_type);
      const currentlyDue: string[] = [];
      const missing: string[] = [];
      const fields = requiredFields(country, kind);
      // A full id number given where only the SSN's last four are due is verified as the id number.
      const fullId = kind === 'individual' && onboarding.idNumber !== null && !fields.includes('individual.id_number');
      if (fullId) fields.push('individual.id_number');
      for (const field of fields) {
        const value = this.valueOf(row, field);
        if (value === null) {
          currentlyDue.push(field);
          missing.push(field);
          continue;
        }
        if (!isVerifiedField(field) || (fullId && field === 'individual.ssn_last_4')) continue;
        const failed = onboarding.failed[field];
        if (failed && failed.value === value) {
          currentlyDue.push(field);
          requirements.errors.push({ code: failed.code, reason: failed.reason, requirement: field });
          continue;
        }
        if (failed) delete onboarding.failed[field];
        if (onboarding.verified[field] === value) continue;
        onboarding.pending[field] = value;
      }
      for (const field of Object.keys(onboarding.pending)) {
        if (!fields.includes(field) || this.valueOf(row, field) === null) delete onboarding.pending[field];
      }
      requirements.currently_due = currentlyDue;
      requirements.past_due = [...currentlyDue];
      const eventually = new Set(currentlyDue);
      // Stripe asks US individuals for the full SSN eventually (after a volume threshold).
      if (country === 'US' && kind === 'individual' && !onboarding.idNumber) eventually.add('individual.id_number');
      requirements.eventually_due = [...eventually].sort();
      requirements.pending_verification = Object.keys(onboarding.pending).sort();
      if (currentlyDue.includes('business_profile.url')) requirements.alternatives = [structuredClone(URL_ALTERNATIVE)];
      requirements.disabled_reason = onboarding.listed
        ? 'listed'
        : currentlyDue.length > 0
          ? 'requirements.past_due'
          : requirements.pending_verification.length > 0
            ? 'requirements.pending_verification'
            : null;
      body.details_submitted = missing.length === 0;
      body.requirements = requirements;
      this.renderPerson(row, fields);
    }
    const blocked = requirements.disabled_reason !== null;
    const pendingOnly = requirements.disabled_reason === 'requirements.pending_verification';
    const capabilities: Record<string, CapabilityStatus> = {};
    for (const [name, state] of Object.entries(row.internal.capabilities)) {
      let status: CapabilityStatus;
      if (state.review) status = state.review;
      else if (!state.requested) status = 'inactive';
      else if (!onboarding) status = state.status;
      else if (blocked) status = pendingOnly ? 'pending' : 'inactive';
      else status = REVIEWED_CAPABILITIES.has(name) ? 'pending' : 'active';
      state.status = status;
      if (state.requested || status === 'active') capabilities[name] = status;
    }
    body.capabilities = capabilities as Stripe.Account.Capabilities;
    body.requirements = requirements;
    body.charges_enabled = capabilities.card_payments === 'active';
    body.payouts_enabled = onboarding ? !blocked : capabilities.transfers === 'active';
    if (!onboarding) body.details_submitted = true;
  }

  private renderPerson(row: AccountRow, fields: string[]): void {
    const onboarding = row.internal.onboarding;
    const person = row.body.individual;
    if (!onboarding || !person) return;
    const prefix = 'individual.';
    const strip = (fields: string[]): string[] => fields.filter((f) => f.startsWith(prefix)).map((f) => f.slice(prefix.length));
    const requirements = requirementsOf(row.body);
    const personRequirements = {
      alternatives: [],
      currently_due: strip(requirements.currently_due),
      errors: requirements.errors.filter((e) => e.requirement.startsWith(prefix)).map((e) => ({ ...e, requirement: e.requirement.slice(prefix.length) })),
      eventually_due: strip(requirements.eventually_due),
      past_due: strip(requirements.past_due),
      pending_verification: strip(requirements.pending_verification),
    };
    person.requirements = personRequirements as Stripe.Person.Requirements;
    person.id_number_provided = onboarding.idNumber !== null;
    person.ssn_last_4_provided = onboarding.ssnLast4 !== null || onboarding.idNumber !== null;
    const identity = fields.filter((f) => f.startsWith(prefix) && isVerifiedField(f) && !(f === 'individual.ssn_last_4' && onboarding.idNumber !== null));
    const status = identity.length > 0 && identity.every((f) => onboarding.verified[f] !== undefined && onboarding.failed[f] === undefined)
      ? 'verified'
      : personRequirements.pending_verification.length > 0
        ? 'pending'
        : 'unverified';
    if (person.verification) person.verification.status = status;
  }

  /** Applies identity, profile and terms-of-service input, validating every field. */
  private applyIdentity(row: AccountRow, input: AccountUpdateInput, submitter: Submitter): void {
    const body = row.body;
    const onboarding = row.internal.onboarding;
    const now = this.kernel.now();
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
      if (this.collectedByStripe(row) && !submitter.hostedPage) {
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
}
