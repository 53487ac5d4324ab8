import type { ApiKey, CreateApiKeyParams } from '../../shared/api/types.js';
import type { CliContext } from '../context.js';
import { usageError } from '../errors.js';
import { confirm } from '../safety.js';

type Preset = NonNullable<CreateApiKeyParams['preset']>;
type Permission = NonNullable<CreateApiKeyParams['scopes']>[number];

function keyRow(k: ApiKey) {
  return {
    id: k.id,
    type: k.type,
    name: k.name ?? '',
    key: `${k.type === 'secret' ? 'sk' : k.type === 'publishable' ? 'pk' : 'rk'}_${k.mode}_…${k.last4}`,
    status: k.status,
    scopes: k.scopes?.join(',') ?? (k.type === 'secret' ? 'everything' : ''),
    expires_at: k.expires_at?.slice(0, 19).replace('T', ' ') ?? '',
  };
}

function printKey(ctx: CliContext, k: ApiKey): void {
  const rows: [string, string][] = [
    ['id', k.id],
    ['name', k.name ?? ''],
    ['type', k.type],
    ['mode', k.mode],
    ['scopes', k.scopes?.join(', ') ?? ''],
    ['status', k.status],
  ];
  if (k.replaced) rows.push(['old key works until', k.replaced.expires_at]);
  const width = Math.max(...rows.map(([name]) => name.length));
  for (const [name, value] of rows) ctx.out.line(`${name.padEnd(width)}  ${value}`);
  if (k.secret) {
    ctx.out.line();
    ctx.out.line(`Key (shown this once; store it now): ${k.secret}`);
  }
}

export async function createKey(_args: [], options: { name: string; scope?: string; preset?: string }, ctx: CliContext): Promise<void> {
  const scopes = options.scope
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!scopes?.length && !options.preset) throw usageError('give the key permissions: --scope a,b and/or --preset counter|reporting|webhooks');
  // The server checks each name against its table and answers 400 naming the one it does not know.
  const res = await ctx.api.createApiKey({
    name: options.name,
    ...(scopes?.length ? { scopes: scopes as Permission[] } : {}),
    ...(options.preset ? { preset: options.preset as Preset } : {}),
  });
  if (ctx.out.json) ctx.out.printJson(res);
  else printKey(ctx, res.data);
}

export async function listKeys(_args: [], _options: object, ctx: CliContext): Promise<void> {
  const res = await ctx.api.listApiKeys();
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.table(res.data.map(keyRow));
}

export async function rollKey([id]: [string], options: { graceHours: string; yes?: boolean }, ctx: CliContext): Promise<void> {
  const hours = Number(options.graceHours);
  if (!/^\d+(\.\d+)?$/.test(options.graceHours) || hours > 168) throw usageError('--grace-hours takes a number of hours from 0 to 168');
  await confirm(ctx, options.yes, `Roll key ${id}? The old key stops working ${hours === 0 ? 'at once' : `in ${hours} hours`}`);
  const res = await ctx.api.rollApiKey(id, { grace_hours: hours });
  if (ctx.out.json) ctx.out.printJson(res);
  else printKey(ctx, res.data);
}

export async function revokeKey([id]: [string], options: { yes?: boolean }, ctx: CliContext): Promise<void> {
  await confirm(ctx, options.yes, `Revoke key ${id}? Every request with it is refused from now on`);
  const res = await ctx.api.revokeApiKey(id);
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`Revoked ${res.data.name ?? res.data.id} (rk_${res.data.mode}_…${res.data.last4}): it is refused from now on.`);
}
