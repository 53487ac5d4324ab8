import { parseProfileName, parseServerUrl } from '../../shared/config.js';
import { PosClient } from '../api.js';
import type { CliContext } from '../context.js';
import { usageError } from '../errors.js';
import { isProfileKey, PROFILE_KEYS } from '../profiles.js';

function masked(key: string | undefined): string {
  return key ? `${key.slice(0, key.indexOf('_', 3) + 1)}…${key.slice(-4)}` : '';
}

export async function login(_args: [], options: { name?: string }, ctx: CliContext): Promise<void> {
  const name = options.name ? parseProfileName(options.name) : ctx.config.profileName;
  if (!ctx.config.apiKey) throw usageError('pos login needs --api-key (or POS_API_KEY)');
  if (!/^(sk|rk)_/.test(ctx.config.apiKey)) throw usageError('pos login needs a secret key (sk_test_… or sk_live_…) or a restricted key (rk_…)');
  const api = new PosClient({ server: ctx.config.server, apiKey: ctx.config.apiKey });
  const merchant = (await api.merchant()).data;
  await ctx.config.profiles.update(name, { server: ctx.config.server, api_key: ctx.config.apiKey, merchant_id: merchant.id, business_name: merchant.business_name });
  // Logging in switches to the profile, as `gh auth login` does: the next command uses it.
  await ctx.config.profiles.use(name);
  if (ctx.out.json) ctx.out.printJson({ profile: name, server: ctx.config.server, merchant_id: merchant.id, business_name: merchant.business_name, mode: api.mode });
  else ctx.out.line(`Logged in to ${merchant.business_name} (${api.mode} mode) on ${ctx.config.server} as profile "${name}"`);
}

export async function configList(_args: [], _options: object, ctx: CliContext): Promise<void> {
  const rows = ctx.config.profiles.list().map(({ name, current, profile }) => ({
    profile: name,
    current: current ? '*' : '',
    server: profile.server ?? '',
    api_key: masked(profile.api_key),
    business_name: profile.business_name ?? '',
  }));
  if (ctx.out.json) ctx.out.printJson({ current_profile: ctx.config.profiles.currentName, path: ctx.config.profiles.path, profiles: rows });
  else ctx.out.table(rows);
}

function checkedKey(key: string) {
  if (!isProfileKey(key)) throw usageError(`unknown key "${key}": one of ${PROFILE_KEYS.join(', ')}`);
  return key;
}

export async function configGet([key]: [string], _options: object, ctx: CliContext): Promise<void> {
  const value = ctx.config.profiles.get(ctx.config.profileName)?.[checkedKey(key)];
  if (ctx.out.json) ctx.out.printJson({ profile: ctx.config.profileName, key, value: value ?? null });
  else if (value !== undefined) ctx.out.line(value);
}

export async function configSet([key, value]: [string, string], _options: object, ctx: CliContext): Promise<void> {
  const k = checkedKey(key);
  if (k !== 'server' && k !== 'api_key') throw usageError(`${k} is filled in by pos login`);
  const v = k === 'server' ? parseServerUrl(value) : value;
  if (k === 'api_key' && !/^(sk|rk)_(test|live)_\w+$/.test(v)) throw usageError('an API key looks like sk_test_…, sk_live_… or rk_test_…');
  await ctx.config.profiles.update(ctx.config.profileName, { [k]: v });
  if (!ctx.out.json) ctx.out.line(`${ctx.config.profileName}.${k} set`);
}

export async function configUse([name]: [string], _options: object, ctx: CliContext): Promise<void> {
  const profile = parseProfileName(name);
  if (!ctx.config.profiles.get(profile)) throw usageError(`no profile "${profile}" (pos config list)`);
  await ctx.config.profiles.use(profile);
  if (!ctx.out.json) ctx.out.line(`Using profile "${profile}"`);
}

export async function configRemove([name]: [string], _options: object, ctx: CliContext): Promise<void> {
  if (!(await ctx.config.profiles.remove(name))) throw usageError(`no profile "${name}"`);
  if (!ctx.out.json) ctx.out.line(`Removed profile "${name}"`);
}

export async function configPath(_args: [], _options: object, ctx: CliContext): Promise<void> {
  if (ctx.out.json) ctx.out.printJson({ path: ctx.config.profiles.path });
  else ctx.out.line(ctx.config.profiles.path);
}

export async function merchant(_args: [], _options: object, ctx: CliContext): Promise<void> {
  const res = await ctx.api.merchant();
  if (ctx.out.json) {
    ctx.out.printJson(res);
    return;
  }
  const m = res.data;
  ctx.out.table([
    { field: 'business_name', value: m.business_name },
    { field: 'id', value: m.id },
    { field: 'mode', value: m.is_test ? 'test' : 'live' },
    { field: 'currency', value: m.default_currency },
    { field: 'processor', value: m.processor.name },
    { field: 'publishable_key', value: m.processor.publishable_key ?? '' },
    { field: 'charges_enabled', value: String(m.charges_enabled) },
    { field: 'payouts_enabled', value: String(m.payouts_enabled) },
    { field: 'onboarding', value: `${m.onboarding.status}: ${m.onboarding.message}` },
    { field: 'server', value: ctx.config.server },
  ]);
}
