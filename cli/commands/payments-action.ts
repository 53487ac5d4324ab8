import type { CliContext } from '../context.js';
import { printNumbered } from '../pages.js';
import type { ListFlags } from './list-options.js';
import { findReader } from '../../shared/api/client.js';
import type { Reader, Transaction } from '../../shared/api/types.js';
import { parseAmount, parseChargeAmount } from '../amount.js';
import { cartTotal, parseCartLine } from '../cart.js';
import { cancelWords, declineWords } from '../../shared/declines.js';
import { CliError, usageError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { cardOf, money, transactionRow } from '../format.js';
import { confirm, requireLive } from '../safety.js';
import { startSpinner } from '../spinner.js';
import { chooseTipOnScreen } from './sim-control.js';

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
  if (t.failure_code) rows.push(['failure', `${declineWords(t)} (${t.decline_code ?? t.failure_code})`]);
  if (t.status === 'canceled' && t.cancellation_reason) rows.push(['canceled', cancelWords(t.cancellation_reason) ?? t.cancellation_reason]);
  // A fee is only taken on money that moved: none on a failed, canceled or pending payment.
  if (t.amount_captured > 0) rows.push(['fee', money(t.platform_fee_cents, t.currency)]);
  if (t.receipt_url) rows.push(['receipt', t.receipt_url]);
  if (t.is_test) rows.push(['mode', 'test']);
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) rows.push([k, String(v)]);
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) ctx.out.line(`${k.padEnd(width)}  ${v}`);
}

