import type { Customer, UpdateCustomerParams } from '../../shared/api/types.js';
import type { CliContext } from '../context.js';
import { printNumbered } from '../pages.js';
import type { ListFlags } from './list-options.js';
import { usageError } from '../errors.js';
import { confirm } from '../safety.js';

interface FieldOptions {
  name?: string;
  email?: string;
  phone?: string;
  description?: string;
  metadata?: string[];
  clear?: string[];
}

const CLEARABLE = ['name', 'email', 'phone', 'description'] as const;

function metadataOf(pairs: string[] | undefined): Record<string, string> | undefined {
  if (!pairs) return undefined;
  const metadata: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at < 1) throw usageError(`--metadata takes key=value, not "${pair}"`);
    metadata[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return metadata;
}

function fields(options: FieldOptions): UpdateCustomerParams {
  const body: UpdateCustomerParams = {};
  for (const key of CLEARABLE) if (options[key] !== undefined) body[key] = options[key];
  for (const key of options.clear ?? []) {
    if (!(CLEARABLE as readonly string[]).includes(key)) throw usageError(`--clear takes ${CLEARABLE.join(', ')}, not "${key}"`);
    body[key as (typeof CLEARABLE)[number]] = null;
  }
  const metadata = metadataOf(options.metadata);
  if (metadata) body.metadata = metadata;
  return body;
}

function customerRow(c: Customer) {
  return { reference: c.reference, name: c.name ?? '', email: c.email ?? '', phone: c.phone ?? '', id: c.id, created_at: c.created_at.slice(0, 19).replace('T', ' ') };
}

function printCustomer(ctx: CliContext, c: Customer): void {
  const rows: [string, string][] = [
    ['reference', c.reference],
    ['id', c.id],
    ['name', c.name ?? ''],
    ['email', c.email ?? ''],
    ['phone', c.phone ?? ''],
    ['description', c.description ?? ''],
    ...Object.entries(c.metadata).map(([k, v]): [string, string] => [`metadata.${k}`, v]),
  ];
  if (c.is_test) rows.push(['mode', 'test']);
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) ctx.out.line(`${k.padEnd(width)}  ${v}`);
}

export async function createCustomer(_args: [], options: FieldOptions, ctx: CliContext): Promise<void> {
  const body = fields(options);
  const res = await ctx.api.createCustomer({
    ...(body.name ? { name: body.name } : {}),
    ...(body.email ? { email: body.email } : {}),
    ...(body.phone ? { phone: body.phone } : {}),
    ...(body.description ? { description: body.description } : {}),
    ...(body.metadata ? { metadata: body.metadata } : {}),
  });
  if (ctx.out.json) ctx.out.printJson(res);
  else printCustomer(ctx, res.data);
}

export async function listCustomers(_args: [], options: ListFlags, ctx: CliContext): Promise<void> {
  await printNumbered(ctx, options, (page, size) => ctx.api.listCustomers({ page, size }), customerRow, 'customers');
}

export async function getCustomer([id]: [string], _options: object, ctx: CliContext): Promise<void> {
  const res = await ctx.api.getCustomer(id);
  if (ctx.out.json) ctx.out.printJson(res);
  else printCustomer(ctx, res.data);
}

export async function updateCustomer([id]: [string], options: FieldOptions, ctx: CliContext): Promise<void> {
  const body = fields(options);
  if (Object.keys(body).length === 0) throw usageError('nothing to change: give --name, --email, --phone, --description, --metadata or --clear');
  const res = await ctx.api.updateCustomer(id, body);
  if (ctx.out.json) ctx.out.printJson(res);
  else printCustomer(ctx, res.data);
}

export async function deleteCustomer([id]: [string], options: { yes?: boolean }, ctx: CliContext): Promise<void> {
  await confirm(ctx, options.yes, `Delete customer ${id}? It can no longer be found or named by new payments`);
  const res = await ctx.api.deleteCustomer(id);
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`Deleted customer ${res.data.id}`);
}
