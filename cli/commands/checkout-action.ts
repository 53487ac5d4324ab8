import type { CliContext } from '../context.js';
import { parseAmount } from '../amount.js';
import { money } from '../format.js';
import { commonBody, type CreateOptions } from './links-action.js';
import { currencyFor } from './payments-action.js';

export async function createCheckout([amountText]: [string], options: CreateOptions, ctx: CliContext): Promise<void> {
  const currency = await currencyFor(ctx, options.currency);
  const res = await ctx.api.createCheckoutSession({
    amount: parseAmount(amountText, currency),
    currency,
    ...commonBody(options),
    ...(options.name ? { customer_name: options.name } : {}),
  });
  if (ctx.out.json) ctx.out.printJson(res);
  else {
    ctx.out.line(`${String(res.data.reference)}  ${money(Number(res.data.amount), currency)}`);
    ctx.out.line(res.data.url);
  }
}

export async function getCheckout([id]: [string], _options: object, ctx: CliContext): Promise<void> {
  const res = await ctx.api.getCheckoutSession(id);
  if (ctx.out.json) ctx.out.printJson(res);
  else {
    const s = res.data as { reference: string; status: string; amount: number; currency: string; url: string; transaction_id: string };
    ctx.out.table([{ reference: s.reference, status: s.status, amount: money(s.amount, s.currency), transaction: s.transaction_id, url: s.url }]);
  }
}
