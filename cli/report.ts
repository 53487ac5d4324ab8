import type { PosApi } from '../shared/api/client.js';
import { ApiRequestError } from '../shared/api/errors.js';
import type { Location, Reader, Transaction, WebhookEvent } from '../shared/api/types.js';
import { formatPlain } from './amount.js';
import { money } from './format.js';
import { COUNTER_PAYMENT_METHODS } from '../shared/channels.js';

/**
 * The end-of-day close-out, computed from the day's payments: pure, shared by `pos report day` and
 * the TUI's day view. A payment belongs to the day it was created (local time of the counter);
 * refunds count against the payment they return, whenever they were made. Disputes and payouts are
 * the whole shop's, counted on the day their events say they happened: a dispute opened or closed,
 * a payout sent or failed.
 */

export interface Tally {
  count: number;
  amount: number;
}

export interface Bucket {
  scope: 'total' | 'location' | 'reader';
  name: string;
  succeeded: Tally;
  failed: Tally;
  canceled: Tally;
  refunded: Tally;
  pending: Tally;
  tips: number;
  fees: number;
  /** Paid − refunded − platform fees: what the shop keeps. */
  net: number;
}

export interface DayDisputes {
  opened: Tally;
  closed: Tally;
  won: number;
  lost: number;
}

export interface DayPayouts {
  sent: Tally;
  failed: Tally;
}

/** Paid and refunded money of one way of paying, for the drawer count. */
export interface TenderTally {
  count: number;
  amount: number;
  refunded: number;
}

/**
 * Card (and every other processor-paid method) against cash, and the drawer: the cash it should
 * hold (the opening float, plus cash sales, less cash refunds) and, once counted, the difference.
 */
export interface DayTender {
  card: TenderTally;
  cash: TenderTally;
  float: number;
  expected_cash: number;
  counted_cash: number | null;
  /** counted − expected: positive is over, negative short; null until counted. */
  over_short: number | null;
}

export interface DayReport {
  date: string;
  currency: string;
  /** Payments in another currency than the merchant's: counted here, not summed in. */
  other_currency_count: number;
  total: Bucket;
  locations: Bucket[];
  readers: Bucket[];
  /** Null when the key may not read them: a counter key sees neither disputes nor payouts. */
  disputes: DayDisputes | null;
  payouts: DayPayouts | null;
  tender: DayTender;
}

/** The events the close-out reads besides the payments. */
export const REPORT_EVENT_TYPES = ['dispute.created', 'dispute.closed', 'payout.created', 'payout.failed'] as const;

const PAID = new Set(['succeeded', 'partially_refunded', 'refunded']);
const ONLINE = 'Online (no reader)';
/** A counter sale no till was recorded for (cash sales taken before sales named their till). */
export const UNASSIGNED = 'Unassigned (counter)';
const AT_COUNTER = new Set<string>(COUNTER_PAYMENT_METHODS);

function empty(scope: Bucket['scope'], name: string): Bucket {
  const t = () => ({ count: 0, amount: 0 });
  return { scope, name, succeeded: t(), failed: t(), canceled: t(), refunded: t(), pending: t(), tips: 0, fees: 0, net: 0 };
}

function add(b: Bucket, t: Transaction): void {
  if (PAID.has(t.status)) {
    const captured = typeof t.amount_captured === 'number' ? t.amount_captured : t.amount;
    b.succeeded.count += 1;
    b.succeeded.amount += captured;
    b.tips += t.tip_amount;
    b.fees += t.platform_fee_cents;
    b.net += captured - t.platform_fee_cents;
  } else if (t.status === 'failed') {
    b.failed.count += 1;
    b.failed.amount += t.amount;
  } else if (t.status === 'canceled') {
    b.canceled.count += 1;
    b.canceled.amount += t.amount;
  } else {
    b.pending.count += 1;
    b.pending.amount += t.amount;
  }
  if (t.amount_refunded > 0) {
    b.refunded.count += 1;
    b.refunded.amount += t.amount_refunded;
    b.net -= t.amount_refunded;
  }
}

