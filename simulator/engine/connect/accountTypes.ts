import type Stripe from 'stripe';
import type { Scope, StoredObject } from '../../store.js';
import { emptyRequirements, type Metadata } from '../shapes.js';
import type { BankAccountHashInput } from './bankAccounts.js';

/**
 * What a Connect account is made of: its stored row, the inputs that change it and who submits
 * them. The services are in accounts.ts (creation and update), identity.ts (the fields an account
 * holder gives), verification.ts (requirements and verification) and capabilities.ts.
 */

export type CapabilityStatus = Stripe.Capability.Status;

export interface CapabilityState {
  requested: boolean;
  requestedAt: number | null;
  /** The status last rendered, to tell which capabilities changed. */
  status: CapabilityStatus;
  /** Stripe's own review (control API); null lets the requirements decide. */
  review?: CapabilityStatus | null;
}

export interface FailedField {
  value: string;
  code: Stripe.Account.Requirements.Error.Code;
  reason: string;
}

export interface Onboarding {
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
  /** The automatic payout run due for this account, if any (payouts/payouts.ts). */
  payoutRunTimerId?: string | null;
  /** Absent on accounts stored before requirements were modelled: they stay as they were (active). */
  onboarding?: Onboarding;
  /** Rejected by the platform (`POST /v1/accounts/:id/reject`): charges and payouts stay off. */
  rejected?: 'fraud' | 'terms_of_service' | 'other';
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
export const REVIEWED_CAPABILITIES = new Set(['us_bank_account_ach_payments']);

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

export const PLATFORM: Submitter = { hostedPage: false };

export function platformScope(scope: Scope): Scope {
  return { livemode: scope.livemode, account: null };
}

export type Requirements = ReturnType<typeof emptyRequirements>;

/** The account's requirements as rendered by the last refresh (always complete lists). */
export function requirementsOf(body: Stripe.Account): Requirements {
  return (body.requirements as Requirements | undefined) ?? emptyRequirements();
}

/** Whether the platform or Stripe collects this account's requirements (`controller.requirement_collection`). */
export function collectedByStripe(row: AccountRow): boolean {
  return (row.body.controller as { requirement_collection?: string } | undefined)?.requirement_collection === 'stripe';
}

const PLATFORM_ID_KEY = 'platform_account_id';

/** The platform's own account id, made on first use and kept: `GET /v1/account` answers it, its bank account is filed under it. */
export function platformAccountId(store: { getMeta(key: string): string | undefined; setMeta(key: string, value: string): void }, mint: () => string): string {
  let id = store.getMeta(PLATFORM_ID_KEY);
  if (id === undefined) {
    id = mint();
    store.setMeta(PLATFORM_ID_KEY, id);
  }
  return id;
}
