import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/time.js';
import type { Mode } from '../db/schema.js';
import type { Executor, Store } from '../db/store.js';
import { notFound } from '../errors.js';
import type { MerchantView } from '../schemas/merchant.js';
import { type IssuedKey, issueKey, type RolledKey, rollSecretKeys, keysChanged } from './api-keys.js';
import type { Scope } from './scope.js';

export interface Merchant {
  id: string;
  businessName: string;
  defaultCurrency: string;
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

/** New merchants settle in US dollars until multi-currency onboarding exists. */
export const DEFAULT_CURRENCY = 'usd';

function keyOf(issued: IssuedKey[], kind: IssuedKey['kind'], mode: Mode): string {
  const found = issued.find((k) => k.kind === kind && k.mode === mode);
  if (!found) throw new Error(`key ${kind}/${mode} was not issued`);
  return found.key;
}

export async function createMerchant(store: Store, clock: Clock, input: { businessName: string; currency?: string }): Promise<CreatedMerchant> {
  const now = clock.now();
  const merchant: Merchant = {
    id: randomUUID(),
    businessName: input.businessName,
    defaultCurrency: input.currency ?? DEFAULT_CURRENCY,
    createdAt: now,
  };
  const issued = await store.transaction(async (trx) => {
    await trx
      .insertInto('merchants')
      .values({
        id: merchant.id,
        business_name: merchant.businessName,
        default_currency: merchant.defaultCurrency,
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

function toMerchant(row: { id: string; business_name: string; default_currency: string; created_at: number }): Merchant {
  return { id: row.id, businessName: row.business_name, defaultCurrency: row.default_currency, createdAt: row.created_at };
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

/** What the merchant endpoint needs to know of the processor; the processor adapter provides it. */
export interface ProcessorDirectory {
  readonly name: string;
  publishableKey(mode: Mode): string | null;
  /** Where a browser reaches the processor's client-side API; null means Stripe.js's default. */
  browserUrl(): string | null;
  connectedAccount(merchantId: string, mode: Mode): Promise<string>;
}

export class MerchantService {
  constructor(
    private readonly store: Store,
    private readonly processor: ProcessorDirectory,
  ) {}

  async describe(scope: Scope): Promise<MerchantView> {
    const merchant = await getMerchant(this.store.db, scope.merchantId);
    return {
      id: merchant.id,
      business_name: merchant.businessName,
      default_currency: merchant.defaultCurrency,
      is_test: scope.mode === 'test',
      processor: {
        name: this.processor.name,
        publishable_key: this.processor.publishableKey(scope.mode),
        api_base: this.processor.browserUrl(),
        connected_account_id: await this.processor.connectedAccount(scope.merchantId, scope.mode),
      },
    };
  }

  /** The merchant's id and name, as the agent's welcome message carries them. */
  async identity(scope: Scope): Promise<{ id: string; business_name: string }> {
    const merchant = await getMerchant(this.store.db, scope.merchantId);
    return { id: merchant.id, business_name: merchant.businessName };
  }
}
