import { describe, expect, it } from 'vitest';
import { reader, txn, paying } from './fixtures.js';
import { fitHints, hintsFor, intentFor, splitKeys } from './keys.js';
import { initialState, reduce, type Action, type CounterState } from './state.js';

const state = (...actions: Action[]): CounterState =>
  actions.reduce(reduce, reduce(reduce(initialState({ via: 'polling' }), { type: 'merchant', name: 'Shop', mode: 'test', currency: 'usd' }), { type: 'readers', readers: [reader()] }));

describe('keys', () => {
  it('types amounts on the charge screen and charges on Enter', () => {
    expect(intentFor(state(), '4', {})).toEqual({ kind: 'dispatch', action: { type: 'amount_input', text: '4' } });
    expect(intentFor(state(), 'c', {})).toEqual({ kind: 'dispatch', action: { type: 'amount_input', text: 'c' } });
    expect(intentFor(state({ type: 'amount_input', text: '4' }), '', { return: true })).toEqual({ kind: 'start_charge' });
    expect(intentFor(state(), '', { backspace: true })).toEqual({ kind: 'dispatch', action: { type: 'amount_backspace' } });
    expect(intentFor(state(), '', { rightArrow: true })).toEqual({ kind: 'dispatch', action: { type: 'select_reader', delta: 1 } });
  });

  it('offers a simulated tap in test mode only and cancel while waiting', () => {
    const waiting = state({ type: 'charge_starting', amount: 1000, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' });
    expect(intentFor(waiting, 's', {})).toEqual({ kind: 'simulate_tap' });
    expect(intentFor(waiting, 'x', {})).toEqual({ kind: 'cancel_payment' });
    expect(intentFor(waiting, 'q', {})).toMatchObject({ kind: 'dispatch', action: { type: 'notice' } });
    expect(intentFor(reduce(waiting, { type: 'merchant', name: 'Shop', mode: 'live', currency: 'usd' }), 's', {})).toBeNull();
    expect(hintsFor(waiting)).toBe('s simulate tap · x cancel payment');
    expect(hintsFor(reduce(waiting, { type: 'reader', reader: reader({ activity: 'processing', payment: paying('t-1') }) }))).toBe('x cancel payment');
  });

  it('switches views with letters and Tab, and quits with q when idle', () => {
    expect(intentFor(state(), 'h', {})).toEqual({ kind: 'dispatch', action: { type: 'view', view: 'transactions' } });
    expect(intentFor(state(), '', { tab: true })).toEqual({ kind: 'dispatch', action: { type: 'view', view: 'readers' } });
    expect(intentFor(state(), '', { tab: true, shift: true })).toEqual({ kind: 'dispatch', action: { type: 'view', view: 'day' } });
    expect(intentFor(state({ type: 'view', view: 'readers' }), 'c', {})).toEqual({ kind: 'dispatch', action: { type: 'view', view: 'charge' } });
    expect(intentFor(state(), 'q', {})).toEqual({ kind: 'quit' });
  });

  it('never quits on a key typed into the amount, and asks before quitting when quitting stops the server', () => {
    const typing = state({ type: 'amount_input', text: '12' });
    expect(intentFor(typing, 'q', {})).toMatchObject({ kind: 'dispatch', action: { type: 'notice', text: expect.stringMatching(/not part of an amount/) } });
    expect(intentFor(typing, 'h', {})).toMatchObject({ action: { type: 'notice' } });
    const up = reduce(initialState({ via: 'agent', quitWarning: 'the server and the agent' }), { type: 'merchant', name: 'Shop', mode: 'test', currency: 'usd' });
    expect(intentFor(up, 'q', {})).toEqual({ kind: 'dispatch', action: { type: 'confirm_quit', asking: true } });
    const asking = reduce(up, { type: 'confirm_quit', asking: true });
    expect(hintsFor(asking)).toBe('y quit · any other key: stay');
    expect(intentFor(asking, 'y', {})).toEqual({ kind: 'quit' });
    expect(intentFor(asking, 'q', {})).toEqual({ kind: 'dispatch', action: { type: 'confirm_quit', asking: false } });
  });

  it('clears the amount with Esc and Ctrl-U, and takes a comma', () => {
    expect(intentFor(state(), '', { escape: true })).toEqual({ kind: 'dispatch', action: { type: 'amount_clear' } });
    expect(intentFor(state(), 'u', { ctrl: true })).toEqual({ kind: 'dispatch', action: { type: 'amount_clear' } });
    expect(intentFor(state(), ',', {})).toEqual({ kind: 'dispatch', action: { type: 'amount_input', text: ',' } });
  });

  it('splits a burst of keys into presses, in order', () => {
    expect(splitKeys('12\r', {})).toEqual([['1', {}], ['2', {}], ['', { return: true }]]);
    expect(splitKeys('7,50\n', {})).toEqual([['7', {}], [',', {}], ['5', {}], ['0', {}], ['', { return: true }]]);
    expect(splitKeys('1\u007f2', {})).toEqual([['1', {}], ['', { backspace: true }], ['2', {}]]);
    expect(splitKeys('\u0015', {})).toEqual([['u', { ctrl: true }]]);
    expect(splitKeys('4', {})).toEqual([['4', {}]]);
    expect(splitKeys('', { upArrow: true })).toEqual([['', { upArrow: true }]]);
  });

  it('offers to cancel a payment already on the reader', () => {
    const typing = state({ type: 'amount_input', text: '5' }, { type: 'reader', reader: reader({ activity: 'waiting_for_card', payment: paying('t-9') }) });
    expect(intentFor(typing, 'x', {})).toEqual({ kind: 'cancel_reader_payment', transactionId: 't-9' });
    expect(hintsFor(typing)).toContain('x cancel');
    // On 80 columns the key bar stays one line, and keeps the cancel and the way out.
    const bar = fitHints(hintsFor(typing), 80);
    expect(bar.length).toBeLessThan(80);
    expect(bar).toMatch(/^Enter card · x cancel · .* · q quit$/);
  });

  it('fits the key bar to the terminal by dropping the hints just before q quit, never by wrapping', () => {
    const hints = 'Enter card · + cart · $ cash · o no sale · Esc clear · ←→ reader · Tab views · q quit';
    expect(fitHints(hints, 120)).toBe(hints);
    expect(fitHints(hints, 80)).toBe('Enter card · + cart · $ cash · o no sale · Esc clear · ←→ reader · q quit');
    expect(fitHints(hints, 40)).toBe('Enter card · + cart · $ cash · q quit');
    expect(fitHints('a · q quit', 3)).toBe('a · q quit');
  });

  it('pages History and switches its filter', () => {
    const history = state({ type: 'view', view: 'transactions' }, { type: 'history_loaded', page: 1, filter: 'all', lastPage: 2, totalCount: 20, rows: [] });
    expect(intentFor(history, 'n', {})).toEqual({ kind: 'dispatch', action: { type: 'history_page', page: 2 } });
    expect(intentFor(history, '', { pageDown: true })).toEqual({ kind: 'dispatch', action: { type: 'history_page', page: 2 } });
    expect(intentFor(history, 'p', {})).toBeNull();
    expect(intentFor(history, 'm', {})).toEqual({ kind: 'dispatch', action: { type: 'history_page', page: 1, filter: 'counter' } });
  });

  it('asks before refunding and refuses unpaid payments', () => {
    const history = state({ type: 'view', view: 'transactions' }, { type: 'transactions', transactions: [txn({ status: 'succeeded' }), txn({ id: 't-2', status: 'failed' })] });
    expect(intentFor(history, 'f', {})).toEqual({ kind: 'dispatch', action: { type: 'confirm_refund', transactionId: 't-1' } });
    const confirming = reduce(history, { type: 'confirm_refund', transactionId: 't-1' });
    expect(intentFor(confirming, 'y', {})).toEqual({ kind: 'refund', transactionId: 't-1' });
    expect(intentFor(confirming, 'n', {})).toEqual({ kind: 'dispatch', action: { type: 'confirm_refund', transactionId: null } });
    expect(intentFor(reduce(history, { type: 'select_transaction', delta: 1 }), 'f', {})).toMatchObject({ action: { type: 'notice', text: expect.stringMatching(/Only paid/) } });
  });

  it('offers the payment link when the reader is offline', () => {
    const offline = state({ type: 'charge_offline', amount: 1000, readerName: 'Till 1' });
    expect(intentFor(offline, 'l', {})).toEqual({ kind: 'create_link' });
    expect(intentFor(offline, '', { escape: true })).toEqual({ kind: 'dispatch', action: { type: 'new_charge' } });
  });

  it('asks "Print receipt?" after an approval on a reader whose receipts are ask: y prints, n does not', () => {
    const approvedOn = (policy: 'ask' | 'always') => {
      const s = reduce(reduce(state({ type: 'charge_starting', amount: 650, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' }), { type: 'reader', reader: reader({ receipt_policy: policy }) }), {
        type: 'transaction',
        transaction: txn({ id: 't-1', status: 'succeeded', amount: 650 }),
      });
      expect(s.charge.phase).toBe('approved');
      return s;
    };
    const asking = approvedOn('ask');
    expect(asking.charge.receiptPrompt).toBe(true);
    expect(intentFor(asking, 'y', {})).toEqual({ kind: 'print_sale_receipt', transactionId: 't-1' });
    expect(intentFor(asking, 'n', {})).toEqual({ kind: 'dispatch', action: { type: 'receipt_answered' } });
    expect(hintsFor(asking)).toMatch(/^y print the receipt · n no receipt/);
    const answered = reduce(asking, { type: 'receipt_answered' });
    expect(answered.charge.receiptPrompt).toBe(false);
    expect(intentFor(answered, 'y', {})).toBeNull();
    expect(approvedOn('always').charge.receiptPrompt).toBe(false);
  });

  it('counts the drawer on the day view with k, every key going to the amount until Enter or Esc', () => {
    const day = state({ type: 'view', view: 'day' });
    expect(intentFor(day, 'k', {})).toEqual({ kind: 'dispatch', action: { type: 'drawer_open', currency: 'usd' } });
    expect(hintsFor(day)).toContain('k count the drawer');
    const counting = reduce(day, { type: 'drawer_open', currency: 'usd' });
    expect(intentFor(counting, 'q', {})).toEqual({ kind: 'dispatch', action: { type: 'drawer_input', text: 'q' } });
    expect(intentFor(counting, 'c', {})).toEqual({ kind: 'dispatch', action: { type: 'drawer_input', text: 'c' } });
    expect(intentFor(counting, '', { return: true })).toEqual({ kind: 'dispatch', action: { type: 'drawer_enter', currency: 'usd' } });
    expect(intentFor(counting, '', { escape: true })).toEqual({ kind: 'dispatch', action: { type: 'drawer_close' } });
    expect(intentFor(counting, '', { tab: true })).toBeNull();
    expect(hintsFor(counting)).toMatch(/opening float/);
  });

  it('asks before charging the last amount again: Enter on an empty field starts nothing, y charges, Enter again does not', () => {
    const empty = state();
    const asked = intentFor(empty, '', { return: true });
    expect(asked).toEqual({ kind: 'dispatch', action: { type: 'confirm_repeat', asking: true } });
    const asking = reduce(empty, { type: 'confirm_repeat', asking: true });
    expect(hintsFor(asking)).toBe('y charge it · any other key: no');
    expect(intentFor(asking, 'y', {})).toEqual({ kind: 'start_charge' });
    expect(intentFor(asking, '', { return: true })).toEqual({ kind: 'dispatch', action: { type: 'confirm_repeat', asking: false } });
    expect(intentFor(asking, 'n', {})).toEqual({ kind: 'dispatch', action: { type: 'confirm_repeat', asking: false } });
    // Typing an amount instead answers no and goes into the field.
    expect(intentFor(asking, '7', {})).toEqual({ kind: 'dispatch', action: { type: 'amount_input', text: '7' } });
    expect(reduce(asking, { type: 'amount_input', text: '7' }).charge.confirmRepeat).toBe(false);
    // Nothing to repeat (live mode, no sale yet): Enter only says what to do.
    const live = reduce(initialState({ via: 'polling' }), { type: 'merchant', name: 'Shop', mode: 'live', currency: 'usd' });
    expect(intentFor(live, '', { return: true })).toMatchObject({ kind: 'dispatch', action: { type: 'notice' } });
  });

  it('sends the same payment to the reader again after a customer cancel or a decline, and reprints an approval with R', () => {
    const started: Action[] = [{ type: 'charge_starting', amount: 1000, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' }];
    const canceled = state(...started, { type: 'reader', reader: reader({ activity: 'canceled_on_reader', payment: paying('t-1') }) });
    expect(canceled.charge.phase).toBe('canceled_on_reader');
    expect(intentFor(canceled, 'a', {})).toEqual({ kind: 'resend_payment' });
    expect(hintsFor(canceled)).toBe('a send to the reader again · x cancel payment');
    const declined = state(...started, { type: 'transaction', transaction: txn({ id: 't-1', status: 'failed', failure_code: 'card_declined', decline_code: 'insufficient_funds' }) });
    expect(declined.charge.phase).toBe('declined');
    expect(intentFor(declined, 'a', {})).toEqual({ kind: 'resend_payment' });
    expect(hintsFor(declined)).toMatch(/^a send to the reader again · Enter next sale/);
    expect(intentFor(declined, '', { return: true })).toEqual({ kind: 'dispatch', action: { type: 'new_charge' } });
    const approved = state(...started, { type: 'transaction', transaction: txn({ id: 't-1', status: 'succeeded' }) });
    expect(intentFor(approved, 'R', {})).toEqual({ kind: 'reprint', transactionId: 't-1' });
  });
});