/** The local calendar day [start, end) of `date` (YYYY-MM-DD), as epoch milliseconds. */
export function dayBounds(date: string): { start: number; end: number } {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!m) throw new Error(`not a date: ${date}`);
  const start = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (start.getDate() !== Number(m[3])) throw new Error(`not a date: ${date}`);
  const end = new Date(start);
  end.setDate(end.getDate() + 1);
  return { start: start.getTime(), end: end.getTime() };
}

export function localDate(ms: number = Date.now()): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
}

export function computeDayReport(input: {
  date: string;
  currency: string;
  transactions: readonly Transaction[];
  readers: readonly Reader[];
  locations: readonly Location[];
  /** Only this location (uuid or display name). Disputes and payouts are the whole shop's. */
  location?: string | undefined;
  /** The day's dispute and payout events (REPORT_EVENT_TYPES); others are ignored. */
  events?: readonly WebhookEvent[];
  /** What the key may not read (the API refused its events): shown as not available, never as none. */
  unreadable?: readonly ('disputes' | 'payouts')[];
  /** The cash the drawer started the day with, and the cash counted in it at the close (minor units). */
  float?: number | undefined;
  countedCash?: number | undefined;
}): DayReport {
  const { start, end } = dayBounds(input.date);
  const readerOf = (t: Transaction) => input.readers.find((r) => r.id === t.terminal_id || r.processor_terminal_id === t.reader_id || r.id === t.reader_id);
  // A till's sale belongs to its reader's location, or to the location it named (a till without a
  // card reader); a counter sale naming neither is unassigned, never online.
  const locationOf = (t: Transaction, reader: Reader | undefined) => reader?.location_id ?? t.location_id ?? undefined;
  const unplaced = (t: Transaction) => (AT_COUNTER.has(t.payment_method_type) ? UNASSIGNED : ONLINE);
  const locationName = (t: Transaction, id: string | undefined) => (id ? (input.locations.find((l) => l.id === id)?.display_name ?? id) : unplaced(t));
  const wantedLocation = input.location ? input.locations.find((l) => l.id === input.location || l.display_name === input.location) : undefined;
  if (input.location && !wantedLocation) throw new Error(`no location "${input.location}"`);

  const total = empty('total', 'All');
  const byLocation = new Map<string, Bucket>();
  const byReader = new Map<string, Bucket>();
  let other = 0;
  const tenderTally = () => ({ count: 0, amount: 0, refunded: 0 });
  const card = tenderTally();
  const cash = tenderTally();
  for (const t of input.transactions) {
    const at = Date.parse(t.created_at);
    if (at < start || at >= end) continue;
    const reader = readerOf(t);
    const locationId = locationOf(t, reader);
    if (wantedLocation && locationId !== wantedLocation.id) continue;
    if (t.currency.toLowerCase() !== input.currency.toLowerCase()) {
      other += 1;
      continue;
    }
    add(total, t);
    if (PAID.has(t.status)) {
      const tender = t.payment_method_type === 'cash' ? cash : card;
      tender.count += 1;
      tender.amount += typeof t.amount_captured === 'number' ? t.amount_captured : t.amount;
      tender.refunded += t.amount_refunded;
    }
    const loc = locationName(t, locationId);
    if (!byLocation.has(loc)) byLocation.set(loc, empty('location', loc));
    add(byLocation.get(loc)!, t);
    const rName = reader?.name ?? (t.reader_id ? `${t.reader_id} (deleted)` : locationId ? `No reader at ${loc}` : unplaced(t));
    if (!byReader.has(rName)) byReader.set(rName, empty('reader', rName));
    add(byReader.get(rName)!, t);
  }
  const sorted = (m: Map<string, Bucket>) => [...m.values()].sort((a, b) => a.name.localeCompare(b.name));
  const tally = () => ({ count: 0, amount: 0 });
  const disputes: DayDisputes = { opened: tally(), closed: tally(), won: 0, lost: 0 };
  const payouts: DayPayouts = { sent: tally(), failed: tally() };
  for (const e of input.events ?? []) {
    const at = Date.parse(e.created_at);
    const amount = typeof e.data.amount === 'number' ? e.data.amount : 0;
    if (at < start || at >= end || String(e.data.currency ?? '').toLowerCase() !== input.currency.toLowerCase()) continue;
    const count = (t: Tally) => {
      t.count += 1;
      t.amount += amount;
    };
    if (e.type === 'dispute.created') count(disputes.opened);
    else if (e.type === 'dispute.closed') {
      count(disputes.closed);
      // An inquiry closes `warning_closed`: nothing was won or lost.
      if (e.data.status === 'won') disputes.won += 1;
      if (e.data.status === 'lost') disputes.lost += 1;
    } else if (e.type === 'payout.created') count(payouts.sent);
    else if (e.type === 'payout.failed') count(payouts.failed);
  }
  const tender = drawerTender(card, cash, input.float ?? 0, input.countedCash ?? null);
  const unreadable = new Set(input.unreadable ?? []);
  return {
    date: input.date,
    currency: input.currency.toLowerCase(),
    other_currency_count: other,
    total,
    locations: sorted(byLocation),
    readers: sorted(byReader),
    disputes: unreadable.has('disputes') ? null : disputes,
    payouts: unreadable.has('payouts') ? null : payouts,
    tender,
  };
}

