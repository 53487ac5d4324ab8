import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/time.js';
import { COUNTRIES, type Country, isCountry, isCurrency } from '../../shared/money.js';
import type { MerchantsTable, Mode } from '../db/schema.js';
import type { Executor, Store } from '../db/store.js';
import { invalid, notFound } from '../errors.js';
import type { MerchantView } from '../../shared/contract/merchant.js';
import { type IssuedKey, issueKey, type RolledKey, rollSecretKeys, keysChanged } from './api-keys.js';
import type { Scope } from './scope.js';
import type { AccountState, ConnectedAccountDirectory } from './connected-accounts.js';
import type { ProcessorIdentity } from '../processor/port.js';
import { accountStateView } from './onboarding.js';

export interface Merchant {
  id: string;
  businessName: string;
  defaultCurrency: string;
  country: Country;
  createdAt: number;
}

export interface MerchantKeys {
  sk_test: string;
  sk_live: string;
  pk_test: string;
  pk_live: string;
}

export interface CreatedMerchant {
  merchant: Merchant;
  keys: MerchantKeys;
}

/** A merchant made without a country is in the US, as every merchant was before countries existed. */
export const DEFAULT_COUNTRY: Country = 'US';

function keyOf(issued: IssuedKey[], kind: IssuedKey['kind'], mode: Mode): string {
  const found = issued.find((k) => k.kind === kind && k.mode === mode);
  if (!found) throw new Error(`key ${kind}/${mode} was not issued`);
  return found.key;
}

/**
 * A merchant in a country (default US) settling in a currency (default the country's own). Throws
 * a 400 `ApiError` naming the field for a country or currency the platform does not take.
 */
export async function createMerchant(store: Store, clock: Clock, input: { businessName: string; country?: string; currency?: string }): Promise<CreatedMerchant> {
  const now = clock.now();
  const country = (input.country ?? DEFAULT_COUNTRY).toUpperCase();
  if (!isCountry(country)) throw invalid('country', `Merchants can be in ${Object.keys(COUNTRIES).join(', ')}; ${country} is not one of them`, 'country_unsupported');
  const currency = (input.currency ?? COUNTRIES[country]).toLowerCase();
  if (!isCurrency(currency)) throw invalid('currency', `${currency.toUpperCase()} is not a currency the platform settles in`, 'currency_unsupported');
  const merchant: Merchant = {
    id: randomUUID(),
    businessName: input.businessName,
    defaultCurrency: currency,
    country,
    createdAt: now,
  };
  const issued = await store.transaction(async (trx) => {
    await trx
      .insertInto('merchants')
      .values({
        id: merchant.id,
        business_name: merchant.businessName,
        default_currency: merchant.defaultCurrency,
        country: merchant.country,
        created_at: now,
      })
      .execute();
    const keys: IssuedKey[] = [];
    for (const kind of ['secret', 'publishable'] as const) {
      for (const mode of ['test', 'live'] as const) keys.push(await issueKey(trx, merchant.id, kind, mode, now));
    }
    return keys;
  });
  return {
    merchant,
    keys: {
      sk_test: keyOf(issued, 'secret', 'test'),
      sk_live: keyOf(issued, 'secret', 'live'),
      pk_test: keyOf(issued, 'publishable', 'test'),
      pk_live: keyOf(issued, 'publishable', 'live'),
    },
  };
}

function toMerchant(row: MerchantsTable): Merchant {
  return { id: row.id, businessName: row.business_name, defaultCurrency: row.default_currency, country: isCountry(row.country) ? row.country : DEFAULT_COUNTRY, createdAt: row.created_at };
}

export async function getMerchant(db: Executor, id: string): Promise<Merchant> {
  const row = await db.selectFrom('merchants').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('merchant', 'merchant');
  return toMerchant(row);
}

export async function listMerchants(db: Executor): Promise<Merchant[]> {
  const rows = await db.selectFrom('merchants').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(toMerchant);
}

export async function rollMerchantKeys(
  store: Store,
  clock: Clock,
  merchantId: string,
  modes: readonly Mode[],
  graceMs: number,
): Promise<RolledKey[]> {
  try {
    return await store.transaction(async (trx) => {
      await getMerchant(trx, merchantId);
      return rollSecretKeys(trx, merchantId, modes, graceMs, clock.now());
    });
  } finally {
    keysChanged();
  }
}

/** The connected account's standing, as the onboarding service keeps it (onboarding.ts). */
export interface AccountStateReader {
  current(scope: Scope): Promise<AccountState>;
}

export class MerchantService {
  constructor(
    private readonly store: Store,
    private readonly processor: ProcessorIdentity,
    private readonly connected: ConnectedAccountDirectory,
    private readonly accounts: AccountStateReader,
  ) {}

  async describe(scope: Scope): Promise<MerchantView> {
    const merchant = await getMerchant(this.store.db, scope.merchantId);
    const connectedAccount = await this.connected.accountOf(scope.merchantId, scope.mode, scope.trace);
    const state = await this.accounts.current(scope);
    return {
      id: merchant.id,
      business_name: merchant.businessName,
      default_currency: merchant.defaultCurrency,
      country: merchant.country,
      is_test: scope.mode === 'test',
      processor: {
        name: this.processor.name,
        publishable_key: this.processor.publishableKey(scope.mode),
        api_base: this.processor.browserUrl(),
        connected_account_id: connectedAccount,
      },
      ...accountStateView(state),
    };
  }

  /** The merchant's id and name, as the agent's welcome message carries them. */
  async identity(scope: Scope): Promise<{ id: string; business_name: string }> {
    const merchant = await getMerchant(this.store.db, scope.merchantId);
    return { id: merchant.id, business_name: merchant.businessName };
  }
}
