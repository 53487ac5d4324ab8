import { ConfigError, loadAdminServerUrl, loadStoreConfig } from '../../shared/config.js';
import { PosApi } from '../../shared/api/client.js';
import { hashKey as hashOf, issueKey, keysChanged } from '../../server/accounts/api-keys.js';
import { getMerchant } from '../../server/accounts/merchants.js';
import { toIsoOrNull, toIsoTimestamp, systemClock } from '../../shared/time.js';
import { compareVersions, POS_VERSION } from '../../shared/version.js';
import { UPSTREAM_PROTOCOL_VERSION } from '../../shared/agent-upstream.js';
import { openStore, type Store } from '../../server/db/store.js';
import { createMerchant, listMerchants, rollMerchantKeys } from '../../server/accounts/merchants.js';
import { COUNTRIES, isCountry, isCurrency } from '../../shared/money.js';
import { usageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { createOutput, warnOn } from '../output.js';

interface StoreFlags {
  dataDir?: string;
  databaseUrl?: string;
}

async function withStore<T>(flags: StoreFlags, io: CliIo, work: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(loadStoreConfig(flags, io.env), { onLooseFile: warnOn(io.stderr) });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

export async function createMerchantAction(options: { businessName: string; country?: string; currency?: string; dataDir?: string; databaseUrl?: string; json?: boolean }, io: CliIo): Promise<void> {
  const name = options.businessName.trim();
  if (name.length === 0 || name.length > 256) throw usageError('--business-name must be 1 to 256 characters');
  const country = (options.country ?? 'US').toUpperCase();
  if (!isCountry(country)) throw usageError(`--country ${options.country} is not supported: use one of ${Object.keys(COUNTRIES).join(', ')}`);
  const currency = options.currency?.toLowerCase();
  if (currency !== undefined && !isCurrency(currency)) throw usageError(`--currency ${options.currency} is not a currency the platform settles in`);
  const out = createOutput({ json: Boolean(options.json) }, io);
  const { merchant, keys } = await withStore(options, io, (store) => createMerchant(store, systemClock, { businessName: name, country, ...(currency ? { currency } : {}) }));
  if (out.json) {
    out.printJson({ id: merchant.id, business_name: merchant.businessName, country: merchant.country, default_currency: merchant.defaultCurrency, api_keys: keys });
    return;
  }
  out.line(`Merchant ${merchant.id} (${merchant.businessName}, ${merchant.country}, settles in ${merchant.defaultCurrency.toUpperCase()})`);
  out.table([
    { key: 'secret, test', value: keys.sk_test },
    { key: 'secret, live', value: keys.sk_live },
    { key: 'publishable, test', value: keys.pk_test },
    { key: 'publishable, live', value: keys.pk_live },
  ]);
  out.line('These keys are shown once and stored only as hashes: keep them now.');
}

export async function listMerchantsAction(options: { dataDir?: string; databaseUrl?: string; json?: boolean }, io: CliIo): Promise<void> {
  const out = createOutput({ json: Boolean(options.json) }, io);
  const merchants = await withStore(options, io, (store) => listMerchants(store.db));
  const rows = merchants.map((m) => ({ id: m.id, business_name: m.businessName, country: m.country, currency: m.defaultCurrency, created_at: toIsoTimestamp(m.createdAt) }));
  if (out.json) out.printJson({ data: rows });
  else out.table(rows);
}

/**
 * Every agent of every merchant, oldest version first, with a line per version saying how many run
 * it and whether they speak the previous protocol (accepted now, refused once the server moves on).
 */
export async function listAgentsAction(options: { dataDir?: string; databaseUrl?: string; json?: boolean }, io: CliIo): Promise<void> {
  const out = createOutput({ json: Boolean(options.json) }, io);
  const rows = await withStore(options, io, (store) =>
    store.db
      .selectFrom('agents as a')
      .innerJoin('merchants as m', 'm.id', 'a.merchant_id')
      .select(['a.id', 'a.name', 'a.version', 'a.protocol', 'a.mode', 'a.connected_at', 'a.last_heartbeat_at', 'm.id as merchant_id', 'm.business_name'])
      .execute(),
  );
  const agents = rows
    .map((r) => ({
      id: r.id,
      name: r.name,
      merchant_id: r.merchant_id,
      business_name: r.business_name,
      mode: r.mode,
      version: r.version,
      protocol: r.protocol,
      last_seen_at: toIsoOrNull(Math.max(r.connected_at ?? 0, r.last_heartbeat_at ?? 0) || null),
      needs_upgrade: r.protocol < UPSTREAM_PROTOCOL_VERSION,
    }))
    .sort((a, b) => compareVersions(a.version, b.version) || a.business_name.localeCompare(b.business_name));
  const versions = [...new Set(agents.map((a) => `${a.version}\u0000${a.protocol}`))].map((key) => {
    const [version = '', protocol = ''] = key.split('\u0000');
    return { version, protocol: Number(protocol), agents: agents.filter((a) => a.version === version && a.protocol === Number(protocol)).length };
  });
  if (out.json) {
    out.printJson({ server_version: POS_VERSION, protocol: UPSTREAM_PROTOCOL_VERSION, versions, data: agents });
    return;
  }
  out.table(agents.map((a) => ({ version: a.version, protocol: a.protocol, business_name: a.business_name, mode: a.mode, agent: a.name, last_seen_at: a.last_seen_at, upgrade: a.needs_upgrade ? 'needed' : '' })));
  out.line();
  for (const v of versions) {
    out.line(`${v.version}, protocol ${v.protocol}: ${v.agents} agent${v.agents === 1 ? '' : 's'}${v.protocol < UPSTREAM_PROTOCOL_VERSION ? ` (the previous protocol: accepted by pos ${POS_VERSION}, upgrade them before the next server version)` : ''}`);
  }
}

/** Longest grace a roll may give the old key: a week, Stripe's own maximum. */
const MAX_GRACE_HOURS = 7 * 24;

export async function rollKeysAction(options: { merchant: string; mode: 'test' | 'live' | 'both'; graceHours: string; dataDir?: string; databaseUrl?: string; json?: boolean }, io: CliIo): Promise<void> {
  const grace = Number(options.graceHours);
  if (!Number.isFinite(grace) || grace < 0 || grace > MAX_GRACE_HOURS) throw usageError(`--grace-hours must be a number from 0 to ${MAX_GRACE_HOURS}`);
  const out = createOutput({ json: Boolean(options.json) }, io);
  const modes = options.mode === 'both' ? (['test', 'live'] as const) : ([options.mode] as const);
  const rolled = await withStore(options, io, (store) =>
    rollMerchantKeys(store, systemClock, options.merchant, modes, Math.round(grace * 3_600_000)).catch((err: unknown) => {
      if (err instanceof Error && err.name === 'ApiError') throw usageError(`no merchant ${options.merchant}`);
      throw err;
    }),
  );
  const rows = rolled.map((k) => ({ mode: k.mode, key: k.key, old_key_expires_at: toIsoTimestamp(k.previousExpiresAt) }));
  if (out.json) {
    out.printJson({ merchant_id: options.merchant, keys: rows });
    return;
  }
  out.table(rows);
  out.line('The new keys are shown once. The old secret keys stop working at the time shown.');
}

/**
 * The one-off key `pos admin merchant onboard` asks the server with lives two minutes at most (a
 * request takes seconds; the processor may queue a call behind its rate budget for up to 20 s) and
 * is expired as soon as the answer is in.
 */
const ONBOARD_KEY_TTL_MS = 2 * 60_000;

/**
 * Only the running server talks to the processor, so the link is asked of it, as the merchant
 * would ask: with a secret key of the merchant's, issued here on the data dir for this one call
 * and expired right after.
 */
export async function onboardMerchantAction(
  id: string,
  options: { mode: 'live' | 'test'; server?: string; returnUrl?: string; refreshUrl?: string; dataDir?: string; databaseUrl?: string; json?: boolean },
  io: CliIo,
): Promise<void> {
  let server: string;
  try {
    server = loadAdminServerUrl(options, io.env);
  } catch (err) {
    if (err instanceof ConfigError) throw usageError(`--server: ${err.message}`);
    throw err;
  }
  const out = createOutput({ json: Boolean(options.json) }, io);
  const link = await withStore(options, io, async (store) => {
    const now = systemClock.now();
    const issued = await store.transaction(async (trx) => {
      await getMerchant(trx, id).catch(() => {
        throw usageError(`no merchant ${id} (pos admin merchant list)`);
      });
      const key = await issueKey(trx, id, 'secret', options.mode, now);
      await trx.updateTable('api_keys').set({ expires_at: now + ONBOARD_KEY_TTL_MS }).where('key_hash', '=', hashOf(key.key)).execute();
      return key.key;
    });
    try {
      const api = new PosApi({ server, apiKey: issued });
      return (await api.onboardingLink({ ...(options.returnUrl ? { return_url: options.returnUrl } : {}), ...(options.refreshUrl ? { refresh_url: options.refreshUrl } : {}) })).data;
    } finally {
      await store.db.updateTable('api_keys').set({ expires_at: systemClock.now() }).where('key_hash', '=', hashOf(issued)).execute();
      keysChanged();
    }
  });
  if (out.json) {
    out.printJson({ merchant_id: id, mode: options.mode, ...link });
    return;
  }
  out.line(`Onboarding link for merchant ${id} (${options.mode} mode), valid once until ${link.expires_at}:`);
  out.line(link.url);
}