export async function charge(
  [amountText]: [string],
  options: { currency?: string; paymentMethod?: string; captureManual?: boolean; description?: string; email?: string; customer?: string; live?: boolean },
  ctx: CliContext,
): Promise<void> {
  requireLive(ctx, options.live, 'pos charge');
  const currency = await currencyFor(ctx, options.currency);
  const amount = parseChargeAmount(amountText, currency);
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

/** The reader's action for this payment ended with the customer's cancel (the API itself stays silent). */
async function canceledOnReader(ctx: CliContext, reader: Reader, intent: string): Promise<string | null> {
  const action = (await ctx.api.listReaders()).data.find((r) => r.id === reader.id)?.action;
  if (action?.payment_intent_id !== intent || action.status !== 'failed' || action.failure_code !== 'customer_canceled') return null;
  return action.failure_message ?? 'The customer canceled on the reader.';
}

/**
 * The payment the reader is busy with, if any: a pending payment sent to it. Asked before anything
 * is created, so a busy reader never leaves a pending payment behind, and named so staff can cancel
 * it. One page of the newest pending payments is enough: a reader carries one payment at a time.
 */
async function paymentOnReader(ctx: CliContext, reader: Reader): Promise<Transaction | null> {
  const action = (await ctx.api.listReaders()).data.find((r) => r.id === reader.id)?.action;
  if (action?.status !== 'in_progress' || !action.transaction_id) return null;
  const t = (await ctx.api.getTransaction(action.transaction_id)).data;
  return t.status === 'pending' ? t : null;
}

/**
 * `pos pay --resend ID`: the same payment to a reader again, after the customer canceled on it, a
 * decline or a reader timeout. No new payment is made, so nothing is charged twice.
 */
async function resend(id: string, options: { reader: string; wait?: boolean }, ctx: CliContext): Promise<void> {
  const before = (await ctx.api.getTransaction(id)).data;
  if (before.status !== 'pending' && before.status !== 'failed') {
    throw new CliError(`payment ${before.reference} is ${before.status}: only an open or declined payment can go to a reader again (start a new one with pos pay AMOUNT)`, ExitCode.apiError);
  }
  const intent = before.payment_intent_id;
  if (!intent) throw new CliError(`payment ${before.reference} is not a reader payment`, ExitCode.apiError);
  const reader = await resolveReader(ctx, options.reader);
  await ctx.api.processPayment(intent, reader.processor_terminal_id);
  if (!options.wait) {
    if (ctx.out.json) ctx.out.printJson({ data: (await ctx.api.getTransaction(before.id)).data });
    else ctx.out.line(`${before.reference}: ${money(before.amount, before.currency)} sent to ${reader.name} again; follow it with \`pos transactions get ${before.reference}\``);
    return;
  }
  await waitForOutcome(ctx, reader, before, intent, before.status === 'failed');
}

export async function pay(
  [amountText]: [string | undefined],
  options: { reader: string; currency?: string; description?: string; wait?: boolean; cancelCurrent?: boolean; item?: string[]; tax?: string; tip?: boolean; customerCancel?: boolean; resend?: string; live?: boolean },
  ctx: CliContext,
): Promise<void> {
  requireLive(ctx, options.live, 'pos pay');
  if (options.resend !== undefined) {
    if (amountText !== undefined || options.item?.length) throw usageError('--resend sends an existing payment again: give no amount or --item');
    return resend(options.resend, options, ctx);
  }
  const currency = await currencyFor(ctx, options.currency);
  const lines = (options.item ?? []).map((item) => parseCartLine(item, currency));
  const tax = options.tax !== undefined ? parseAmount(options.tax, currency) : undefined;
  if (tax !== undefined && lines.length === 0) throw usageError('--tax goes with a cart: add --item lines');
  if (amountText === undefined && lines.length === 0) throw usageError('give an amount, or --item lines to total');
  const amount = amountText !== undefined ? parseChargeAmount(amountText, currency) : cartTotal(lines, tax);
  const reader = await resolveReader(ctx, options.reader);
  const current = await paymentOnReader(ctx, reader);
  if (current) {
    const what = `${current.reference} (${money(current.amount, current.currency)})`;
    if (!options.cancelCurrent) {
      throw new CliError(
        `${reader.name} is busy with payment ${what}: cancel it with \`pos transactions cancel ${current.reference}\`, or run this again with --cancel-current`,
        ExitCode.apiError,
      );
    }
    await ctx.api.cancelTransaction(current.id, { reason: 'canceled_by_staff' });
    if (!ctx.out.json) ctx.out.line(`Canceled ${what}, which was on ${reader.name}.`);
  }
  const created = await ctx.api.createTerminalPayment({
    amount,
    currency,
    terminal_id: reader.id,
    ...(options.description ? { description: options.description } : {}),
    ...(lines.length ? { line_items: lines } : {}),
    ...(tax !== undefined ? { tax } : {}),
    ...(options.tip === false ? { skip_tipping: true } : {}),
    ...(options.customerCancel === false ? { enable_customer_cancellation: false } : {}),
  });
  const intent = created.data.payment_intent_id;
  try {
    if (!intent) throw new CliError(`payment ${created.data.reference} has no processor payment to send to ${reader.name}`);
    await ctx.api.processPayment(intent, reader.processor_terminal_id);
  } catch (err) {
    // Never reached the reader (another payment got there first, say): cancel it, so it does not linger as pending.
    await ctx.api.cancelTransaction(created.data.id, { reason: 'abandoned' }).catch(() => undefined);
    throw err;
  }
  if (!options.wait) {
    const t = (await ctx.api.getTransaction(created.data.id)).data;
    if (ctx.out.json) ctx.out.printJson({ data: t });
    else ctx.out.line(`${t.reference}: ${money(amount, currency)} sent to ${reader.name}; follow it with \`pos transactions get ${t.reference}\``);
    return;
  }

  await waitForOutcome(ctx, reader, created.data, intent, false);
}

/** Whether the reader still works on this payment (a card not yet presented, or being read). */
async function onReaderNow(ctx: CliContext, reader: Reader, intent: string): Promise<boolean> {
  const action = (await ctx.api.listReaders()).data.find((r) => r.id === reader.id)?.action;
  return action?.payment_intent_id === intent && action.status === 'in_progress';
}

/**
 * `--wait`: until the payment ends or the customer cancels on the reader. A payment sent again after
 * a decline stays `failed` while the reader waits, so then the reader's action says when it is over.
 */
async function waitForOutcome(ctx: CliContext, reader: Reader, payment: Pick<Transaction, 'id' | 'amount' | 'currency'>, intent: string, afterDecline: boolean): Promise<void> {
  const spinner = ctx.out.json ? undefined : startSpinner(`Waiting for the card on ${reader.name} (${money(payment.amount, payment.currency)})… Ctrl-C stops waiting`, ctx.io.stderr);
  // Ctrl-C stops the waiting, not the payment: the customer may be tapping at that moment, and a
  // payment on the reader is staff's to cancel by name (pos transactions cancel), not a key's side effect.
  const interrupted = new AbortController();
  const onInterrupt = () => interrupted.abort();
  process.once('SIGINT', onInterrupt);
  const pause = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, WAIT_POLL_MS);
      interrupted.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  let t: Transaction;
  let customerCanceled: string | null = null;
  try {
    for (;;) {
      t = (await ctx.api.getTransaction(payment.id)).data;
      if (interrupted.signal.aborted) break;
      if (t.status === 'failed' && afterDecline && (await onReaderNow(ctx, reader, intent))) {
        await pause();
        continue;
      }
      if (t.status !== 'pending') break;
      customerCanceled = await canceledOnReader(ctx, reader, intent);
      if (customerCanceled) break;
      await pause();
    }
  } finally {
    process.off('SIGINT', onInterrupt);
    spinner?.stop();
  }
  if (interrupted.signal.aborted) {
    if (ctx.out.json) ctx.out.printJson({ data: t });
    throw new CliError(
      `stopped waiting: ${t.reference} is ${t.status}${t.status === 'pending' ? ` on ${reader.name} (follow it: pos transactions get ${t.reference}; cancel it: pos transactions cancel ${t.reference})` : ''}`,
      ExitCode.interrupted,
    );
  }
  if (customerCanceled) {
    if (ctx.out.json) ctx.out.printJson({ data: t, reader_failure: { code: 'customer_canceled', message: customerCanceled } });
    else ctx.out.error(`Customer canceled on the reader: ${t.reference} is still open (send it again: pos pay --resend ${t.reference} --reader "${reader.name}" --wait, or cancel it: pos transactions cancel ${t.reference})`);
    throw new CliError(`payment ${t.reference}: customer canceled on the reader`, ExitCode.paymentFailed);
  }
  if (ctx.out.json) ctx.out.printJson({ data: t });
  else if (t.status === 'succeeded') ctx.out.line(`Approved: ${money(t.amount, t.currency)}${t.tip_amount ? ` (tip ${money(t.tip_amount, t.currency)})` : ''} ${cardOf(t)}  ${t.reference}${t.receipt_url ? `\nReceipt: ${t.receipt_url}` : ''}`);
  if (t.status === 'failed') {
    if (!ctx.out.json) ctx.out.error(`${declineWords(t)}  ${t.reference} (another card: pos pay --resend ${t.reference} --reader "${reader.name}" --wait)`);
    throw new CliError(`payment ${t.reference} failed (${t.decline_code ?? t.failure_code ?? 'unknown'})`, ExitCode.paymentFailed);
  }
  if (t.status === 'canceled') {
    const why = cancelWords(t.cancellation_reason);
    throw new CliError(`payment ${t.reference} was ${why ?? 'canceled'}`, ExitCode.paymentFailed);
  }
}

