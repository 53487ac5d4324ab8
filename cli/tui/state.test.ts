import { describe, expect, it } from 'vitest';
import { reader, txn } from './fixtures.js';
import { initialState, reduce, type Action, type CounterState } from './state.js';

const run = (actions: Action[], from: CounterState = initialState({ via: 'polling' })) => actions.reduce(reduce, from);
const ready = () => run([
  { type: 'merchant', name: 'Demo Shop', mode: 'test', currency: 'usd' },
  { type: 'readers', readers: [reader(), reader({ id: 'r-2', name: 'Till 2', processor_terminal_id: 'tmr_Till2', status: 'offline' })] },
]);

describe('counter reducer', () => {
  it('prefills 10.00 in test mode so the first charge is one key away', () => {
    const s = ready();
    expect(s.charge).toMatchObject({ phase: 'entry', amountText: '10.00' });
    expect(s.selectedReader).toBe(0);
    expect(run([{ type: 'merchant', name: 'Live', mode: 'live', currency: 'usd' }]).charge.amountText).toBe('');
  });

  it('prefills a whole amount for a zero-decimal currency (¥1000), which the amount parser takes', () => {
    const s = run([{ type: 'merchant', name: 'Kissa', mode: 'test', currency: 'jpy' }]);
    expect(s.charge.amountText).toBe('1000');
  });

  it('edits the amount and keeps only amount characters', () => {
    const s = run([{ type: 'amount_backspace' }, { type: 'amount_backspace' }, { type: 'amount_input', text: '5x' }], ready());
    expect(s.charge.amountText).toBe('10.5');
  });

  it('goes waiting → processing → approved as the payment succeeds', () => {
    let s = run([{ type: 'charge_starting', amount: 1000, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' }], ready());
    expect(s.charge.phase).toBe('waiting');
    s = reduce(s, { type: 'processing' });
    expect(s.charge.phase).toBe('processing');
    s = reduce(s, { type: 'transaction', transaction: txn({ status: 'pending' }) });
    expect(s.charge.phase).toBe('processing');
    s = reduce(s, { type: 'transaction', transaction: txn({ status: 'succeeded', card_brand: 'visa', card_last_four: '4242' }) });
    expect(s.charge).toMatchObject({ phase: 'approved', result: { card_last_four: '4242' } });
    expect(s.transactions[0]?.status).toBe('succeeded');
    expect(reduce(s, { type: 'new_charge' }).charge).toMatchObject({ phase: 'entry', amountText: '10.00', transactionId: null });
  });

  it('says why a card was declined and when a payment was canceled', () => {
    const started = run([{ type: 'charge_starting', amount: 1005, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' }], ready());
    expect(reduce(started, { type: 'transactions', transactions: [txn({ status: 'failed', failure_code: 'insufficient_funds' })] }).charge).toMatchObject({ phase: 'declined', reason: 'Insufficient funds' });
    expect(reduce(started, { type: 'transaction', transaction: txn({ status: 'canceled', cancellation_reason: 'requested_by_customer' }) }).charge).toMatchObject({ phase: 'canceled', reason: 'requested by customer' });
    expect(reduce(started, { type: 'transaction', transaction: txn({ id: 'other', status: 'failed' }) }).charge.phase).toBe('waiting');
  });

  it('follows the agent’s reader activity, including a cancel on the reader', () => {
    const started = run([{ type: 'charge_starting', amount: 1000, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' }], ready());
    const onReader = reduce(started, { type: 'reader', reader: reader({ activity: 'canceled_on_reader', transaction_id: 't-1' }) });
    expect(onReader.charge.phase).toBe('canceled_on_reader');
    expect(reduce(started, { type: 'reader', reader: reader({ activity: 'processing', transaction_id: 't-1' }) }).charge.phase).toBe('processing');
    expect(reduce(started, { type: 'reader', reader: reader({ activity: 'processing', transaction_id: 't-9' }) }).charge.phase).toBe('waiting');
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

  it('keeps the selected reader when the list is refreshed', () => {
    const s = run([{ type: 'select_reader', delta: 1 }, { type: 'readers', readers: [reader({ id: 'r-0', name: 'Till 0' }), reader(), reader({ id: 'r-2', name: 'Till 2' })] }], ready());
    expect(s.readers[s.selectedReader]?.name).toBe('Till 2');
  });
});
