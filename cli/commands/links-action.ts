import type { CliContext } from '../context.js';
import { printCursor } from '../pages.js';
import type { ListFlags } from './list-options.js';
import type { PaymentLink } from '../../shared/api/types.js';
import { parseAmount } from '../amount.js';
import { usageError } from '../errors.js';
import { confirm } from '../safety.js';
import { money } from '../format.js';
import { currencyFor } from './payments-action.js';

function expiresIn(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw usageError('--expires-in must be a whole number of seconds');
  return n;
}

function linkRow(l: PaymentLink) {
  return { reference: l.reference, status: l.status, amount: money(l.amount, l.currency.toLowerCase()), url: l.url, expires_at: l.expires_at.slice(0, 19).replace('T', ' ') };
}

export interface CreateOptions {
  currency?: string;
  description?: string;
  email?: string;
  name?: string;
  successUrl?: string;
  cancelUrl?: string;
  expiresIn?: string;
}

export function commonBody(options: CreateOptions) {
  const expires = expiresIn(options.expiresIn);
  return {
    ...(options.description ? { description: options.description } : {}),
    ...(options.email ? { customer_email: options.email } : {}),
    ...(options.successUrl ? { success_url: options.successUrl } : {}),
    ...(options.cancelUrl ? { cancel_url: options.cancelUrl } : {}),
    ...(expires !== undefined ? { expires_in: expires } : {}),
  };
}

export async function createLink([amountText]: [string], options: CreateOptions, ctx: CliContext): Promise<void> {
  const currency = await currencyFor(ctx, options.currency);
  const res = await ctx.api.createPaymentLink({ amount: parseAmount(amountText, currency), currency, ...commonBody(options) });
  if (ctx.out.json) ctx.out.printJson(res);
  else {
    ctx.out.line(`${res.data.reference}  ${money(res.data.amount, currency)}`);
    ctx.out.line(res.data.url);
  }
}

export async function listLinks(_args: [], options: ListFlags, ctx: CliContext): Promise<void> {
  await printCursor(ctx, options, (query) => ctx.api.listPaymentLinks(query), linkRow, 'links');
}

export async function getLink([id]: [string], _options: object, ctx: CliContext): Promise<void> {
  const res = await ctx.api.getPaymentLink(id);
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.table([linkRow(res.data)]);
}

export async function deactivateLink([id]: [string], options: { yes?: boolean }, ctx: CliContext): Promise<void> {
  await confirm(ctx, options.yes, `Deactivate payment link ${id}? It takes no more payments, and cannot be turned back on`);
  const res = await ctx.api.deactivatePaymentLink(id);
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`${res.data.reference} ${res.data.status}`);
}