export function positiveInt(value: string, flag: string, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw usageError(`${flag} must be a whole number from 1 to ${max}`);
  return n;
}

export async function listTransactions(_args: [], options: { status?: string; channel?: 'counter' | 'online' } & ListFlags, ctx: CliContext): Promise<void> {
  await printNumbered(ctx, options, (page, size) => ctx.api.listTransactions({ status: options.status, channel: options.channel, page, size }), transactionRow, 'payments');
}

export async function getTransaction([id]: [string], _options: object, ctx: CliContext): Promise<void> {
  printTransaction(ctx, (await ctx.api.getTransaction(id)).data);
}

export async function captureTransaction([id]: [string], options: { amount?: string; live?: boolean }, ctx: CliContext): Promise<void> {
  requireLive(ctx, options.live, 'pos transactions capture');
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

/**
 * A refund asks first when it returns all that is left of the payment: that cannot be taken back and
 * ends the sale. A partial refund (a returned item, a price correction) is everyday counter work.
 */
export async function refund([id]: [string], options: { amount?: string; reason?: string; yes?: boolean; live?: boolean }, ctx: CliContext): Promise<void> {
  requireLive(ctx, options.live, 'pos refund');
  let amount: number | undefined;
  if (options.amount) {
    const t = (await ctx.api.getTransaction(id)).data;
    amount = parseAmount(options.amount, t.currency);
    const rest = t.amount_captured - t.amount_refunded;
    if (amount === rest) await confirm(ctx, options.yes, `Refund all that is left of ${t.reference} (${money(rest, t.currency)})?`);
  } else {
    await confirm(ctx, options.yes, `Refund all that is left of payment ${id}?`);
  }
  const res = await ctx.api.refund(id, { ...(amount !== undefined ? { amount } : {}), ...(options.reason ? { reason: options.reason } : {}) });
  if (ctx.out.json) {
    ctx.out.printJson(res);
    return;
  }
  const r = res.data as { reference: string; amount: number; currency: string; status: string };
  ctx.out.line(`Refund ${r.reference}: ${money(r.amount, r.currency)} ${r.status}`);
}

export async function simulateTap([readerName]: [string], options: { tip?: string; tipOption?: string; card?: string }, ctx: CliContext): Promise<void> {
  const reader = await resolveReader(ctx, readerName);
  if (options.tip && options.tipOption) throw usageError('--tip and --tip-option are two answers to one screen: give one');
  let tip: number | undefined;
  if (options.tip) tip = parseAmount(options.tip, (await ctx.api.merchant()).data.default_currency);
  // A suggestion is picked on the reader's tip screen (the simulator's), then the card is tapped.
  if (options.tipOption) await chooseTipOnScreen(ctx, reader, positiveInt(options.tipOption, '--tip-option', 3));
  const res = await ctx.api
    .simulatePayment({ reader_id: reader.processor_terminal_id, ...(tip !== undefined ? { amount_tip: tip } : {}), ...(options.card ? { card_number: options.card } : {}) })
    ;
  const d = res.data;
  if (ctx.out.json) {
    ctx.out.printJson(res);
    if (d.status === 'failed') throw new CliError(`the card was declined on ${reader.name}`, ExitCode.paymentFailed);
    return;
  }
  if (d.status === 'succeeded') {
    ctx.out.line(`Tapped on ${reader.name}: approved`);
    return;
  }
  // The payment knows the issuer's reason (decline_code); the reader's answer only the generic code.
  const t = d.transaction_id ? (await ctx.api.getTransaction(d.transaction_id).catch(() => null))?.data : undefined;
  ctx.out.line(`Tapped on ${reader.name}: ${d.status === 'failed' ? 'declined' : d.status}${d.status === 'failed' ? `: ${declineWords(t ?? d.failure_code)}` : ''}`);
  if (d.status === 'failed') throw new CliError(`the card was declined on ${reader.name}`, ExitCode.paymentFailed);
}
