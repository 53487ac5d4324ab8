import type { ProcessorAccountsTable } from '../db/schema.js';
import type { ProcessorAccount } from './types.js';

/** What the processor still needs of a connected account, under Stripe's field names. */
export interface AccountRequirements {
  currently_due: string[];
  past_due: string[];
  eventually_due: string[];
  pending_verification: string[];
  /** Epoch seconds, as Stripe gives it. */
  current_deadline: number | null;
  disabled_reason: string | null;
  errors: { requirement: string; code: string; reason: string }[];
}

export const EMPTY_REQUIREMENTS: AccountRequirements = { currently_due: [], past_due: [], eventually_due: [], pending_verification: [], current_deadline: null, disabled_reason: null, errors: [] };

/** A connected account's standing as we keep it (`processor_accounts`). */
export interface AccountState {
  accountType: string | null;
  chargesEnabled: boolean;
  payoutsEnabled: boolean;
  detailsSubmitted: boolean;
  requirements: AccountRequirements;
  /** Epoch ms of the processor read this state came from. */
  syncedAt: number;
}

/** Stripe's account object reduced to what we keep. */
export function stateOfAccount(account: ProcessorAccount, syncedAt: number): AccountState {
  const r = account.requirements;
  return {
    accountType: account.type ?? null,
    chargesEnabled: account.charges_enabled === true,
    payoutsEnabled: account.payouts_enabled === true,
    detailsSubmitted: account.details_submitted === true,
    requirements: r
      ? {
          currently_due: [...(r.currently_due ?? [])],
          past_due: [...(r.past_due ?? [])],
          eventually_due: [...(r.eventually_due ?? [])],
          pending_verification: [...(r.pending_verification ?? [])],
          current_deadline: r.current_deadline ?? null,
          disabled_reason: r.disabled_reason ?? null,
          errors: (r.errors ?? []).map((e) => ({ requirement: e.requirement, code: e.code, reason: e.reason })),
        }
      : { ...EMPTY_REQUIREMENTS },
    syncedAt,
  };
}

/** The state as the columns of `processor_accounts` hold it. */
export function accountStateColumns(state: AccountState): Pick<ProcessorAccountsTable, 'charges_enabled' | 'payouts_enabled' | 'details_submitted' | 'requirements' | 'synced_at'> {
  return {
    charges_enabled: state.chargesEnabled ? 1 : 0,
    payouts_enabled: state.payoutsEnabled ? 1 : 0,
    details_submitted: state.detailsSubmitted ? 1 : 0,
    requirements: JSON.stringify(state.requirements),
    synced_at: state.syncedAt,
  };
}

/** The stored state; null when the account was never read. */
export function stateOfRow(row: ProcessorAccountsTable): AccountState | null {
  if (row.synced_at === null || row.charges_enabled === null) return null;
  return {
    accountType: row.account_type,
    chargesEnabled: row.charges_enabled === 1,
    payoutsEnabled: row.payouts_enabled === 1,
    detailsSubmitted: row.details_submitted === 1,
    requirements: row.requirements ? { ...EMPTY_REQUIREMENTS, ...(JSON.parse(row.requirements) as Partial<AccountRequirements>) } : { ...EMPTY_REQUIREMENTS },
    syncedAt: Number(row.synced_at),
  };
}
