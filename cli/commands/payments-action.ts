import type { CliContext } from '../context.js';
import { findReader } from '../../shared/api/client.js';
import { ApiRequestError } from '../../shared/api/errors.js';
import type { Reader, Transaction } from '../../shared/api/types.js';
import { minimumCharge } from '../../shared/money.js';
import { parseAmount } from '../amount.js';
import { CliError, usageError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { cardOf, CONFLICT_WORDS, declineWords, money, transactionRow } from '../format.js';
import { startSpinner } from '../spinner.js';

export async function currencyFor(ctx: CliContext, explicit: string | undefined): Promise<string> {
  if (explicit) return explicit.toLowerCase();
  return (await ctx.api.merchant()).data.default_currency;
}

function printTransaction(ctx: CliContext, t: Transaction, extra: Record<string, unknown> = {}): void {
  if (ctx.out.json) {
    ctx.out.printJson({ data: t, ...extra });
    return;
  }
  const rows: [string, string][] = [
    ['reference', t.reference],
    ['id', t.id],
    ['status', t.status],
    ['amount', money(t.amount, t.currency)],
  ];
  if (t.tip_amount) rows.push(['tip', money(t.tip_amount, t.currency)]);
  if (t.amount_refunded) rows.push(['refunded', money(t.amount_refunded, t.currency)]);
  if (t.card_last_four) rows.push(['card', cardOf(t)]);
  if (t.failure_code) rows.push(['failure', `${t.failure_code}${t.failure_message ? ` (${t.failure_message})` : ''}`]);
  rows.push(['fee', money(t.platform_fee_cents, t.currency)]);
  if (t.receipt_url) rows.push(['receipt', t.receipt_url]);
  if (t.is_test) rows.push(['mode', 'test']);
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) rows.push([k, String(v)]);
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) ctx.out.line(`${k.padEnd(width)}  ${v}`);
}

export async function charge(
  [amountText]: [string],
  options: { currency?: string; paymentMethod?: string; captureManual?: boolean; description?: string; email?: string; customer?: string },
  ctx: CliContext,
): Promise<void> {
  const currency = await currencyFor(ctx, options.currency);
  const amount = parseAmount(amountText, currency);
  // Said in money before the API's schema says it in minor units.
  const minimum = minimumCharge(currency);
  if (amount < minimum) throw usageError(`The minimum ${currency.toUpperCase()} payment is ${money(minimum, currency)}`);
  const res = await ctx.api.createTransaction({
    amount,
    currency,
    ...(options.paymentMethod ? { payment_method: options.paymentMethod, confirm: true } : {}),
    ...(options.captureManual ? { capture_method: 'manual' } : {}),
    ...(options.description ? { description: options.description } : {}),
    ...(options.email ? { receipt_email: options.email } : {}),
    ...(options.customer ? { customer_id: options.customer } : {}),
  });
  if (ctx.out.json) {
    ctx.out.printJson(res);
    return;
  }
  printTransaction(ctx, res.data, options.paymentMethod ? {} : { client_secret: res.client_secret });
}

export async function resolveReader(ctx: CliContext, wanted: string): Promise<Reader> {
  const readers = (await ctx.api.listReaders()).data;
  const reader = findReader(readers, wanted);
  if (!reader) {
    const names = readers.map((r) => r.name).join(', ');
    throw usageError(`no reader "${wanted}" in ${ctx.api.mode ?? 'this'} mode${names ? ` (readers: ${names})` : ' (none registered: pos readers register)'}`);
  }
  return reader;
}

/** How often `--wait` re-reads the payment: quick enough to feel live at a counter, 2 requests/s. */
const WAIT_POLL_MS = 500;

