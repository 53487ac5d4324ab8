import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { txn } from '../fixtures.js';
import { initialState, reduce } from '../state.js';
import { theme } from '../theme.js';
import { CashView } from './CashView.js';

describe('CashView', () => {
  const started = reduce(initialState({ via: 'agent' }), { type: 'cash_start', amount: 1275 });

  it('asks for the cash handed over, exact cash by default', () => {
    const f = render(<CashView state={started} theme={theme(false)} />).lastFrame() ?? '';
    expect(f).toContain('CASH SALE  $12.75 due');
    expect(f).toContain('Enter alone: exact cash ($12.75)');
    const typed = reduce(reduce(started, { type: 'cash_input', text: '2' }), { type: 'cash_input', text: '0' });
    expect(render(<CashView state={typed} theme={theme(false)} />).lastFrame()).toContain('Cash handed over  20_');
  });

  it('shows the change due, the drawer and the receipt, and a warning when the drawer could not open', () => {
    const transaction = txn({ status: 'succeeded', amount: 1275, payment_method_type: 'cash', amount_tendered: 2000, change_due: 725, reference: 'txn_cash1' });
    const done = reduce(reduce(started, { type: 'cash_sending' }), { type: 'cash_done', result: { transaction, drawer_opened: false, receipt: 'queued', warning: 'the cash drawer cannot open: Printer out of paper' } });
    const f = render(<CashView state={done} theme={theme(false)} />).lastFrame() ?? '';
    expect(f).toContain('CASH SALE $12.75 PAID');
    expect(f).toContain('CHANGE DUE        $7.25');
    expect(f).toContain('Drawer not opened.');
    expect(f).toContain('Receipt printing.');
    expect(f).toContain('Printer out of paper');
  });

  it('asks "Print receipt?" when the location asks, until answered', () => {
    const transaction = txn({ status: 'succeeded', amount: 1275, payment_method_type: 'cash', amount_tendered: 1275, change_due: 0 });
    const done = reduce(reduce(started, { type: 'cash_sending' }), { type: 'cash_done', result: { transaction, drawer_opened: true, receipt: 'ask' } });
    expect(render(<CashView state={done} theme={theme(false)} />).lastFrame()).toContain('Print receipt? y/n');
    const answered = render(<CashView state={reduce(done, { type: 'receipt_answered' })} theme={theme(false)} />).lastFrame() ?? '';
    expect(answered).not.toContain('Print receipt?');
    expect(answered).not.toContain('No receipt printed.');
  });
});
