import type { CliContext } from './context.js';

/**
 * `pos __complete readers|locations|profiles|operations`: the names a completion script offers, one a
 * line (`operations`: the operationIds of the server's `/v1/openapi.json`, for `pos api`).
 * Whatever fails (no server, no key) offers nothing rather than an error in the middle of typing.
 */
export async function completeNames([what]: [string], _options: object, ctx: CliContext): Promise<void> {
  let names: string[] = [];
  try {
    if (what === 'profiles') names = ctx.config.profiles.list().map((p) => p.name);
    else if (what === 'readers') names = (await ctx.api.listReaders()).data.map((r) => r.name);
    else if (what === 'locations') names = (await ctx.api.listLocations()).data.map((l) => l.display_name);
    else if (what === 'operations') {
      const document = await ctx.api.request<{ paths: Record<string, Record<string, { operationId?: string }>> }>('GET', '/v1/openapi.json');
      names = Object.values(document.paths).flatMap((methods) => Object.values(methods).flatMap((o) => (o.operationId ? [o.operationId] : []))).sort();
    }
  } catch {
    return;
  }
  for (const name of names) ctx.out.line(name);
}
