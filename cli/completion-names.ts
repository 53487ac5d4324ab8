import type { CliContext } from './context.js';

/**
 * `pos __complete readers|locations|profiles`: the names a completion script offers, one a line.
 * Whatever fails (no server, no key) offers nothing rather than an error in the middle of typing.
 */
export async function completeNames([what]: [string], _options: object, ctx: CliContext): Promise<void> {
  let names: string[] = [];
  try {
    if (what === 'profiles') names = ctx.config.profiles.list().map((p) => p.name);
    else if (what === 'readers') names = (await ctx.api.listReaders()).data.map((r) => r.name);
    else if (what === 'locations') names = (await ctx.api.listLocations()).data.map((l) => l.display_name);
  } catch {
    return;
  }
  for (const name of names) ctx.out.line(name);
}
