import type { CliContext } from '../context.js';
import { confirm } from '../safety.js';
import type { Location } from '../../shared/api/types.js';
import { deviceRow, readerRow } from '../format.js';
import { parseAmount } from '../amount.js';
import { usageError } from '../errors.js';
import { money } from '../format.js';
import { resolveReader } from './payments-action.js';
import { RECEIPT_POLICIES, type ReceiptPolicy } from '../../shared/receipt-policy.js';

function receiptPolicy(text: string): ReceiptPolicy {
  const policy = RECEIPT_POLICIES.find((p) => p === text.trim().toLowerCase());
  if (!policy) throw usageError(`receipt policy must be always, ask or never, not "${text}"`);
  return policy;
}

async function findLocation(ctx: CliContext, wanted: string): Promise<Location> {
  const locations = (await ctx.api.listLocations()).data;
  const location = locations.find((l) => l.id === wanted) ?? locations.find((l) => l.display_name === wanted);
  if (!location) throw usageError(`no location "${wanted}" (locations: ${locations.map((l) => l.display_name).join(', ') || 'none: pos locations create'})`);
  return location;
}

/** The readers, then the receipt printers and customer displays the shop's agents report. */
export async function listReaders(_args: [], _options: object, ctx: CliContext): Promise<void> {
  const [readers, devices] = await Promise.all([ctx.api.listReaders(), ctx.api.listDevices()]);
  if (ctx.out.json) {
    ctx.out.printJson({ data: readers.data, devices: devices.data });
    return;
  }
  ctx.out.table(readers.data.map((r) => readerRow(r)), ['name', 'status', 'last_seen', 'reader_id', 'model', 'id']);
  if (devices.data.length === 0) return;
  ctx.out.line();
  ctx.out.table(devices.data.map((d) => deviceRow(d)), ['device', 'agent', 'status', 'last_seen', 'paper', 'cover', 'drawer', 'queued', 'last_error', 'target']);
}

export async function registerReader(_args: [], options: { name: string; code: string; location?: string }, ctx: CliContext): Promise<void> {
  const res = await ctx.api.registerReader({ name: options.name, registration_code: options.code, ...(options.location ? { location_id: options.location } : {}) });
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`Registered ${res.data.name}: ${res.data.processor_terminal_id} (${res.data.status})`);
}

export async function deleteReader([wanted]: [string], options: { yes?: boolean }, ctx: CliContext): Promise<void> {
  const reader = await resolveReader(ctx, wanted);
  await confirm(ctx, options.yes, `Delete reader ${reader.name} (${reader.processor_terminal_id})? It takes no payments until registered again`);
  const res = await ctx.api.deleteReader(reader.id);
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`Deleted ${res.data.name} (${res.data.processor_terminal_id})`);
}

export async function createLocation(
  _args: [],
  options: { name: string; line1: string; line2?: string; city: string; state?: string; postalCode: string; country: string; receipts?: string },
  ctx: CliContext,
): Promise<void> {
  const policy = options.receipts === undefined ? undefined : receiptPolicy(options.receipts);
  const address = {
    line1: options.line1,
    ...(options.line2 ? { line2: options.line2 } : {}),
    city: options.city,
    ...(options.state ? { state: options.state } : {}),
    postal_code: options.postalCode,
    country: options.country,
  };
  const res = await ctx.api.createLocation({ display_name: options.name, address, ...(policy ? { receipt_policy: policy } : {}) });
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`Location ${res.data.display_name}: ${res.data.id}`);
}

export async function listLocations(_args: [], _options: object, ctx: CliContext): Promise<void> {
  const res = await ctx.api.listLocations();
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.table(res.data.map((l) => ({ name: l.display_name, city: l.address.city, country: l.address.country, tipping: tippingWords(l.tipping), receipts: l.receipt_policy, mode: l.is_test ? 'test' : 'live', id: l.id })));
}

function tippingWords(tipping: Location['tipping']): string {
  if (!tipping) return 'off';
  const parts: string[] = [];
  if (tipping.percentages) parts.push(tipping.percentages.map((p) => `${p}%`).join(' / '));
  if (tipping.fixed_amounts) parts.push(tipping.fixed_amounts.map((a) => money(a, tipping.currency)).join(' / '));
  if (tipping.smart_tip_threshold !== null) parts.push(`fixed below ${money(tipping.smart_tip_threshold, tipping.currency)}`);
  return parts.join('; ');
}

export async function setTipping(
  [wanted]: [string],
  options: { percentages?: string; fixed?: string; threshold?: string; off?: boolean },
  ctx: CliContext,
): Promise<void> {
  const location = await findLocation(ctx, wanted);
  const some = options.percentages !== undefined || options.fixed !== undefined || options.threshold !== undefined;
  if (options.off === some) throw usageError('give --off, or --percentages and/or --fixed (with --threshold for both)');
  const currency = (await ctx.api.merchant()).data.default_currency;
  const list = (text: string) => text.split(',').map((part) => part.trim());
  const tipping = options.off
    ? null
    : {
        currency,
        ...(options.percentages !== undefined ? { percentages: list(options.percentages).map(Number) } : {}),
        ...(options.fixed !== undefined ? { fixed_amounts: list(options.fixed).map((a) => parseAmount(a, currency)) } : {}),
        ...(options.threshold !== undefined ? { smart_tip_threshold: parseAmount(options.threshold, currency) } : {}),
      };
  const res = await ctx.api.updateLocation(location.id, { tipping });
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`Tipping at ${res.data.display_name}: ${tippingWords(res.data.tipping)}`);
}

export async function setReceiptPolicy([wanted, text]: [string, string], _options: object, ctx: CliContext): Promise<void> {
  const receipt_policy = receiptPolicy(text);
  const location = await findLocation(ctx, wanted);
  const res = await ctx.api.updateLocation(location.id, { receipt_policy });
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`Receipts at ${res.data.display_name}: ${res.data.receipt_policy}`);
}
