import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { computeDayReport } from '../../report.js';
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
      locations: [{ id: 'loc-1', display_name: 'Front', address: {}, is_test: true, object: 'terminal.location', processor_location_id: 'tml_1', tipping: null, receipt_policy: 'always', created_at: at }],
      events: [
        { id: 'evt_1', type: 'dispute.created', mode: 'test', created_at: at, data: { amount: 1200, currency: 'usd', is_test: true } },
        { id: 'evt_2', type: 'payout.created', mode: 'test', created_at: at, data: { amount: 5000, currency: 'usd', is_test: true } },
      ],
    });
    const f = render(<DayView state={reduce(initialState({ via: 'polling' }), { type: 'report', report })} />).lastFrame() ?? '';
    expect(f).toContain('Close-out 2026-11-21 · fees $0.36 · pending 0');
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
});
