import type Stripe from 'stripe';
import { newAccountId } from '../ids.js';
import { invalidRequest } from '../errors.js';
import type { Scope, StoredObject } from '../store.js';
import { type Kernel, type Origin, getAny, getScoped, unixSeconds } from './kernel.js';
import { emptyAddress, emptyRequirements, list, type ListEnvelope, type Metadata, mergeMetadata } from './shapes.js';
import { DEFAULT_DELAY_DAYS } from './ledger.js';
import type { BankAccounts } from './bankAccounts.js';

/**
 * Connect accounts, their capabilities and payout schedule. Connected accounts belong to the
 * platform of one mode; a new test-mode account starts with Stripe's test bank account that pays.
 * Requesting a capability activates it at once, except ACH debits, which Stripe only activates
 * after its own review: here it stays `pending` until the control API activates it.
 */

export type CapabilityStatus = Stripe.Capability.Status;

interface CapabilityState {
  requested: boolean;
  requestedAt: number | null;
  status: CapabilityStatus;
}

export interface AccountInternal {
  capabilities: Record<string, CapabilityState>;
  /** The automatic payout run due for this account, if any (payouts.ts). */
  payoutRunTimerId?: string | null;
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

/** Capabilities Stripe reviews before enabling: requesting them is not enough. */
const REVIEWED_CAPABILITIES = new Set(['us_bank_account_ach_payments']);

export const ACH_CAPABILITY = 'us_bank_account_ach_payments';

export interface AccountCreateInput {
  type?: 'custom' | 'express' | 'standard' | undefined;
  country?: string | undefined;
  email?: string | undefined;
  business_type?: Stripe.Account.BusinessType | undefined;
  business_profile?: Record<string, string | undefined> | undefined;
  capabilities?: Record<string, { requested?: boolean | undefined }> | undefined;
  metadata?: Metadata | '' | undefined;
  settings?: { payouts?: { schedule?: PayoutScheduleInput | undefined } | undefined } | undefined;
}

export interface PayoutScheduleInput {
  interval?: string | undefined;
  delay_days?: number | 'minimum' | undefined;
}

export type AccountUpdateInput = Omit<AccountCreateInput, 'type' | 'country'>;

function platformScope(scope: Scope): Scope {
  return { livemode: scope.livemode, account: null };
}

function buildProfile(input: Record<string, string | undefined> | undefined, current?: Stripe.Account.BusinessProfile | null): Stripe.Account.BusinessProfile {
  const base: Stripe.Account.BusinessProfile = current ?? {
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
  const next = { ...base };
  for (const key of ['mcc', 'name', 'product_description', 'support_email', 'support_phone', 'support_url', 'url'] as const) {
    const value = input?.[key];
    if (value !== undefined) next[key] = value === '' ? null : value;
  }
  return next;
}

/** A new account's default currency is its country's, as Stripe sets it (the countries the platform onboards). */
const COUNTRY_CURRENCY: Record<string, string> = {
  US: 'usd', CA: 'cad', GB: 'gbp', IE: 'eur', DE: 'eur', FR: 'eur', NL: 'eur', ES: 'eur', IT: 'eur', AU: 'aud', NZ: 'nzd', JP: 'jpy', SG: 'sgd', CH: 'chf',
};

function render(id: string, created: number, type: Stripe.Account.Type, country: string, internal: AccountInternal, prev?: Stripe.Account): Stripe.Account {
  const capabilities: Record<string, CapabilityStatus> = {};
  for (const [name, state] of Object.entries(internal.capabilities)) {
    if (state.requested || state.status === 'active') capabilities[name] = state.status;
  }
  const active = (name: string): boolean => internal.capabilities[name]?.status === 'active';
  return {
    id,
    object: 'account',
    business_profile: prev?.business_profile ?? buildProfile(undefined),
    business_type: prev?.business_type ?? null,
    capabilities: capabilities as Stripe.Account.Capabilities,
    charges_enabled: active('card_payments'),
    controller: prev?.controller ?? { type: 'application', is_controller: true, requirement_collection: type === 'custom' ? 'application' : 'stripe' } as Stripe.Account.Controller,
    country,
    created,
    default_currency: prev?.default_currency ?? COUNTRY_CURRENCY[country] ?? 'usd',
    details_submitted: true,
    email: prev?.email ?? null,
    external_accounts: prev?.external_accounts ?? list(`/v1/accounts/${id}/external_accounts`, []),
    future_requirements: emptyRequirements(),
    metadata: prev?.metadata ?? {},
    payouts_enabled: active('transfers'),
    requirements: emptyRequirements(),
    settings: prev?.settings ?? defaultSettings(),
    tos_acceptance: prev?.tos_acceptance ?? { date: null, ip: null, user_agent: null },
    type,
  };
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

function capabilityObject(accountId: string, name: string, state: CapabilityState | undefined): Stripe.Capability {
  return {
    id: name,
    object: 'capability',
    account: accountId,
    future_requirements: emptyRequirements(),
    requested: state?.requested ?? false,
    requested_at: state?.requestedAt ?? null,
    requirements: emptyRequirements(),
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

  private request(internal: AccountInternal, name: string, requested: boolean): boolean {
    const now = unixSeconds(this.kernel.now());
    const current = internal.capabilities[name];
    if (requested) {
      if (current?.requested) return false;
      const status: CapabilityStatus = current?.status === 'active' ? 'active' : REVIEWED_CAPABILITIES.has(name) ? 'pending' : 'active';
      internal.capabilities[name] = { requested: true, requestedAt: now, status };
      return true;
    }
    if (!current?.requested) return false;
    internal.capabilities[name] = { requested: false, requestedAt: null, status: 'inactive' };
    return true;
  }

  create(origin: Origin, input: AccountCreateInput): Stripe.Account {
    if (origin.scope.account !== null) {
      throw invalidRequest('Connected accounts can only be created by the platform; remove the Stripe-Account header.');
    }
    const id = newAccountId();
    const internal: AccountInternal = { capabilities: {} };
    const changed: string[] = [];
    for (const [name, value] of Object.entries(input.capabilities ?? {})) {
      this.assertKnown(name, `capabilities[${name}]`);
      if (value.requested && this.request(internal, name, true)) changed.push(name);
    }
    const type = input.type ?? 'custom';
    const draft = render(id, unixSeconds(this.kernel.now()), type, (input.country ?? 'US').toUpperCase(), internal);
    draft.email = input.email ?? null;
    draft.business_type = input.business_type ?? null;
    draft.business_profile = buildProfile(input.business_profile);
    draft.metadata = mergeMetadata({}, input.metadata);
    if (draft.settings) applySchedule(draft.settings, input.settings?.payouts?.schedule);
    const row = this.kernel.store.insert<Stripe.Account, AccountInternal>('account', platformScope(origin.scope), draft, internal);
    // Test accounts can be paid out at once: they start with Stripe's test bank account that pays.
    if (!row.livemode) {
      this.bankAccounts.createDefault(row.livemode, row.id);
      row.body = this.retrieve(origin.scope, row.id).body;
    }
    this.emitCapabilityChanges(origin, row, changed);
    return row.body;
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

  update(origin: Origin, id: string, input: AccountUpdateInput): Stripe.Account {
    const row = this.retrieve(origin.scope, id);
    const changed: string[] = [];
    for (const [name, value] of Object.entries(input.capabilities ?? {})) {
      this.assertKnown(name, `capabilities[${name}]`);
      if (value.requested !== undefined && this.request(row.internal, name, value.requested)) changed.push(name);
    }
    const prev = row.body;
    const next = render(row.id, prev.created ?? 0, prev.type, prev.country ?? 'US', row.internal, prev);
    if (input.email !== undefined) next.email = input.email;
    if (input.business_type !== undefined) next.business_type = input.business_type;
    if (input.business_profile !== undefined) next.business_profile = buildProfile(input.business_profile, prev.business_profile);
    next.metadata = mergeMetadata(prev.metadata ?? {}, input.metadata);
    if (next.settings) applySchedule(next.settings, input.settings?.payouts?.schedule);
    row.body = next;
    this.kernel.store.save(row);
    this.emitCapabilityChanges(origin, row, changed, changed.length === 0);
    return row.body;
  }

  list(scope: Scope, limit: number, startingAfter?: string, endingBefore?: string): ListEnvelope<Stripe.Account> {
    const page = this.kernel.store.list<Stripe.Account, AccountInternal>('account', platformScope(scope), {}, { limit, startingAfter, endingBefore });
    return list('/v1/accounts', page.data.map((row) => row.body), page.hasMore);
  }

  listCapabilities(scope: Scope, id: string): ListEnvelope<Stripe.Capability> {
    const row = this.retrieve(scope, id);
    const data = Object.entries(row.internal.capabilities)
      .filter(([, state]) => state.requested || state.status === 'active')
      .map(([name, state]) => capabilityObject(row.id, name, state));
    return list(`/v1/accounts/${id}/capabilities`, data);
  }

  retrieveCapability(scope: Scope, id: string, name: string): Stripe.Capability {
    const row = this.retrieve(scope, id);
    this.assertKnown(name, 'capability');
    return capabilityObject(row.id, name, row.internal.capabilities[name]);
  }

  updateCapability(origin: Origin, id: string, name: string, requested: boolean | undefined): Stripe.Capability {
    const row = this.retrieve(origin.scope, id);
    this.assertKnown(name, 'capability');
    if (requested !== undefined && this.request(row.internal, name, requested)) {
      row.body = render(row.id, row.body.created ?? 0, row.body.type, row.body.country ?? 'US', row.internal, row.body);
      this.kernel.store.save(row);
      this.emitCapabilityChanges(origin, row, [name]);
    }
    return capabilityObject(row.id, name, row.internal.capabilities[name]);
  }

  /** Control API: what Stripe's review would decide. */
  setCapabilityStatus(origin: Origin, id: string, name: string, status: CapabilityStatus): Stripe.Capability {
    const row = getAny<Stripe.Account, AccountInternal>(this.kernel, 'account', id, 'account');
    this.assertKnown(name, 'capability');
    const current = row.internal.capabilities[name];
    row.internal.capabilities[name] = {
      requested: current?.requested ?? status !== 'inactive',
      requestedAt: current?.requestedAt ?? unixSeconds(this.kernel.now()),
      status,
    };
    row.body = render(row.id, row.body.created ?? 0, row.body.type, row.body.country ?? 'US', row.internal, row.body);
    this.kernel.store.save(row);
    this.emitCapabilityChanges({ ...origin, scope: { livemode: row.livemode, account: null } }, row, [name]);
    return capabilityObject(row.id, name, row.internal.capabilities[name]);
  }

  capabilityStatus(row: AccountRow, name: string): CapabilityStatus {
    return row.internal.capabilities[name]?.status ?? 'inactive';
  }

  /** Account events are connected-account events: they carry `account` and go to Connect endpoints. */
  private emitCapabilityChanges(origin: Origin, row: AccountRow, changed: string[], accountOnly = false): void {
    const accountOrigin: Origin = { ...origin, scope: { livemode: row.livemode, account: row.id } };
    for (const name of changed) {
      this.kernel.events.emit(accountOrigin, 'capability.updated', capabilityObject(row.id, name, row.internal.capabilities[name]));
    }
    if (changed.length > 0 || accountOnly) this.kernel.events.emit(accountOrigin, 'account.updated', row.body);
  }
}