/** The drawer: the cash it should hold (float + cash paid − cash refunded) and, once counted, the difference. */
function drawerTender(card: TenderTally, cash: TenderTally, float: number, counted: number | null): DayTender {
  const expected = float + cash.amount - cash.refunded;
  return { card, cash, float, expected_cash: expected, counted_cash: counted, over_short: counted === null ? null : counted - expected };
}

/** The report with the drawer's opening float and counted cash as staff entered them at the counter. */
export function withDrawer(r: DayReport, float: number, counted: number | null): DayReport {
  return { ...r, tender: drawerTender(r.tender.card, r.tender.cash, float, counted) };
}

/** Card and cash apart, and the drawer: what it should hold and, once counted, over or short. */
export function tenderLines(r: DayReport): string[] {
  const m = (n: number) => money(n, r.currency);
  const { card, cash } = r.tender;
  const refunds = (t: TenderTally) => (t.refunded ? `, ${m(t.refunded)} refunded` : '');
  const lines = [
    `Card: ${card.count} paid (${m(card.amount)}${refunds(card)})`,
    `Cash: ${cash.count} paid (${m(cash.amount)}${refunds(cash)})`,
    `Expected in drawer: ${m(r.tender.expected_cash)}${r.tender.float ? ` (float ${m(r.tender.float)})` : ''}`,
  ];
  const { counted_cash: counted, over_short: diff } = r.tender;
  if (counted !== null && diff !== null) {
    lines.push(`Counted: ${m(counted)}, ${diff === 0 ? 'balanced' : diff > 0 ? `over by ${m(diff)}` : `short by ${m(-diff)}`}`);
  }
  return lines;
}

/** The disputes and payouts of the day in words, one line each, for the table view and the TUI. */
export function shopLines(r: DayReport): string[] {
  const m = (n: number) => money(n, r.currency);
  const d = r.disputes;
  const p = r.payouts;
  return [
    d ? `Disputes: ${d.opened.count} opened (${m(d.opened.amount)}), ${d.closed.count} closed (${m(d.closed.amount)}: ${d.won} won, ${d.lost} lost)` : 'Disputes: not shown to this key (it lacks disputes:read)',
    p ? `Payouts: ${p.sent.count} sent (${m(p.sent.amount)})${p.failed.count ? `, ${p.failed.count} failed (${m(p.failed.amount)})` : ''}` : 'Payouts: not shown to this key (it lacks payouts:read)',
  ];
}

export const REPORT_COLUMNS = ['scope', 'name', 'paid', 'failed', 'canceled', 'refunded', 'tips', 'fees', 'net'] as const;

