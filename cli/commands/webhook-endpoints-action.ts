import type { CliContext } from '../context.js';
import { usageError } from '../errors.js';
import { confirm } from '../safety.js';
import { printNumbered } from '../pages.js';
import type { ListFlags } from './list-options.js';

function row(e: Record<string, unknown>) {
  return { id: e.id as string, url: e.url as string, status: e.status as string, mode: e.is_test ? 'test' : 'live' };
}

export async function createEndpoint([url]: [string], _options: object, ctx: CliContext): Promise<void> {
  const res = await ctx.api.createWebhookEndpoint({ url });
  if (ctx.out.json) ctx.out.printJson(res);
  else {
    ctx.out.table([row(res.data)]);
    if (typeof res.data.secret === 'string') ctx.out.line(`Signing secret (shown once): ${res.data.secret}`);
  }
}

export async function listEndpoints(_args: [], options: ListFlags, ctx: CliContext): Promise<void> {
  await printNumbered(ctx, options, (page, size) => ctx.api.listWebhookEndpoints({ page, size }), row, 'endpoints');
}

export async function deleteEndpoint([id]: [string], options: { yes?: boolean }, ctx: CliContext): Promise<void> {
  await confirm(ctx, options.yes, `Delete webhook endpoint ${id}? It receives no more events`);
  const res = await ctx.api.deleteWebhookEndpoint(id);
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`Deleted ${id}`);
}

function printOne(ctx: CliContext, res: { data: Record<string, unknown> }): void {
  if (ctx.out.json) ctx.out.printJson(res);
  else {
    ctx.out.table([row(res.data)]);
    if (typeof res.data.secret === 'string') ctx.out.line(`Signing secret (shown once): ${res.data.secret}`);
  }
}

export async function getEndpoint([id]: [string], _options: object, ctx: CliContext): Promise<void> {
  printOne(ctx, await ctx.api.getWebhookEndpoint(id));
}

export async function updateEndpoint([id]: [string], options: { url?: string; events?: string; description?: string; enable?: boolean; disable?: boolean }, ctx: CliContext): Promise<void> {
  const events = options.events
    ?.split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const body = {
    ...(options.url !== undefined ? { url: options.url } : {}),
    ...(events ? { events } : {}),
    ...(options.description !== undefined ? { description: options.description === '' ? null : options.description } : {}),
    ...(options.enable ? { status: 'enabled' as const } : options.disable ? { status: 'disabled' as const } : {}),
  };
  if (Object.keys(body).length === 0) throw usageError('nothing to change: give --url, --events, --description, --enable or --disable');
  printOne(ctx, await ctx.api.updateWebhookEndpoint(id, body));
}

export async function rollEndpointSecret([id]: [string], options: { yes?: boolean }, ctx: CliContext): Promise<void> {
  await confirm(ctx, options.yes, `Roll the signing secret of ${id}? The old one stops signing in 24 hours`);
  printOne(ctx, await ctx.api.rollWebhookEndpointSecret(id));
}
