import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { txn } from '../fixtures.js';
import { initialState, reduce } from '../state.js';
import { theme } from '../theme.js';
import { TransactionsView } from './TransactionsView.js';

describe('TransactionsView', () => {
  const s = reduce(initialState({ via: 'polling' }), {
    type: 'transactions',
    transactions: [txn({ status: 'succeeded', card_brand: 'visa', card_last_four: '4242' }), txn({ id: 't-2', reference: 'txn_0002', status: 'failed', amount: 1005 })],
  });

  it('lists recent payments with the selection', () => {
    const f = render(<TransactionsView state={s} theme={theme(false)} />).lastFrame() ?? '';
    expect(f).toMatch(/› \S+\s+\$10\.00\s+succeeded\s+visa ••4242\s+txn_0001/);
    expect(f).toMatch(/ {2}\S+\s+\$10\.05\s+failed\s+txn_0002/);
  });

  it('asks before a refund', () => {
    const f = render(<TransactionsView state={reduce(s, { type: 'confirm_refund', transactionId: 't-1' })} theme={theme(false)} />).lastFrame();
    expect(f).toContain('Refund $10.00 of txn_0001? y to refund');
  });
});
