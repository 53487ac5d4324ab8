import { describe, expect, it } from 'vitest';
import { reader, txn, paying } from './fixtures.js';
import { historyRows, initialState, reduce, type Action, type CounterState } from './state.js';

const run = (actions: Action[], from: CounterState = initialState({ via: 'polling' })) => actions.reduce(reduce, from);
const ready = () => run([
  { type: 'merchant', name: 'Demo Shop', mode: 'test', currency: 'usd' },
  { type: 'readers', readers: [reader(), reader({ id: 'r-2', name: 'Till 2', processor_terminal_id: 'tmr_Till2', status: 'offline' })] },
]);

describe('counter reducer', () => {
  it('starts each sale with an empty field, and offers 10.00 on Enter the first time in test mode', () => {
    const s = ready();
    expect(s.charge).toMatchObject({ phase: 'entry', amountText: '' });
    expect(s.lastAmount).toBe('10.00');
    expect(s.selectedReader).toBe(0);
    expect(run([{ type: 'merchant', name: 'Live', mode: 'live', currency: 'usd' }]).lastAmount).toBeNull();
  });

  it('offers a whole amount for a zero-decimal currency (¥1000), which the amount parser takes', () => {
    const s = run([{ type: 'merchant', name: 'Kissa', mode: 'test', currency: 'jpy' }]);
    expect(s.lastAmount).toBe('1000');
  });

  it('edits the amount, keeps only amount characters, and clears it', () => {
    const s = run([{ type: 'amount_input', text: '10.05' }, { type: 'amount_backspace' }, { type: 'amount_input', text: '5x' }], ready());
    expect(s.charge.amountText).toBe('10.05');
    expect(run([{ type: 'amount_input', text: '7,50' }], ready()).charge.amountText).toBe('7,50');
    expect(reduce(s, { type: 'amount_clear' }).charge.amountText).toBe('');
  });

  it('goes waiting → processing → approved as the processor reports it, and the next sale starts empty with the last amount offered', () => {
    let s = run([{ type: 'amount_input', text: '12' }, { type: 'charge_starting', amount: 1200, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' }], ready());
    expect(s.charge.phase).toBe('waiting');
    s = reduce(s, { type: 'tap_sent' });
    // A tap sent is not a card read: only the reader's activity says "processing".
    expect(s.charge).toMatchObject({ phase: 'waiting', tapSent: true });
    s = reduce(s, { type: 'reader', reader: reader({ activity: 'processing', payment: paying('t-1') }) });
    expect(s.charge).toMatchObject({ phase: 'processing', tapSent: false });
    s = reduce(s, { type: 'transaction', transaction: txn({ status: 'pending' }) });
    expect(s.charge.phase).toBe('processing');
    s = reduce(s, { type: 'transaction', transaction: txn({ status: 'succeeded', card_brand: 'visa', card_last_four: '4242' }) });
    expect(s.charge).toMatchObject({ phase: 'approved', result: { card_last_four: '4242' } });
    expect(s.transactions[0]?.status).toBe('succeeded');
    // The reader's view follows its payment: the sale is over there too, so nothing is picked up again.
    s = reduce(s, { type: 'reader', reader: reader({ activity: 'approved', payment: paying('t-1', 1200, { status: 'succeeded', outcome: 'approved' }) }) });
    const next = reduce(s, { type: 'new_charge' });
    expect(next.charge).toMatchObject({ phase: 'entry', amountText: '', transactionId: null });
    expect(next.lastAmount).toBe('12.00');
  });

  it('says why a card was declined and when a payment was canceled', () => {
    const started = run([{ type: 'charge_starting', amount: 1005, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' }], ready());
    expect(reduce(started, { type: 'transactions', transactions: [txn({ status: 'failed', failure_code: 'card_declined', decline_code: 'incorrect_pin' })] }).charge).toMatchObject({
      phase: 'declined',
      reason: 'Wrong PIN: ask the customer to try again',
    });
    expect(reduce(started, { type: 'transaction', transaction: txn({ status: 'canceled', cancellation_reason: 'canceled_by_staff' }) }).charge).toMatchObject({ phase: 'canceled', reason: 'canceled by staff' });
    expect(reduce(started, { type: 'transaction', transaction: txn({ id: 'other', status: 'failed' }) }).charge.phase).toBe('waiting');
  });

  it('follows the agent’s reader activity, including a cancel on the reader', () => {
    const started = run([{ type: 'charge_starting', amount: 1000, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' }], ready());
    const onReader = reduce(started, { type: 'reader', reader: reader({ activity: 'canceled_on_reader', payment: paying('t-1') }) });
    expect(onReader.charge.phase).toBe('canceled_on_reader');
    expect(reduce(started, { type: 'reader', reader: reader({ activity: 'processing', payment: paying('t-1') }) }).charge.phase).toBe('processing');
    expect(reduce(started, { type: 'reader', reader: reader({ activity: 'processing', payment: paying('t-9') }) }).charge.phase).toBe('waiting');
  });

  it('sends a sale for an offline reader to the payment-link path', () => {
    const s = run([{ type: 'select_reader', delta: 1 }, { type: 'charge_offline', amount: 1000, readerName: 'Till 2' }, { type: 'link_created', url: 'http://x/pay/pl_1', reference: 'pl_1' }], ready());
    expect(s.selectedReader).toBe(1);
    expect(s.charge).toMatchObject({ phase: 'link', link: { url: 'http://x/pay/pl_1' } });
  });

  it('keeps errors before a payment on the entry line, after it as a notice', () => {
    expect(run([{ type: 'charge_starting', amount: 1000, readerName: 'Till 1' }, { type: 'charge_error', message: 'busy' }], ready()).charge).toMatchObject({ phase: 'entry', error: 'busy' });
    const after = run([{ type: 'charge_starting', amount: 1000, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' }, { type: 'charge_error', message: 'Customer already tapped' }], ready());
    expect(after.charge.phase).toBe('waiting');
    expect(after.notice).toBe('Customer already tapped');
  });

  it('records a lost connection and its recovery, without churning state while connected', () => {
    const lost = reduce(ready(), { type: 'connection', status: 'lost', error: 'ECONNREFUSED' });
    expect(lost).toMatchObject({ connection: 'lost', connectionError: 'ECONNREFUSED' });
    const back = reduce(lost, { type: 'connection', status: 'connected' });
    expect(back.connection).toBe('connected');
    expect(reduce(back, { type: 'connection', status: 'connected' })).toBe(back);
  });

  it('clears errors when their cause clears: the connection comes back, the reader is free again', () => {
    const refused = run([{ type: 'charge_starting', amount: 1000, readerName: 'Till 1' }, { type: 'charge_error', message: 'The server cannot be reached', cause: 'connection' }, { type: 'connection', status: 'lost' }], ready());
    expect(refused.charge.error).toBe('The server cannot be reached');
    expect(reduce(refused, { type: 'connection', status: 'connected' }).charge.error).toBeNull();
    const noticed = run([{ type: 'notice', text: 'not connected', cause: 'connection' }, { type: 'connection', status: 'lost' }, { type: 'connection', status: 'connected' }], ready());
    expect(noticed.notice).toBeNull();
    const busy = run([{ type: 'amount_input', text: '5' }, { type: 'reader', reader: reader({ activity: 'waiting_for_card', payment: paying('t-9') }) }, { type: 'charge_error', message: 'Till 1 is busy', cause: 'reader_busy' }], ready());
    expect(busy.charge.error).toBe('Till 1 is busy');
    expect(reduce(busy, { type: 'reader', reader: reader({ activity: 'idle', payment: null }) }).charge.error).toBeNull();
  });

  it('picks up a payment already on the selected reader, and not one its view says has ended', () => {
    const found = reduce(ready(), { type: 'readers', readers: [reader({ activity: 'waiting_for_card', payment: paying('t-7', 1000) })] });
    expect(found.charge).toMatchObject({ phase: 'waiting', transactionId: 't-7', amount: 1000, readerName: 'Till 1', adopted: true });
    expect(reduce(ready(), { type: 'reader', reader: reader({ activity: 'processing', payment: paying('t-1', 2500) }) }).charge).toMatchObject({ phase: 'processing', amount: 2500 });
    // Staff typing are not interrupted; a payment the view says is over is not picked up.
    expect(run([{ type: 'amount_input', text: '4' }, { type: 'reader', reader: reader({ activity: 'waiting_for_card', payment: paying('t-7') }) }], ready()).charge.phase).toBe('entry');
    const canceled = reduce(ready(), { type: 'reader', reader: reader({ activity: 'canceled_on_reader', payment: paying('t-7', 1000, { status: 'canceled', outcome: 'canceled' }) }) });
    expect(canceled.charge.phase).toBe('entry');
  });

  it('ends the charge as the reader’s view says its payment ended, and keeps the details the payment’s push brings', () => {
    const started = run([{ type: 'charge_starting', amount: 1005, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' }], ready());
    const declined = reduce(started, { type: 'reader', reader: reader({ activity: 'declined', payment: paying('t-1', 1005, { status: 'failed', failure_code: 'card_declined', decline_code: 'insufficient_funds', outcome: 'declined' }) }) });
    expect(declined.charge).toMatchObject({ phase: 'declined', reason: 'Insufficient funds: ask for another card' });
    const approved = reduce(started, { type: 'reader', reader: reader({ activity: 'approved', payment: paying('t-1', 1005, { status: 'succeeded', outcome: 'approved' }) }) });
    expect(approved.charge).toMatchObject({ phase: 'approved', result: null });
    const detailed = reduce(approved, { type: 'transaction', transaction: txn({ status: 'succeeded', amount: 1005, card_last_four: '4242' }) });
    expect(detailed.charge).toMatchObject({ phase: 'approved', result: { card_last_four: '4242' } });
    // A reader still showing an earlier payment's outcome does not end this one.
    expect(reduce(started, { type: 'reader', reader: reader({ activity: 'approved', payment: paying('t-0', 500, { status: 'succeeded', outcome: 'approved' }) }) }).charge.phase).toBe('waiting');
  });

  it('pages History through all payments, page 1 being the live list', () => {
    const online = txn({ id: 't-2', payment_method_type: 'card', reader_id: null, terminal_id: null });
    let s = run([{ type: 'view', view: 'transactions' }, { type: 'transactions', transactions: [txn(), online] }, { type: 'history_loaded', page: 1, filter: 'all', lastPage: 3, totalCount: 30, rows: [] }], ready());
    expect(s.history).toMatchObject({ page: 1, lastPage: 3, totalCount: 30, rows: null });
    expect(historyRows(s).map((t) => t.id)).toEqual(['t-1', 't-2']);
    s = reduce(s, { type: 'history_page', page: 2 });
    expect(s.history).toMatchObject({ page: 2, loading: true });
    s = reduce(s, { type: 'history_loaded', page: 2, filter: 'all', lastPage: 3, totalCount: 30, rows: [txn({ id: 'old-1' })] });
    expect(historyRows(s).map((t) => t.id)).toEqual(['old-1']);
    expect(reduce(s, { type: 'history_page', page: 9 }).history.page).toBe(3);
    // A late answer for page 1 updates the count and leaves page 2's rows on screen.
    s = reduce(s, { type: 'history_loaded', page: 1, filter: 'all', lastPage: 4, totalCount: 31, rows: [txn({ id: 'new' })] });
    expect(s.history).toMatchObject({ page: 2, lastPage: 4, totalCount: 31 });
    expect(historyRows(s).map((t) => t.id)).toEqual(['old-1']);
  });

  it('pages a counter/online filter through the pages the server filtered, all of them full', () => {
    const card = (id: string) => txn({ id, payment_method_type: 'card', reader_id: null, terminal_id: null });
    const cash = txn({ id: 'cash-1', payment_method_type: 'cash', reader_id: null, terminal_id: null });
    let s = run([{ type: 'view', view: 'transactions' }, { type: 'transactions', transactions: [txn(), card('o-1'), cash] }, { type: 'history_loaded', page: 1, filter: 'all', lastPage: 9, totalCount: 100, rows: [] }], ready());
    // Switching filter starts a new list: page 1, its counts unknown until the server answers.
    s = reduce(s, { type: 'history_page', page: 1, filter: 'online' });
    expect(s.history).toMatchObject({ page: 1, filter: 'online', lastPage: 1, totalCount: null, rows: null, loading: true });
    expect(historyRows(s).map((t) => t.id)).toEqual(['o-1']);
    const firstOnline = Array.from({ length: 12 }, (_, i) => card(`o-${i + 1}`));
    s = reduce(s, { type: 'history_loaded', page: 1, filter: 'online', lastPage: 3, totalCount: 30, rows: firstOnline });
    expect(s.history).toMatchObject({ lastPage: 3, totalCount: 30, loading: false });
    expect(historyRows(s)).toHaveLength(12);
    expect(historyRows(s).map((t) => t.id)).toEqual(firstOnline.map((t) => t.id));
    // A sale since the fetch shows first; the page stays a page long.
    s = reduce(s, { type: 'transactions', transactions: [card('o-new'), txn(), card('o-1'), cash] });
    expect(historyRows(s).map((t) => t.id).slice(0, 3)).toEqual(['o-new', 'o-1', 'o-2']);
    expect(historyRows(s)).toHaveLength(12);
    s = reduce(s, { type: 'history_page', page: 2 });
    expect(s.history).toMatchObject({ page: 2, filter: 'online', loading: true });
    s = reduce(s, { type: 'history_loaded', page: 2, filter: 'online', lastPage: 3, totalCount: 30, rows: [card('o-13'), card('o-14')] });
    expect(historyRows(s).map((t) => t.id)).toEqual(['o-13', 'o-14']);
    // Counter payments include cash sales; an answer for the filter left behind is dropped.
    s = reduce(s, { type: 'history_page', page: 1, filter: 'counter' });
    expect(historyRows(s).map((t) => t.id)).toEqual(['t-1', 'cash-1']);
    expect(reduce(s, { type: 'history_loaded', page: 1, filter: 'online', lastPage: 3, totalCount: 30, rows: firstOnline }).history).toMatchObject({ filter: 'counter', totalCount: null, rows: null });
    s = reduce(s, { type: 'history_loaded', page: 1, filter: 'counter', lastPage: 2, totalCount: 14, rows: [txn(), cash, txn({ id: 't-0' })] });
    expect(historyRows(s).map((t) => t.id)).toEqual(['t-1', 'cash-1', 't-0']);
    expect(s.history).toMatchObject({ lastPage: 2, totalCount: 14 });
  });

  it('keeps the selected reader when the list is refreshed', () => {
    const s = run([{ type: 'select_reader', delta: 1 }, { type: 'readers', readers: [reader({ id: 'r-0', name: 'Till 0' }), reader(), reader({ id: 'r-2', name: 'Till 2' })] }], ready());
    expect(s.readers[s.selectedReader]?.name).toBe('Till 2');
  });

  it('after a decline, the payment sent again waits on the reader: the old failure does not end it, the next answer does', () => {
    const declined = { id: 't-1', status: 'failed', failure_code: 'card_declined', decline_code: 'insufficient_funds', outcome: 'declined' as const };
    const sent = run([
      { type: 'charge_starting', amount: 1000, readerName: 'Till 1' },
      { type: 'charge_started', transactionId: 't-1' },
      { type: 'reader', reader: reader({ activity: 'declined', payment: paying('t-1', 1000, declined) }) },
    ], ready());
    expect(sent.charge.phase).toBe('declined');
    const again = run([{ type: 'charge_resent' }], sent);
    expect(again.charge).toMatchObject({ phase: 'waiting', reason: null, resent: 'sent' });
    // The agent still shows the old decline, and the payment is still `failed`: neither ends the new attempt.
    const stale = run([
      { type: 'reader', reader: reader({ activity: 'declined', payment: paying('t-1', 1000, declined) }) },
      { type: 'transaction', transaction: txn({ id: 't-1', status: 'failed', failure_code: 'card_declined' }) },
      { type: 'reader', reader: reader({ activity: 'waiting_for_card', payment: paying('t-1', 1000, declined) }) },
    ], again);
    expect(stale.charge).toMatchObject({ phase: 'waiting', resent: 'on_reader' });
    const approved = run([{ type: 'transaction', transaction: txn({ id: 't-1', status: 'succeeded' }) }], stale);
    expect(approved.charge.phase).toBe('approved');
    const declinedAgain = run([{ type: 'reader', reader: reader({ activity: 'declined', payment: paying('t-1', 1000, declined) }) }], stale);
    expect(declinedAgain.charge.phase).toBe('declined');
  });

  it('a reader that gave up on a payment still open (a timeout) ends the wait with the way out, and a customer cancel can be sent again', () => {
    const waiting = run([{ type: 'charge_starting', amount: 1000, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' }], ready());
    const timedOut = run([{ type: 'reader', reader: reader({ activity: 'declined', payment: paying('t-1') }) }], waiting);
    expect(timedOut.charge).toMatchObject({ phase: 'declined', reason: expect.stringMatching(/stopped waiting/) });
    expect(run([{ type: 'charge_resent' }], timedOut).charge.phase).toBe('waiting');
    const canceled = run([{ type: 'reader', reader: reader({ activity: 'canceled_on_reader', payment: paying('t-1') }) }], waiting);
    const resent = run([{ type: 'charge_resent' }], canceled);
    expect(resent.charge).toMatchObject({ phase: 'waiting', resent: null });
    // Nothing to send again on the entry screen.
    const entry = ready();
    expect(run([{ type: 'charge_resent' }], entry)).toBe(entry);
  });
});
