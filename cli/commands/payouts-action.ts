import type { Payout } from '../../shared/api/types.js';
import { parseAmount } from '../amount.js';
import type { CliContext } from '../context.js';
import { printNumbered } from '../pages.js';
import type { ListFlags } from './list-options.js';
import { money } from '../format.js';
import { confirm, requireLive } from '../safety.js';
import { currencyFor } from './payments-action.js';

function payoutRow(p: Payout) {
  return {
    reference: p.reference,
    status: p.status,
    amount: money(p.amount, p.currency),
    arrival: p.arrival_date ? p.arrival_date.slice(0, 10) : '',
    kind: p.automatic ? 'scheduled' : 'manual',
    failure: p.failure_code ?? '',
    created_at: p.created_at.slice(0, 19).replace('T', ' '),
  };
}

export async function showBalance(_args: [], _options: object, ctx: CliContext): Promise<void> {
  const res = await ctx.api.balance();
  if (ctx.out.json) {
    ctx.out.printJson(res);
    return;
  }
  const currencies = [...new Set([...res.data.available, ...res.data.pending].map((b) => b.currency))].sort();
  const of = (list: readonly { amount: number; currency: string }[], currency: string) => list.find((b) => b.currency === currency)?.amount ?? 0;
  ctx.out.table(
    currencies.map((c) => ({ currency: c.toUpperCase(), available: money(of(res.data.available, c), c), pending: money(of(res.data.pending, c), c) })),
    ['currency', 'available', 'pending'],
  );
}

export async function listPayouts(_args: [], options: { status?: string } & ListFlags, ctx: CliContext): Promise<void> {
  await printNumbered(ctx, options, (page, size) => ctx.api.listPayouts({ status: options.status, page, size }), payoutRow, 'payouts');
}

export async function getPayout([id]: [string], _options: object, ctx: CliContext): Promise<void> {
  const res = await ctx.api.getPayout(id);
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.table([payoutRow(res.data)]);
}

export async function createPayout([amountText]: [string | undefined], options: { currency?: string; description?: string; yes?: boolean; live?: boolean }, ctx: CliContext): Promise<void> {
  requireLive(ctx, options.live, 'pos payouts create');
  const currency = await currencyFor(ctx, options.currency);
  const amount = amountText !== undefined ? parseAmount(amountText, currency) : undefined;
  await confirm(ctx, options.yes, `Pay out ${amount !== undefined ? money(amount, currency) : `all that is available in ${currency.toUpperCase()}`} to the bank account now?`);
  const res = await ctx.api.createPayout({
    currency,
    ...(amount !== undefined ? { amount } : {}),
    ...(options.description ? { description: options.description } : {}),
  });
  if (ctx.out.json) ctx.out.printJson(res);
  else ctx.out.line(`Payout ${res.data.reference}: ${money(res.data.amount, res.data.currency)} ${res.data.status}${res.data.arrival_date ? `, expected ${res.data.arrival_date.slice(0, 10)}` : ''}`);
}

export async function bankAccount(_args: [], options: { accountNumber?: string; routingNumber?: string; holder?: string }, ctx: CliContext): Promise<void> {
  const res = options.accountNumber
    ? await ctx.api.setBankAccount({
        account_number: options.accountNumber,
        ...(options.routingNumber ? { routing_number: options.routingNumber } : {}),
        ...(options.holder ? { account_holder_name: options.holder } : {}),
      })
    : await ctx.api.bankAccount();
  if (ctx.out.json) ctx.out.printJson(res);
  else {
    const b = res.data;
    ctx.out.line(`${b.bank_name ?? 'Bank account'} ••${b.last4}${b.routing_number ? ` (routing ${b.routing_number})` : ''}, ${b.currency.toUpperCase()}, ${b.status}`);
  }
}
