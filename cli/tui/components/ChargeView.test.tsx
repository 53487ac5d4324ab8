import { qrText } from '../qr.js';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { reader, txn } from '../fixtures.js';
import { initialState, reduce, type Action, type CounterState } from '../state.js';
import { theme } from '../theme.js';
import { ChargeView } from './ChargeView.js';

const state = (...actions: Action[]): CounterState =>
  actions.reduce(reduce, reduce(reduce(initialState({ via: 'polling' }), { type: 'merchant', name: 'Shop', mode: 'test', currency: 'usd' }), { type: 'readers', readers: [reader()] }));
const frame = (s: CounterState) => render(<ChargeView state={s} theme={theme(false)} />).lastFrame() ?? '';
const started: Action[] = [{ type: 'charge_starting', amount: 1000, readerName: 'Till 1' }, { type: 'charge_started', transactionId: 't-1' }];

describe('ChargeView', () => {
  it('shows the amount entry with the reader and its presence', () => {
    const f = frame(state());
    expect(f).toContain('Amount  10.00_');
    expect(f).toContain('Reader  ‹ Till 1 ›  ● online');
    expect(f).toContain('Press Enter to charge.');
  });

  it('shows an entry error', () => {
    expect(frame(state({ type: 'charge_error', message: 'amount "1,00" has a comma' }))).toContain('amount "1,00" has a comma');
  });

  it('shows waiting for card, then processing', () => {
    expect(frame(state(...started))).toContain('WAITING FOR CARD on Till 1: $10.00');
    expect(frame(state(...started, { type: 'processing' }))).toContain('PROCESSING $10.00 on Till 1');
  });

  it('shows approved with brand, last four, tip and receipt', () => {
    const f = frame(state(...started, { type: 'transaction', transaction: txn({ status: 'succeeded', amount: 1200, tip_amount: 200, card_brand: 'visa', card_last_four: '4242', receipt_url: 'http://x/receipts/abc' }) }));
    expect(f).toContain('✔ APPROVED  $12.00');
    expect(f).toContain('visa ••4242 · tip $2.00 · txn_0001');
    expect(f).toContain('Receipt: http://x/receipts/abc');
  });

  it('shows a decline with its reason, and a cancel', () => {
    expect(frame(state(...started, { type: 'transaction', transaction: txn({ status: 'failed', failure_code: 'insufficient_funds' }) }))).toContain('Insufficient funds.');
    expect(frame(state(...started, { type: 'transaction', transaction: txn({ status: 'canceled' }) }))).toContain('✘ CANCELED  $10.00');
  });

  it('explains a cancel on the reader with the one-key way out', () => {
    const f = frame(state(...started, { type: 'reader', reader: reader({ activity: 'canceled_on_reader', transaction_id: 't-1' }) }));
    expect(f).toContain('CANCELED ON THE READER');
    expect(f).toContain('press x to cancel it');
  });

  it('offers and then shows a payment link when the reader is offline', () => {
    expect(frame(state({ type: 'charge_offline', amount: 1000, readerName: 'Till 1' }))).toContain('Press l to take $10.00 by payment link instead');
    const f = frame(state({ type: 'charge_offline', amount: 1000, readerName: 'Till 1' }, { type: 'link_created', url: 'http://127.0.0.1:4242/pay/pl_123', reference: 'pl_123' }));
    expect(f).toContain('http://127.0.0.1:4242/pay/pl_123');
    expect(f).toContain('Payment link for $10.00 (pl_123)');
    // The same link as a QR code, drawn in full on screen.
    const qr = qrText('http://127.0.0.1:4242/pay/pl_123').split('\n');
    expect(qr.length).toBeGreaterThan(10);
    for (const line of qr) expect(f).toContain(line.trimEnd());
  });
});