/** One row per bucket for people: "3 · $47.50" cells in the merchant's currency format. */
export function reportRows(r: DayReport): Record<(typeof REPORT_COLUMNS)[number], string>[] {
  const cell = (t: Tally) => `${t.count} · ${money(t.amount, r.currency)}`;
  return [r.total, ...r.locations, ...r.readers].map((b) => ({
    scope: b.scope,
    name: b.name,
    paid: cell(b.succeeded),
    failed: cell(b.failed),
    canceled: cell(b.canceled),
    refunded: cell(b.refunded),
    tips: money(b.tips, r.currency),
    fees: money(b.fees, r.currency),
    net: money(b.net, r.currency),
  }));
}

function csvField(v: string): string {
  return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** CSV for spreadsheets: plain decimal amounts (47.50) and the currency on every row. */
export function reportCsv(r: DayReport): string {
  const header = ['date', 'currency', 'scope', 'name', 'succeeded_count', 'succeeded_amount', 'failed_count', 'failed_amount', 'canceled_count', 'canceled_amount', 'refunded_count', 'refunded_amount', 'pending_count', 'tips', 'fees', 'net'];
  const p = (n: number) => (n < 0 ? `-${formatPlain(-n, r.currency)}` : formatPlain(n, r.currency));
  const lines = [r.total, ...r.locations, ...r.readers].map((b) =>
    [r.date, r.currency, b.scope, b.name, b.succeeded.count, p(b.succeeded.amount), b.failed.count, p(b.failed.amount), b.canceled.count, p(b.canceled.amount), b.refunded.count, p(b.refunded.amount), b.pending.count, p(b.tips), p(b.fees), p(b.net)]
      .map((v) => csvField(String(v)))
      .join(','),
  );
  return `${[header.join(','), ...lines].join('\n')}\n`;
}

/** The API's largest page: fewest round trips for a busy day. */
const PAGE_SIZE = 100;

/** Lists are newest first, so pages are read until one reaches back before the day. */
export async function transactionsSince(api: PosApi, start: number): Promise<Transaction[]> {
  const all: Transaction[] = [];
  for (let page = 1; ; page += 1) {
    const res = await api.listTransactions({ page, size: PAGE_SIZE });
    all.push(...res.data);
    const oldest = res.data[res.data.length - 1];
    if (!oldest || page >= res.lastPage || Date.parse(oldest.created_at) < start) return all;
  }
}

/**
 * Events of one type since `start`, read newest first until a page reaches back before it; null
 * when the key may not see that type (a counter key and disputes or payouts).
 */
export async function eventsSince(api: PosApi, type: string, start: number): Promise<WebhookEvent[] | null> {
  const all: WebhookEvent[] = [];
  for (let page = 1; ; page += 1) {
    const res = await api.listEvents({ page, size: PAGE_SIZE, type }).catch((err: unknown) => {
      if (err instanceof ApiRequestError && err.status === 403 && err.code === 'missing_scope') return null;
      throw err;
    });
    if (!res) return null;
    all.push(...res.data);
    const oldest = res.data[res.data.length - 1];
    if (!oldest || page >= res.lastPage || Date.parse(oldest.created_at) < start) return all;
  }
}

export async function loadDayReport(api: PosApi, date: string, location?: string, drawer: { float?: number | undefined; countedCash?: number | undefined } = {}): Promise<DayReport> {
  const { start } = dayBounds(date);
  const [merchant, transactions, readers, locations, ...events] = await Promise.all([
    api.merchant(),
    transactionsSince(api, start),
    api.listReaders(),
    api.listLocations(),
    ...REPORT_EVENT_TYPES.map((type) => eventsSince(api, type, start)),
  ]);
  const refused = (family: string) => REPORT_EVENT_TYPES.some((type, i) => type.startsWith(family) && events[i] === null);
  const unreadable = [...(refused('dispute.') ? (['disputes'] as const) : []), ...(refused('payout.') ? (['payouts'] as const) : [])];
  return computeDayReport({
    date,
    currency: merchant.data.default_currency,
    transactions,
    readers: readers.data,
    locations: locations.data,
    location,
    events: events.flatMap((e) => e ?? []),
    unreadable,
    ...drawer,
  });
}

