import type { PosApi } from '../shared/api/client.js';
import { ApiRequestError } from '../shared/api/errors.js';
import type { Location, Reader, Transaction, WebhookEvent } from '../shared/api/types.js';
import { formatPlain } from './amount.js';
import { money } from './format.js';
import { COUNTER_PAYMENT_METHODS } from '../shared/channels.js';
import { businessDate, businessDayBounds, DEFAULT_DAY_ENDS_AT, machineTimeZone, wallClock } from '../shared/time-zone.js';

/**
 * The end-of-day close-out, computed from the day's payments: pure, shared by `pos report day` and
 * the TUI's day view. A payment belongs to the business day of its location (its time zone and the
 * hour its day ends, shared/time-zone.ts) in which it was created; refunds count against the
 * payment they return, whenever they were made. Disputes and payouts are the whole shop's, counted
 * on the shop's business day their events say they happened: a dispute opened or closed, a payout
 * sent or failed.
 *
 * Counts are of sales: the parts of a sale paid in parts (one `order` in their metadata) are one
 * sale in every count, while their amounts add up and each part counts in its own tender.
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

/** One payment of the day, as the CSV lists it under the totals. */
export interface DayPayment {
  reference: string;
  /** The sale a part belongs to (a sale paid in parts), else null. */
  order: string | null;
  tender: 'cash' | 'card';
  status: string;
  /** The wall-clock time it was created, in its location's zone: HH:MM:SS. */
  local_time: string;
  location: string;
  reader: string;
  /** Paid (captured) amount, 0 unless paid. */
  paid: number;
  refunded: number;
  tip: number;
  fee: number;
}

/** How days are cut: a location's, or the whole shop's when every location cuts them alike. */
export interface DayClock {
  time_zone: string;
  day_ends_at: string;
}

