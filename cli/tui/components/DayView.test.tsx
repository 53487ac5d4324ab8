import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { computeDayReport } from '../../report.js';
import { zonedEpoch } from '../../../shared/time-zone.js';
import { txn } from '../fixtures.js';
import { initialState, reduce } from '../state.js';
import { DayView } from './DayView.js';

describe('DayView', () => {
  it('shows totals per location and reader in the merchant’s currency', () => {
    const at = new Date(2026, 10, 21, 12).toISOString();
    const report = computeDayReport({
      date: '2026-11-21',
      currency: 'usd',
      transactions: [txn({ status: 'succeeded', amount: 1200, tip_amount: 200, platform_fee_cents: 36, created_at: at }), txn({ id: 't-2', status: 'failed', created_at: at })],
      readers: [{ id: 'r-1', name: 'Till 1', processor_terminal_id: 'tmr_Till1', location_id: 'loc-1', status: 'online', serial_number: 's', model: 'm', last_seen_at: null, is_test: true, action: null, object: 'terminal.reader' }],
      locations: [{ id: 'loc-1', display_name: 'Front', address: {}, is_test: true, object: 'terminal.location', processor_location_id: 'tml_1', tipping: null, receipt_policy: 'always', time_zone: 'UTC', day_ends_at: '00:00', created_at: at }],
      events: [
        { id: 'evt_1', type: 'dispute.created', mode: 'test', created_at: at, request: { id: null, idempotency_key: null }, data: { amount: 1200, currency: 'usd', is_test: true } },
        { id: 'evt_2', type: 'payout.created', mode: 'test', created_at: at, request: { id: null, idempotency_key: null }, data: { amount: 5000, currency: 'usd', is_test: true } },
      ],
    });
    const f = render(<DayView state={reduce(initialState({ via: 'polling' }), { type: 'report', report })} />).lastFrame() ?? '';
    expect(f).toContain('Close-out 2026-11-21 · fees $0.36 · pending 0');
    expect(f).toContain('Business day midnight to midnight, UTC · a sale paid in parts counts once');
    expect(f).toMatch(/All\s+1\s+\$12\.00\s+1\s+0\s+0\s+\$0\.00\s+\$2\.00\s+\$11\.64/);
    expect(f).toMatch(/Front\s+1\s+\$12\.00/);
    expect(f).toMatch(/Till 1\s+1\s+\$12\.00/);
    expect(f).toContain('Disputes: 1 opened ($12.00), 0 closed ($0.00: 0 won, 0 lost)');
    expect(f).toContain('Payouts: 1 sent ($50.00)');
  });

  it('shows loading and errors', () => {
    expect(render(<DayView state={initialState({ via: 'polling' })} />).lastFrame()).toContain('Loading');
    expect(render(<DayView state={reduce(initialState({ via: 'polling' }), { type: 'report_error', message: 'down' })} />).lastFrame()).toContain('No report: down');
  });

  it('shows the drawer being counted, then the cash expected and over, short or balanced', () => {
    const at = new Date(2026, 10, 21, 12).toISOString();
    const report = computeDayReport({ date: '2026-11-21', currency: 'usd', transactions: [txn({ status: 'succeeded', amount: 1275, payment_method_type: 'cash', created_at: at })], readers: [], locations: [] });
    const loaded = reduce(initialState({ via: 'polling' }), { type: 'report', report });
    const frame = (s: typeof loaded) => render(<DayView state={s} />).lastFrame() ?? '';
    expect(frame(loaded)).toContain('Expected in drawer: $12.75');
    const typing = [{ type: 'drawer_open', currency: 'usd' } as const, { type: 'drawer_input', text: '5' } as const].reduce(reduce, loaded);
    expect(frame(typing)).toContain('Opening float  5_');
    const count = (float: string, counted: string) =>
      [{ type: 'drawer_open', currency: 'usd' } as const, { type: 'drawer_input', text: float } as const, { type: 'drawer_enter', currency: 'usd' } as const, { type: 'drawer_input', text: counted } as const, { type: 'drawer_enter', currency: 'usd' } as const].reduce(reduce, loaded);
    const over = frame(count('50', '64,75'));
    expect(over).toContain('Expected in drawer: $62.75 (float $50.00)');
    expect(over).toContain('Counted: $64.75, over by $2.00');
    expect(frame(count('50', '61.25'))).toContain('Counted: $61.25, short by $1.50');
    expect(frame(count('50', '62.75'))).toContain('Counted: $62.75, balanced');
    const wrong = [{ type: 'drawer_open', currency: 'usd' } as const, { type: 'drawer_enter', currency: 'usd' } as const, { type: 'drawer_enter', currency: 'usd' } as const].reduce(reduce, loaded);
    expect(frame(wrong)).toContain('Type the cash counted in the drawer (0 if it is empty).');
  });

  it('names the location’s business day and counts a sale paid in parts once, its parts in their tenders', () => {
    const zone = 'America/Los_Angeles';
    const at = (hour: number, day = 21) => new Date(zonedEpoch({ year: 2026, month: 11, day, hour, minute: 0 }, zone)).toISOString();
    const location = { id: 'loc-1', display_name: 'Front', address: {}, is_test: true, object: 'terminal.location' as const, processor_location_id: 'tml_1', tipping: null, receipt_policy: 'always' as const, time_zone: zone, day_ends_at: '04:00', created_at: at(0) };
    const order = { order: 'ord_1' };
    const report = computeDayReport({
      date: '2026-11-21',
      currency: 'usd',
      transactions: [
        txn({ id: 'p1', status: 'succeeded', amount: 2000, amount_captured: 2000, payment_method_type: 'cash', platform_fee_cents: 0, metadata: order, created_at: at(2, 22) }),
        txn({ id: 'p2', status: 'succeeded', amount: 3000, amount_captured: 3000, platform_fee_cents: 0, metadata: order, created_at: at(2, 22) }),
        // 04:00 the next morning: the next business day.
        txn({ id: 'n', status: 'succeeded', amount: 999, amount_captured: 999, created_at: at(4, 22) }),
      ],
      readers: [],
      locations: [location],
    });
    const f = render(<DayView state={reduce(initialState({ via: 'polling' }), { type: 'report', report })} />).lastFrame() ?? '';
    expect(f).toContain('Business day 04:00 to 04:00, America/Los_Angeles · a sale paid in parts counts once');
    expect(f).toMatch(/All\s+1\s+\$50\.00/);
    expect(f).toContain('Card: 1 paid ($30.00)');
    expect(f).toContain('Cash: 1 paid ($20.00)');
  });
});
