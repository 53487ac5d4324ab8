import { describe, expect, it } from 'vitest';
import { computeDayReport, dayBounds, reportCsv } from './report.js';
import { txn } from './tui/fixtures.js';

const at = (h: number, day = 21) => new Date(2026, 10, day, h).toISOString();
const readers = [
  { id: 'r-1', name: 'Till 1', processor_terminal_id: 'tmr_1', location_id: 'loc-1', status: 'online' as const, serial_number: 's', model: 'm', last_seen_at: null, is_test: true, object: 'terminal.reader' as const },
  { id: 'r-2', name: 'Bar', processor_terminal_id: 'tmr_2', location_id: 'loc-2', status: 'online' as const, serial_number: 's', model: 'm', last_seen_at: null, is_test: true, object: 'terminal.reader' as const },
];
const locations = [
  { id: 'loc-1', display_name: 'Front', address: {}, is_test: true, object: 'terminal.location' as const, processor_location_id: 'tml_1', created_at: at(0) },
  { id: 'loc-2', display_name: 'Patio', address: {}, is_test: true, object: 'terminal.location' as const, processor_location_id: 'tml_1', created_at: at(0) },
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

  it('writes CSV with plain decimals', () => {
    const lines = reportCsv(r).trim().split('\n');
    expect(lines[1]).toBe('2026-11-21,usd,total,All,3,82.00,1,10.05,1,9.00,1,5.00,0,2.00,2.46,74.54');
  });

  it('refuses days that do not exist', () => {
    expect(() => dayBounds('2026-02-30')).toThrow();
    expect(() => dayBounds('21/11/2026')).toThrow();
  });
});
