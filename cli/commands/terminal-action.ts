import type { CliContext } from '../context.js';
import { readerRow } from '../format.js';
import { resolveReader } from './payments-action.js';

export async function listReaders(_args: [], _options: object, ctx: CliContext): Promise<void> {
  const res = await ctx.api.listReaders();
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.table(res.data.map((r) => readerRow(r)), ['name', 'status', 'last_seen', 'reader_id', 'model', 'id']);
}

export async function registerReader(_args: [], options: { name: string; code: string; location?: string }, ctx: CliContext): Promise<void> {
  const res = await ctx.api.registerReader({ name: options.name, registration_code: options.code, ...(options.location ? { location_id: options.location } : {}) });
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`Registered ${res.data.name}: ${res.data.processor_terminal_id} (${res.data.status})`);
}

export async function deleteReader([wanted]: [string], _options: object, ctx: CliContext): Promise<void> {
  const reader = await resolveReader(ctx, wanted);
  const res = await ctx.api.deleteReader(reader.id);
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`Deleted ${res.data.name} (${res.data.processor_terminal_id})`);
}

export async function createLocation(
  _args: [],
  options: { name: string; line1: string; line2?: string; city: string; state?: string; postalCode: string; country: string },
  ctx: CliContext,
): Promise<void> {
  const address = {
    line1: options.line1,
    ...(options.line2 ? { line2: options.line2 } : {}),
    city: options.city,
    ...(options.state ? { state: options.state } : {}),
    postal_code: options.postalCode,
    country: options.country,
  };
  const res = await ctx.api.createLocation({ display_name: options.name, address });
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`Location ${res.data.display_name}: ${res.data.id}`);
}

export async function listLocations(_args: [], _options: object, ctx: CliContext): Promise<void> {
  const res = await ctx.api.listLocations();
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.table(res.data.map((l) => ({ name: l.display_name, city: l.address.city, country: l.address.country, mode: l.is_test ? 'test' : 'live', id: l.id })));
}