export interface DayReport {
  date: string;
  currency: string;
  /**
   * The zone and day end this day was read in: the location's for a one-location report, the
   * shop's when all its locations agree; null when they differ and each location's own day counts.
   */
  business_day: DayClock | null;
  /** Payments in another currency than the merchant's: counted here, not summed in. */
  other_currency_count: number;
  total: Bucket;
  locations: Bucket[];
  readers: Bucket[];
  /** Null when the key may not read them: a counter key sees neither disputes nor payouts. */
  disputes: DayDisputes | null;
  payouts: DayPayouts | null;
  tender: DayTender;
  /** The day's payments in the merchant's currency, oldest first. */
  payments: DayPayment[];
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

/** The sale a payment is part of: its order when it is a part of a split sale, else itself. */
function saleOf(t: Transaction): string {
  return t.metadata?.order ? `order:${t.metadata.order}` : `txn:${t.id}`;
}

const capturedOf = (t: Transaction) => (typeof t.amount_captured === 'number' ? t.amount_captured : t.amount);

/**
 * Adds payments to buckets, counting each sale once per tally of a bucket: a sale paid half in
 * cash and half on card is one paid sale, and one failed sale if a part of it was declined.
 */
function bucketAdder(): (b: Bucket, t: Transaction) => void {
  const counted = new Map<Bucket, Set<string>>();
  const tally = (b: Bucket, name: 'succeeded' | 'failed' | 'canceled' | 'pending' | 'refunded', t: Transaction, amount: number) => {
    let seen = counted.get(b);
    if (!seen) counted.set(b, (seen = new Set()));
    const key = `${name}|${saleOf(t)}`;
    if (!seen.has(key)) {
      seen.add(key);
      b[name].count += 1;
    }
    b[name].amount += amount;
  };
  return (b, t) => {
    if (PAID.has(t.status)) {
      const captured = capturedOf(t);
      tally(b, 'succeeded', t, captured);
      b.tips += t.tip_amount;
      b.fees += t.platform_fee_cents;
      b.net += captured - t.platform_fee_cents;
    } else if (t.status === 'failed') tally(b, 'failed', t, t.amount);
    else if (t.status === 'canceled') tally(b, 'canceled', t, t.amount);
    else tally(b, 'pending', t, t.amount);
    if (t.amount_refunded > 0) {
      tally(b, 'refunded', t, t.amount_refunded);
      b.net -= t.amount_refunded;
    }
  };
}

/** The machine's calendar day [start, end) of `date` (YYYY-MM-DD), as epoch milliseconds: checks a date is real. */
export function dayBounds(date: string): { start: number; end: number } {
  return businessDayBounds(date, machineTimeZone(), DEFAULT_DAY_ENDS_AT);
}

/** The machine's calendar date at `ms`. */
export function localDate(ms: number = Date.now()): string {
  return businessDate(ms, machineTimeZone(), DEFAULT_DAY_ENDS_AT);
}

const clockOf = (l: Location): DayClock => ({ time_zone: l.time_zone, day_ends_at: l.day_ends_at });

/**
 * The shop's way of cutting days, for what belongs to no location (online payments, disputes,
 * payouts): its locations' when they all agree, else the machine's midnight; `agreed` is false
 * when locations cut their days differently (each then counts its own).
 */
export function shopClock(locations: readonly Location[]): { clock: DayClock; agreed: boolean } {
  const [first, ...rest] = locations;
  if (first && rest.every((l) => l.time_zone === first.time_zone && l.day_ends_at === first.day_ends_at)) return { clock: clockOf(first), agreed: true };
  return { clock: { time_zone: machineTimeZone(), day_ends_at: DEFAULT_DAY_ENDS_AT }, agreed: locations.length === 0 };
}

function findLocation(locations: readonly Location[], wanted: string | undefined): Location | undefined {
  if (!wanted) return undefined;
  const found = locations.find((l) => l.id === wanted || l.display_name === wanted);
  if (!found) throw new Error(`no location "${wanted}"`);
  return found;
}

/** The business day under way at `now`: the location's, else the shop's. */
export function businessToday(locations: readonly Location[], location?: string, now: number = Date.now()): string {
  const l = findLocation(locations, location);
  const { clock } = l ? { clock: clockOf(l) } : shopClock(locations);
  return businessDate(now, clock.time_zone, clock.day_ends_at);
}

/** [start, end) of business day `date` for each way of cutting it the shop uses, and the earliest start. */
function dayWindows(date: string, locations: readonly Location[]) {
  const cache = new Map<string, { start: number; end: number }>();
  const bounds = (c: DayClock) => {
    const key = `${c.time_zone}|${c.day_ends_at}`;
    let b = cache.get(key);
    if (!b) cache.set(key, (b = businessDayBounds(date, c.time_zone, c.day_ends_at)));
    return b;
  };
  const shop = shopClock(locations);
  const earliest = Math.min(bounds(shop.clock).start, ...locations.map((l) => bounds(clockOf(l)).start));
  return { bounds, shop, earliest };
}

const pad2 = (n: number) => String(n).padStart(2, '0');

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
  const windows = dayWindows(input.date, input.locations);
  const readerOf = (t: Transaction) => input.readers.find((r) => r.id === t.terminal_id || r.processor_terminal_id === t.reader_id || r.id === t.reader_id);
  // A till's sale belongs to its reader's location, or to the location it named (a till without a
  // card reader); a counter sale naming neither is unassigned, never online.
  const locationOf = (t: Transaction, reader: Reader | undefined) => reader?.location_id ?? t.location_id ?? undefined;
  const unplaced = (t: Transaction) => (AT_COUNTER.has(t.payment_method_type) ? UNASSIGNED : ONLINE);
  const locationName = (t: Transaction, id: string | undefined) => (id ? (input.locations.find((l) => l.id === id)?.display_name ?? id) : unplaced(t));
  const wantedLocation = findLocation(input.locations, input.location);
  const clockFor = (locationId: string | undefined): DayClock => {
    const l = locationId ? input.locations.find((x) => x.id === locationId) : undefined;
    return l ? clockOf(l) : windows.shop.clock;
  };
  const add = bucketAdder();
  const payments: DayPayment[] = [];

  const total = empty('total', 'All');
  const byLocation = new Map<string, Bucket>();
  const byReader = new Map<string, Bucket>();
  let other = 0;
  const tenderTally = () => ({ count: 0, amount: 0, refunded: 0 });
  const card = tenderTally();
  const cash = tenderTally();
  // Oldest first; the API lists newest first, so payments made in the same millisecond keep the order they were made in.
  for (const t of [...input.transactions].reverse().sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at))) {
    const at = Date.parse(t.created_at);
    const reader = readerOf(t);
    const locationId = locationOf(t, reader);
    const clock = clockFor(locationId);
    const { start, end } = windows.bounds(clock);
    if (at < start || at >= end) continue;
    if (wantedLocation && locationId !== wantedLocation.id) continue;
    if (t.currency.toLowerCase() !== input.currency.toLowerCase()) {
      other += 1;
      continue;
    }
    add(total, t);
    if (PAID.has(t.status)) {
      const tender = t.payment_method_type === 'cash' ? cash : card;
      tender.count += 1;
      tender.amount += capturedOf(t);
      tender.refunded += t.amount_refunded;
    }
    const loc = locationName(t, locationId);
    if (!byLocation.has(loc)) byLocation.set(loc, empty('location', loc));
    add(byLocation.get(loc)!, t);
    const rName = reader?.name ?? (t.reader_id ? `${t.reader_id} (deleted)` : locationId ? `No reader at ${loc}` : unplaced(t));
    if (!byReader.has(rName)) byReader.set(rName, empty('reader', rName));
    add(byReader.get(rName)!, t);
    const w = wallClock(at, clock.time_zone);
    payments.push({
      reference: t.reference,
      order: t.metadata?.order ?? null,
      tender: t.payment_method_type === 'cash' ? 'cash' : 'card',
      status: t.status,
      local_time: `${pad2(w.hour)}:${pad2(w.minute)}:${pad2(w.second)}`,
      location: loc,
      reader: rName,
      paid: PAID.has(t.status) ? capturedOf(t) : 0,
      refunded: t.amount_refunded,
      tip: PAID.has(t.status) ? t.tip_amount : 0,
      fee: PAID.has(t.status) ? t.platform_fee_cents : 0,
    });
  }
  const sorted = (m: Map<string, Bucket>) => [...m.values()].sort((a, b) => a.name.localeCompare(b.name));
  const tally = () => ({ count: 0, amount: 0 });
  const disputes: DayDisputes = { opened: tally(), closed: tally(), won: 0, lost: 0 };
  const payouts: DayPayouts = { sent: tally(), failed: tally() };
  // Disputes and payouts are the shop's: read in the shop's day (or the one location's).
  const { start, end } = windows.bounds(wantedLocation ? clockOf(wantedLocation) : windows.shop.clock);
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
    business_day: wantedLocation ? clockOf(wantedLocation) : windows.shop.agreed ? windows.shop.clock : null,
    other_currency_count: other,
    total,
    locations: sorted(byLocation),
    readers: sorted(byReader),
    disputes: unreadable.has('disputes') ? null : disputes,
    payouts: unreadable.has('payouts') ? null : payouts,
    tender,
    payments,
  };
}

