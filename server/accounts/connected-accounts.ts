import type { Clock } from '../../shared/time.js';
import type { Mode, ProcessorAccountsTable } from '../db/schema.js';
import type { Scope } from './scope.js';
import type { Store } from '../db/store.js';
import { type ConnectPort, type ProcessorIdentity, processorIdempotencyKey } from '../processor/port.js';
import { type AccountRequirements, type AccountSnapshot, EMPTY_REQUIREMENTS } from '../processor/snapshots.js';

export type { AccountRequirements } from '../processor/snapshots.js';

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

/** The processor's account as we keep it, read at `syncedAt`. */
export function stateOfAccount(account: AccountSnapshot, syncedAt: number): AccountState {
  return {
    accountType: account.type,
    chargesEnabled: account.chargesEnabled,
    payoutsEnabled: account.payoutsEnabled,
    detailsSubmitted: account.detailsSubmitted,
    requirements: account.requirements,
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

/** Which connected account is a merchant's: what the domain asks before it calls the processor for a merchant. */
export interface ConnectedAccountDirectory {
  /** The merchant's connected account in this mode, created on first need (its processor call traced in `trace`). */
  accountOf(merchantId: string, mode: Mode, trace?: Scope['trace']): Promise<string>;
  /** The merchant whose connected account this is, in this mode; null for an account not ours. */
  merchantOf(mode: Mode, account: string): Promise<string | null>;
}

/**
 * The merchants' connected accounts (`processor_accounts`): made on the processor on first need,
 * kept here with their last known state. Creation is keyed by merchant and mode, so two requests
 * racing here (or a crash before the insert) reuse the account the processor already made instead
 * of creating a second one.
 */
export class ConnectedAccounts implements ConnectedAccountDirectory {
  /** Connected accounts by merchant and mode: a merchant's account never changes once made. */
  readonly #known = new Map<string, string>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly processor: ConnectPort & Pick<ProcessorIdentity, 'modes'>,
  ) {}

  async accountOf(merchantId: string, mode: Mode, trace?: Scope['trace']): Promise<string> {
    const known = this.#known.get(`${merchantId}:${mode}`);
    if (known) return known;
    const existing = await this.store.db.selectFrom('processor_accounts').select('account_id').where('merchant_id', '=', merchantId).where('mode', '=', mode).executeTakeFirst();
    if (existing) {
      this.#known.set(`${merchantId}:${mode}`, existing.account_id);
      return existing.account_id;
    }
    const merchant = await this.store.db.selectFrom('merchants').select(['business_name', 'country', 'created_at']).where('id', '=', merchantId).executeTakeFirstOrThrow();
    const account = await this.processor.createAccount(
      { mode, trace },
      // The acceptance time is the merchant's creation, so a retry sends the very same parameters.
      { merchantId, country: merchant.country, businessName: merchant.business_name, acceptedAt: Number(merchant.created_at) },
      processorIdempotencyKey('account', merchantId, mode),
    );
    const now = this.clock.now();
    await this.store.db
      .insertInto('processor_accounts')
      // The account as created is its first known state: a later change to it is news (merchant.updated).
      .values({ merchant_id: merchantId, mode, account_id: account.id, created_at: now, account_type: account.type, ...accountStateColumns(stateOfAccount(account, now)) })
      .onConflict((oc) => oc.columns(['merchant_id', 'mode']).doNothing())
      .execute();
    // Of two racing first uses, the row that landed names the account.
    const stored = await this.store.db.selectFrom('processor_accounts').select('account_id').where('merchant_id', '=', merchantId).where('mode', '=', mode).executeTakeFirstOrThrow();
    this.#known.set(`${merchantId}:${mode}`, stored.account_id);
    return stored.account_id;
  }

  async merchantOf(mode: Mode, account: string): Promise<string | null> {
    const row = await this.store.db.selectFrom('processor_accounts').select('merchant_id').where('account_id', '=', account).where('mode', '=', mode).executeTakeFirst();
    return row?.merchant_id ?? null;
  }

  /** Creates connected accounts for merchants that have none yet (e.g. made by the admin CLI); answers how many were made. */
  async provisionMissing(): Promise<number> {
    let created = 0;
    for (const mode of this.processor.modes) {
      const missing = await this.store.db
        .selectFrom('merchants')
        .select('id')
        .where(({ not, exists, selectFrom }) =>
          not(exists(selectFrom('processor_accounts').select('account_id').whereRef('processor_accounts.merchant_id', '=', 'merchants.id').where('processor_accounts.mode', '=', mode))),
        )
        .execute();
      for (const { id } of missing) {
        await this.accountOf(id, mode);
        created += 1;
      }
    }
    return created;
  }
}