export async function pay([amountText]: [string], options: { reader: string; currency?: string; description?: string; wait?: boolean }, ctx: CliContext): Promise<void> {
  const currency = await currencyFor(ctx, options.currency);
  const amount = parseAmount(amountText, currency);
  const reader = await resolveReader(ctx, options.reader);
  const created = await ctx.api.createTerminalPayment({ amount, currency, terminal_id: reader.id, ...(options.description ? { description: options.description } : {}) });
  const intent = created.data.payment_intent_id;
  if (!intent) throw new CliError(`payment ${created.data.reference} has no processor payment to send to ${reader.name}`);
  await ctx.api.processPayment(intent, reader.processor_terminal_id);
  if (!options.wait) {
    const t = (await ctx.api.getTransaction(created.data.id)).data;
    if (ctx.out.json) ctx.out.printJson({ data: t });
    else ctx.out.line(`${t.reference}: ${money(amount, currency)} sent to ${reader.name}; follow it with \`pos transactions get ${t.reference}\``);
    return;
  }

  const spinner = ctx.out.json ? undefined : startSpinner(`Waiting for the card on ${reader.name} (${money(amount, currency)})… Ctrl-C cancels`);
  let canceling = false;
  const onInterrupt = () => {
    if (canceling) return;
    canceling = true;
    spinner?.update('Canceling…');
    ctx.api.cancelTransaction(created.data.id, { reason: 'requested_by_customer' }).catch((err: unknown) => {
      canceling = false;
      if (err instanceof ApiRequestError && err.error.code === 'authorization_in_progress') spinner?.update(`${CONFLICT_WORDS.authorization_in_progress}`);
      else spinner?.update(`Cancel failed: ${err instanceof Error ? err.message : String(err)}`);
    });
  };
  process.on('SIGINT', onInterrupt);
  let t: Transaction;
  try {
    for (;;) {
      t = (await ctx.api.getTransaction(created.data.id)).data;
      if (t.status !== 'pending') break;
      await new Promise((r) => setTimeout(r, WAIT_POLL_MS));
    }
  } finally {
    process.off('SIGINT', onInterrupt);
    spinner?.stop();
  }
  if (ctx.out.json) ctx.out.printJson({ data: t });
  else if (t.status === 'succeeded') ctx.out.line(`Approved: ${money(t.amount, t.currency)}${t.tip_amount ? ` (tip ${money(t.tip_amount, t.currency)})` : ''} ${cardOf(t)}  ${t.reference}${t.receipt_url ? `\nReceipt: ${t.receipt_url}` : ''}`);
  if (t.status === 'failed') {
    if (!ctx.out.json) ctx.out.error(`Declined: ${declineWords(t.failure_code)}  ${t.reference}`);
    throw new CliError(`payment ${t.reference} failed (${t.failure_code ?? 'unknown'})`, ExitCode.paymentFailed);
  }
  if (t.status === 'canceled') {
    throw new CliError(`payment ${t.reference} was canceled`, ExitCode.paymentFailed);
  }
}

export function positiveInt(value: string, flag: string, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw usageError(`${flag} must be a whole number from 1 to ${max}`);
  return n;
}

export async function listTransactions(_args: [], options: { status?: string; page: string; size: string }, ctx: CliContext): Promise<void> {
  const page = await ctx.api.listTransactions({ status: options.status, page: positiveInt(options.page, '--page', 1_000_000), size: positiveInt(options.size, '--size', 100) });
  if (ctx.out.json) {
    ctx.out.printJson(page);
    return;
  }
  ctx.out.table(page.data.map(transactionRow));
  ctx.out.line(`page ${page.page} of ${page.lastPage} (${page.totalCount} payments)`);
}

export async function getTransaction([id]: [string], _options: object, ctx: CliContext): Promise<void> {
  printTransaction(ctx, (await ctx.api.getTransaction(id)).data);
}

export async function captureTransaction([id]: [string], options: { amount?: string }, ctx: CliContext): Promise<void> {
  let body = {};
  if (options.amount) {
    const t = (await ctx.api.getTransaction(id)).data;
    body = { amount_to_capture: parseAmount(options.amount, t.currency) };
  }
  printTransaction(ctx, (await ctx.api.captureTransaction(id, body)).data);
}

export async function cancelTransaction([id]: [string], options: { reason?: string }, ctx: CliContext): Promise<void> {
  const res = await ctx.api.cancelTransaction(id, options.reason ? { reason: options.reason } : {});
  if (ctx.out.json) {
    ctx.out.printJson(res);
    return;
  }
  printTransaction(ctx, res.data, { reader_reset: res.reader_reset ?? undefined, warning: res.warning });
}

export async function refund([id]: [string], options: { amount?: string; reason?: string }, ctx: CliContext): Promise<void> {
  let amount: number | undefined;
  if (options.amount) {
    const t = (await ctx.api.getTransaction(id)).data;
    amount = parseAmount(options.amount, t.currency);
  }
  const res = await ctx.api.refund(id, { ...(amount !== undefined ? { amount } : {}), ...(options.reason ? { reason: options.reason } : {}) });
  if (ctx.out.json) {
    ctx.out.printJson(res);
    return;
  }
  const r = res.data as { reference: string; amount: number; currency: string; status: string };
  ctx.out.line(`Refund ${r.reference}: ${money(r.amount, r.currency)} ${r.status}`);
}

export async function simulateTap([readerName]: [string], options: { tip?: string; card?: string }, ctx: CliContext): Promise<void> {
  const reader = await resolveReader(ctx, readerName);
  let tip: number | undefined;
  if (options.tip) tip = parseAmount(options.tip, (await ctx.api.merchant()).data.default_currency);
  const res = await ctx.api
    .simulatePayment({ reader_id: reader.processor_terminal_id, ...(tip !== undefined ? { amount_tip: tip } : {}), ...(options.card ? { card_number: options.card } : {}) })
    ;
  if (ctx.out.json) {
    ctx.out.printJson(res);
    return;
  }
  const d = res.data;
  ctx.out.line(d.status === 'succeeded' ? `Tapped on ${reader.name}: approved` : `Tapped on ${reader.name}: ${d.status}${d.failure_code ? ` (${declineWords(d.failure_code)})` : ''}`);
}
