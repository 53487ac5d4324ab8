import type { CliContext } from '../context.js';
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