/** How the day was cut, in words: "business day 04:00 to 04:00, America/Los_Angeles". */
export function businessDayWords(r: DayReport): string {
  const c = r.business_day;
  if (!c) return "each location's own business day";
  const hours = c.day_ends_at === DEFAULT_DAY_ENDS_AT ? 'midnight to midnight' : `${c.day_ends_at} to ${c.day_ends_at}`;
  return `business day ${hours}, ${c.time_zone}`;
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

/**
 * CSV for spreadsheets: plain decimal amounts (47.50) and the currency on every row. The totals
 * (scope total, location, reader) come first, then one `payment` row per payment of the day with
 * its reference, its sale's order (the parts of a split sale share one), tender, status and local
 * time; a payment row leaves the count columns empty, so summing a column by scope stays right.
 */
export function reportCsv(r: DayReport): string {
  const header = ['date', 'currency', 'scope', 'name', 'succeeded_count', 'succeeded_amount', 'failed_count', 'failed_amount', 'canceled_count', 'canceled_amount', 'refunded_count', 'refunded_amount', 'pending_count', 'tips', 'fees', 'net', 'reference', 'order', 'tender', 'status', 'local_time'];
  const p = (n: number) => (n < 0 ? `-${formatPlain(-n, r.currency)}` : formatPlain(n, r.currency));
  const row = (cells: (string | number)[]) => cells.map((v) => csvField(String(v))).join(',');
  const totals = [r.total, ...r.locations, ...r.readers].map((b) =>
    row([r.date, r.currency, b.scope, b.name, b.succeeded.count, p(b.succeeded.amount), b.failed.count, p(b.failed.amount), b.canceled.count, p(b.canceled.amount), b.refunded.count, p(b.refunded.amount), b.pending.count, p(b.tips), p(b.fees), p(b.net), '', '', '', '', '']),
  );
  const lines = r.payments.map((x) =>
    row([r.date, r.currency, 'payment', x.reader, '', p(x.paid), '', '', '', '', '', p(x.refunded), '', p(x.tip), p(x.fee), p(x.paid - x.refunded - x.fee), x.reference, x.order ?? '', x.tender, x.status, x.local_time]),
  );
  return `${[header.join(','), ...totals, ...lines].join('\n')}\n`;
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

/**
 * The close-out of business day `date`, or of the one under way (the location's, else the shop's)
 * when none is given. Payments are read back to the earliest start any location's day has.
 */
export async function loadDayReport(api: PosApi, date: string | undefined, location?: string, drawer: { float?: number | undefined; countedCash?: number | undefined } = {}): Promise<DayReport> {
  const [readers, locations] = await Promise.all([api.listReaders(), api.listLocations()]);
  const day = date ?? businessToday(locations.data, location);
  const { earliest: start } = dayWindows(day, locations.data);
  const [merchant, transactions, ...events] = await Promise.all([
    api.merchant(),
    transactionsSince(api, start),
    ...REPORT_EVENT_TYPES.map((type) => eventsSince(api, type, start)),
  ]);
  const refused = (family: string) => REPORT_EVENT_TYPES.some((type, i) => type.startsWith(family) && events[i] === null);
  const unreadable = [...(refused('dispute.') ? (['disputes'] as const) : []), ...(refused('payout.') ? (['payouts'] as const) : [])];
  return computeDayReport({
    date: day,
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

