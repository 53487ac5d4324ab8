import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { txn } from '../fixtures.js';
import { initialState, reduce } from '../state.js';
import { theme } from '../theme.js';
import { TransactionsView } from './TransactionsView.js';

describe('TransactionsView', () => {
  const s = reduce(initialState({ via: 'polling' }), {
    type: 'transactions',
    transactions: [
      txn({ status: 'succeeded', card_brand: 'visa', card_last_four: '4242' }),
      txn({ id: 't-2', reference: 'txn_0002', status: 'failed', amount: 1005, failure_code: 'card_declined', decline_code: 'generic_decline' }),
      txn({ id: 't-3', reference: 'txn_0003', status: 'succeeded', amount: 2000, payment_method_type: 'card', reader_id: null, terminal_id: null }),
    ],
  });

  it('lists recent payments with the selection, the method and the page', () => {
    const f = render(<TransactionsView state={s} theme={theme(false)} />).lastFrame() ?? '';
    expect(f).toMatch(/› \S+\s+\$10\.00\s+succeeded\s+counter\s+visa ••4242\s+txn_0001/);
    expect(f).toMatch(/ {2}\S+\s+\$10\.05\s+failed\s+counter\s+txn_0002/);
    expect(f).toMatch(/ {2}\S+\s+\$20\.00\s+succeeded\s+online\s+txn_0003/);
    expect(f).toContain('Page 1 of 1 · all payments');
  });

  it('says why the selected payment failed, in the counter’s words', () => {
    const f = render(<TransactionsView state={reduce(s, { type: 'select_transaction', delta: 1 })} theme={theme(false)} />).lastFrame() ?? '';
    expect(f).toContain('txn_0002: Declined: ask for another card');
  });

  it('uses the terminal’s width for the reference', () => {
    const long = reduce(initialState({ via: 'polling' }), { type: 'transactions', transactions: [txn({ reference: 'txn_3kq9Zb1c2D3e4F5g6H7i' })] });
    expect(render(<TransactionsView state={long} theme={theme(false)} width={80} />).lastFrame()).not.toContain('txn_3kq9Zb1c2D3e4F5g6H7i');
    expect(render(<TransactionsView state={long} theme={theme(false)} width={120} />).lastFrame()).toContain('txn_3kq9Zb1c2D3e4F5g6H7i');
  });

  it('asks before a refund', () => {
    const f = render(<TransactionsView state={reduce(s, { type: 'confirm_refund', transactionId: 't-1' })} theme={theme(false)} />).lastFrame();
    expect(f).toContain('Refund $10.00 of txn_0001? y to refund');
  });

  it('shows a page of the filter the server answered, full, with its count and cash as counter', () => {
    const cards = Array.from({ length: 12 }, (_, i) => txn({ id: `o-${i}`, reference: `txn_on${String(i).padStart(2, '0')}`, payment_method_type: 'card', reader_id: null, terminal_id: null }));
    let f = reduce(s, { type: 'view', view: 'transactions' });
    f = reduce(f, { type: 'history_page', page: 1, filter: 'online' });
    f = reduce(f, { type: 'history_loaded', page: 1, filter: 'online', lastPage: 3, totalCount: 25, rows: cards });
    f = reduce(f, { type: 'history_page', page: 2 });
    f = reduce(f, { type: 'history_loaded', page: 2, filter: 'online', lastPage: 3, totalCount: 25, rows: cards });
    const frame = render(<TransactionsView state={f} theme={theme(false)} />).lastFrame() ?? '';
    expect(frame.match(/online\s+txn_on/g)).toHaveLength(12);
    expect(frame).toContain('Page 2 of 3 (25 payments) · online payments');
    const cash = reduce(initialState({ via: 'polling' }), { type: 'transactions', transactions: [txn({ reference: 'txn_cash', payment_method_type: 'cash', reader_id: null, terminal_id: null })] });
    expect(render(<TransactionsView state={cash} theme={theme(false)} />).lastFrame()).toMatch(/counter\s+txn_cash/);
  });

  it('says a filter has no payments once the server says so, and that it is loading before', () => {
    let f = reduce(s, { type: 'history_page', page: 1, filter: 'online' });
    f = reduce(f, { type: 'transactions', transactions: [txn()] });
    expect(render(<TransactionsView state={f} theme={theme(false)} />).lastFrame()).toContain('Loading online payments…');
    f = reduce(f, { type: 'history_loaded', page: 1, filter: 'online', lastPage: 1, totalCount: 0, rows: [] });
    expect(render(<TransactionsView state={f} theme={theme(false)} />).lastFrame()).toContain('No online payments yet.');
  });
});
