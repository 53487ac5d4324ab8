import { describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../shared/api/types.js';
import type { Location } from '../shared/api/types.js';
import { zonedEpoch } from '../shared/time-zone.js';
import { businessToday, computeDayReport, dayBounds, reportCsv, shopLines, tenderLines, withDrawer } from './report.js';
import { txn } from './tui/fixtures.js';

// The locations below keep UTC days: times are written in UTC so the figures hold on any machine.
const at = (h: number, day = 21) => new Date(Date.UTC(2026, 10, day, h)).toISOString();
const readers = [
  { id: 'r-1', name: 'Till 1', processor_terminal_id: 'tmr_1', location_id: 'loc-1', status: 'online' as const, serial_number: 's', model: 'm', last_seen_at: null, is_test: true, action: null, object: 'terminal.reader' as const },
  { id: 'r-2', name: 'Bar', processor_terminal_id: 'tmr_2', location_id: 'loc-2', status: 'online' as const, serial_number: 's', model: 'm', last_seen_at: null, is_test: true, action: null, object: 'terminal.reader' as const },
];
const locations = [
  { id: 'loc-1', display_name: 'Front', address: {}, is_test: true, object: 'terminal.location' as const, processor_location_id: 'tml_1', tipping: null, receipt_policy: 'always' as const, time_zone: 'UTC', day_ends_at: '00:00', created_at: at(0) },
  { id: 'loc-2', display_name: 'Patio', address: {}, is_test: true, object: 'terminal.location' as const, processor_location_id: 'tml_1', tipping: null, receipt_policy: 'always' as const, time_zone: 'UTC', day_ends_at: '00:00', created_at: at(0) },
];
const transactions = [
  txn({ id: 'a', status: 'succeeded', amount: 1200, tip_amount: 200, platform_fee_cents: 36, created_at: at(9) }),
  txn({ id: 'b', status: 'partially_refunded', amount: 2000, amount_refunded: 500, platform_fee_cents: 60, created_at: at(10), terminal_id: 'r-2', reader_id: 'tmr_2' }),
  txn({ id: 'c', status: 'failed', amount: 1005, created_at: at(11) }),
  txn({ id: 'd', status: 'canceled', amount: 900, created_at: at(12) }),
  txn({ id: 'e', status: 'succeeded', amount: 5000, platform_fee_cents: 150, payment_method_type: 'card', terminal_id: null, reader_id: null, created_at: at(13) }),
  txn({ id: 'f', status: 'succeeded', amount: 100, created_at: at(23, 20) }),
  txn({ id: 'g', status: 'succeeded', amount: 100, currency: 'eur', created_at: at(14) }),
];

describe('day report', () => {
  const r = computeDayReport({ date: '2026-11-21', currency: 'usd', transactions, readers, locations });

  it('counts and sums each outcome, tips, fees and net for the day only', () => {
    expect(r.total.succeeded).toEqual({ count: 3, amount: 8200 });
    expect(r.total.failed).toEqual({ count: 1, amount: 1005 });
    expect(r.total.canceled).toEqual({ count: 1, amount: 900 });
    expect(r.total.refunded).toEqual({ count: 1, amount: 500 });
    expect(r.total.tips).toBe(200);
    expect(r.total.fees).toBe(246);
    expect(r.total.net).toBe(8200 - 500 - 246);
    expect(r.other_currency_count).toBe(1);
  });

  it('splits per location and per reader, online payments on their own', () => {
    expect(r.locations.map((b) => [b.name, b.succeeded.count])).toEqual([['Front', 1], ['Online (no reader)', 1], ['Patio', 1]]);
    expect(r.readers.find((b) => b.name === 'Bar')?.refunded.amount).toBe(500);
    expect(computeDayReport({ date: '2026-11-21', currency: 'usd', transactions, readers, locations, location: 'Patio' }).total.succeeded.count).toBe(1);
  });

  it('keeps card and cash apart and counts the drawer: float + cash sales − cash refunds, over or short once counted', () => {
    const withCash = [
      ...transactions,
      txn({ id: 'h', status: 'succeeded', amount: 1275, amount_captured: 1275, payment_method_type: 'cash', platform_fee_cents: 0, created_at: at(15) }),
      txn({ id: 'i', status: 'partially_refunded', amount: 3000, amount_captured: 3000, amount_refunded: 1000, payment_method_type: 'cash', platform_fee_cents: 0, created_at: at(16) }),
      txn({ id: 'j', status: 'succeeded', amount: 900, payment_method_type: 'cash', created_at: at(9, 20) }),
    ];
    const uncounted = computeDayReport({ date: '2026-11-21', currency: 'usd', transactions: withCash, readers, locations, float: 10_000 });
    expect(uncounted.tender.cash).toEqual({ count: 2, amount: 4275, refunded: 1000 });
    expect(uncounted.tender.card).toEqual({ count: 3, amount: 8200, refunded: 500 });
    expect(uncounted.tender.expected_cash).toBe(10_000 + 4275 - 1000);
    expect(uncounted.tender.over_short).toBeNull();
    expect(tenderLines(uncounted)).toEqual(['Card: 3 paid ($82.00, $5.00 refunded)', 'Cash: 2 paid ($42.75, $10.00 refunded)', 'Expected in drawer: $132.75 (float $100.00)']);
    const short = computeDayReport({ date: '2026-11-21', currency: 'usd', transactions: withCash, readers, locations, float: 10_000, countedCash: 13_200 });
    expect(short.tender.over_short).toBe(-75);
    expect(tenderLines(short).at(-1)).toBe('Counted: $132.00, short by $0.75');
    const over = computeDayReport({ date: '2026-11-21', currency: 'usd', transactions: withCash, readers, locations, countedCash: 3300 });
    expect(tenderLines(over).at(-1)).toBe('Counted: $33.00, over by $0.25');
    // The counter's drawer count gives the same figures as the CLI's flags.
    expect(withDrawer(uncounted, 10_000, 13_200).tender).toEqual(short.tender);
    expect(tenderLines(withDrawer(uncounted, 10_000, 13_275)).at(-1)).toBe('Counted: $132.75, balanced');
  });

  it('writes CSV with plain decimals', () => {
    const lines = reportCsv(r).trim().split('\n');
    expect(lines[0]).toBe('date,currency,scope,name,succeeded_count,succeeded_amount,failed_count,failed_amount,canceled_count,canceled_amount,refunded_count,refunded_amount,pending_count,tips,fees,net,reference,order,tender,status,local_time');
    expect(lines[1]).toBe('2026-11-21,usd,total,All,3,82.00,1,10.05,1,9.00,1,5.00,0,2.00,2.46,74.54,,,,,');
    // Then one line per payment of the day, oldest first, with its local time.
    expect(lines.filter((l) => l.includes(',payment,')).map((l) => l.split(',').slice(-5).join(','))).toEqual(['txn_0001,,card,succeeded,09:00:00', 'txn_0001,,card,partially_refunded,10:00:00', 'txn_0001,,card,failed,11:00:00', 'txn_0001,,card,canceled,12:00:00', 'txn_0001,,card,succeeded,13:00:00']);
  });

  it('refuses days that do not exist', () => {
    expect(() => dayBounds('2026-02-30')).toThrow();
    expect(() => dayBounds('21/11/2026')).toThrow();
  });

  it("counts the shop's disputes opened and closed and payouts sent that day, from their events", () => {
    const event = (type: string, h: number, data: Record<string, unknown>, day = 21): WebhookEvent => ({ id: `evt_${type}${h}`, type, mode: 'test', created_at: at(h, day), request: { id: null, idempotency_key: null }, data: { currency: 'usd', is_test: true, ...data } });
    const events = [
      event('dispute.created', 9, { amount: 2000 }),
      event('dispute.created', 10, { amount: 500 }),
      event('dispute.created', 11, { amount: 700 }, 20),
      event('dispute.closed', 12, { amount: 2000, status: 'won' }),
      event('dispute.closed', 13, { amount: 700, status: 'lost' }),
      event('dispute.closed', 14, { amount: 100, status: 'warning_closed' }),
      event('payout.created', 15, { amount: 10_000 }),
      event('payout.created', 16, { amount: 900, currency: 'eur' }),
      event('payout.failed', 17, { amount: 10_000, failure_code: 'no_account' }),
    ];
    const day = computeDayReport({ date: '2026-11-21', currency: 'usd', transactions: [], readers, locations, events });
    expect(day.disputes).toEqual({ opened: { count: 2, amount: 2500 }, closed: { count: 3, amount: 2800 }, won: 1, lost: 1 });
    expect(day.payouts).toEqual({ sent: { count: 1, amount: 10_000 }, failed: { count: 1, amount: 10_000 } });
    expect(shopLines(day)).toEqual(['Disputes: 2 opened ($25.00), 3 closed ($28.00: 1 won, 1 lost)', 'Payouts: 1 sent ($100.00), 1 failed ($100.00)']);
    expect(r.disputes?.opened.count).toBe(0);
  });

  it('says the disputes and payouts are not shown to a key that may not read them, rather than none', () => {
    const day = computeDayReport({ date: '2026-11-21', currency: 'usd', transactions: [], readers, locations, events: [], unreadable: ['disputes', 'payouts'] });
    expect(day.disputes).toBeNull();
    expect(day.payouts).toBeNull();
    expect(shopLines(day)).toEqual(['Disputes: not shown to this key (it lacks disputes:read)', 'Payouts: not shown to this key (it lacks payouts:read)']);
  });

  it('counts a sale paid in parts once, each part in its own tender, and names its order on each part’s CSV line', () => {
    const order = { order: 'ord_5Tq9' };
    const parts = [
      txn({ id: 'p1', reference: 'txn_cash', status: 'succeeded', amount: 2000, amount_captured: 2000, payment_method_type: 'cash', platform_fee_cents: 0, metadata: order, created_at: at(9) }),
      txn({ id: 'p2', reference: 'txn_card_declined', status: 'failed', amount: 3000, metadata: order, created_at: at(9) }),
      txn({ id: 'p3', reference: 'txn_card', status: 'succeeded', amount: 3000, amount_captured: 3000, platform_fee_cents: 90, card_brand: 'visa', metadata: order, created_at: at(10) }),
      txn({ id: 'w', reference: 'txn_whole', status: 'succeeded', amount: 1000, amount_captured: 1000, payment_method_type: 'cash', platform_fee_cents: 0, created_at: at(11) }),
    ];
    // Newest first, as the API lists them.
    const day = computeDayReport({ date: '2026-11-21', currency: 'usd', transactions: [...parts].reverse(), readers, locations, float: 5000 });
    // Two sales paid ($50.00 in parts, $10.00 whole), one of them with a declined part.
    expect(day.total.succeeded).toEqual({ count: 2, amount: 6000 });
    expect(day.total.failed).toEqual({ count: 1, amount: 3000 });
    expect(day.readers.find((b) => b.name === 'Till 1')?.succeeded).toEqual({ count: 2, amount: 6000 });
    expect(day.tender.cash).toEqual({ count: 2, amount: 3000, refunded: 0 });
    expect(day.tender.card).toEqual({ count: 1, amount: 3000, refunded: 0 });
    expect(day.tender.expected_cash).toBe(8000);
    const csv = reportCsv(day).trim().split('\n');
    expect(csv.filter((l) => l.includes(',ord_5Tq9,')).map((l) => l.split(',').slice(-5).join(','))).toEqual([
      'txn_cash,ord_5Tq9,cash,succeeded,09:00:00',
      'txn_card_declined,ord_5Tq9,card,failed,09:00:00',
      'txn_card,ord_5Tq9,card,succeeded,10:00:00',
    ]);
    expect(csv.find((l) => l.includes(',txn_whole,'))).toMatch(/,payment,Till 1,,10\.00,.*,txn_whole,,cash,succeeded,11:00:00$/);
  });

  describe('in the location’s time zone, with its business day ending at 04:00', () => {
    // Auckland is 13 hours ahead of UTC in November: the machine's day (UTC here) is far from it.
    const zone = 'Pacific/Auckland';
    const auckland: Location[] = [{ ...locations[0]!, time_zone: zone, day_ends_at: '04:00' }];
    const local = (day: number, hour: number, minute = 0) => new Date(zonedEpoch({ year: 2026, month: 11, day, hour, minute }, zone)).toISOString();
    const sales = [
      txn({ id: 's1', reference: 'txn_before', status: 'succeeded', amount: 100, created_at: local(21, 3, 59) }),
      txn({ id: 's2', reference: 'txn_open', status: 'succeeded', amount: 200, created_at: local(21, 4) }),
      txn({ id: 's3', reference: 'txn_late', status: 'succeeded', amount: 400, created_at: local(21, 23, 30) }),
      txn({ id: 's4', reference: 'txn_night', status: 'succeeded', amount: 800, created_at: local(22, 2) }),
      txn({ id: 's5', reference: 'txn_next', status: 'succeeded', amount: 1600, created_at: local(22, 4) }),
    ];
    const report = (date: string) => computeDayReport({ date, currency: 'usd', transactions: sales, readers, locations: auckland });

    it('counts a sale at 02:00 with the day before, and one at 04:00 with its own day', () => {
      const day = report('2026-11-21');
      expect(day.total.succeeded).toEqual({ count: 3, amount: 1400 });
      expect(day.business_day).toEqual({ time_zone: zone, day_ends_at: '04:00' });
      expect(day.payments.map((p) => [p.reference, p.local_time])).toEqual([['txn_open', '04:00:00'], ['txn_late', '23:30:00'], ['txn_night', '02:00:00']]);
      expect(report('2026-11-20').total.succeeded).toEqual({ count: 1, amount: 100 });
      expect(report('2026-11-22').total.succeeded).toEqual({ count: 1, amount: 1600 });
      // The same sales in UTC days, as the machine would cut them, fall otherwise.
      expect(computeDayReport({ date: '2026-11-21', currency: 'usd', transactions: sales, readers, locations }).total.succeeded).toEqual({ count: 3, amount: 2800 });
    });

    it('takes "today" to be the business day under way at the location', () => {
      expect(businessToday(auckland, undefined, Date.parse(local(22, 2)))).toBe('2026-11-21');
      expect(businessToday(auckland, 'Front', Date.parse(local(22, 4)))).toBe('2026-11-22');
      // Locations that cut their days differently: each counts its own, unplaced sales in the machine's days.
      const mixed = computeDayReport({ date: '2026-11-21', currency: 'usd', transactions: sales, readers, locations: [auckland[0]!, locations[1]!] });
      expect(mixed.business_day).toBeNull();
      expect(mixed.total.succeeded.count).toBe(3);
    });
  });
});
