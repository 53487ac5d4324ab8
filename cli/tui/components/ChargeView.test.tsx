import { qrText } from '../qr.js';
import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { reader, txn, paying } from '../fixtures.js';
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
    expect(f).toContain('Amount  _  USD  Enter alone asks to charge 10.00');
    expect(f).toContain('Reader  ‹ Till 1 ›  ● online');
    expect(f).toContain('Press Enter to charge.');
  });

  it('shows an entry error', () => {
    expect(frame(state({ type: 'charge_error', message: 'Minimum charge is $0.50' }))).toContain('Minimum charge is $0.50');
  });

  it('shows a reader as unknown while the connection is lost', () => {
    expect(frame(state({ type: 'connection', status: 'lost' }))).toContain('Reader  ‹ Till 1 ›  ? unknown (no connection)');
  });

  it('names a payment already on the reader and the key that cancels it', () => {
    expect(frame(state({ type: 'amount_input', text: '5' }, { type: 'reader', reader: reader({ activity: 'waiting_for_card', payment: paying('t-9', 1000) }) }))).toContain(
      'Till 1 has a payment of $10.00 waiting for a card: x cancels it.',
    );
    const picked = frame(state({ type: 'reader', reader: reader({ activity: 'waiting_for_card', payment: paying('t-9', 1000) }) }));
    expect(picked).toContain('WAITING FOR CARD on Till 1: $10.00');
    expect(picked).toContain('already on the reader');
  });

  it('shows waiting for card, then processing', () => {
    expect(frame(state(...started))).toContain('WAITING FOR CARD on Till 1: $10.00');
    expect(frame(state(...started, { type: 'tap_sent' }))).toContain('Simulated tap sent: waiting for the reader to read it.');
    expect(frame(state(...started, { type: 'tap_sent' }))).not.toContain('Card read');
    expect(frame(state(...started, { type: 'reader', reader: reader({ activity: 'processing', payment: paying('t-1') }) }))).toContain('PROCESSING $10.00 on Till 1');
    expect(frame(state(...started, { type: 'connection', status: 'lost' }))).toContain('Connection lost');
  });

  it('shows approved with brand, last four, tip and receipt', () => {
    const f = frame(state(...started, { type: 'transaction', transaction: txn({ status: 'succeeded', amount: 1200, tip_amount: 200, card_brand: 'visa', card_last_four: '4242', receipt_url: 'http://x/receipts/abc' }) }));
    expect(f).toContain('✔ APPROVED  $12.00');
    expect(f).toContain('visa ••4242 · tip $2.00 · txn_0001');
    expect(f).toContain('Receipt: http://x/receipts/abc');
  });

  it('shows a decline with its reason, and a cancel', () => {
    expect(frame(state(...started, { type: 'transaction', transaction: txn({ status: 'failed', failure_code: 'card_declined', decline_code: 'insufficient_funds' }) }))).toContain(
      'Insufficient funds: ask for another card.',
    );
    expect(frame(state(...started, { type: 'transaction', transaction: txn({ status: 'failed', failure_code: 'card_declined', decline_code: 'stolen_card' }) }))).toContain('Declined: do not retry this card.');
    const canceled = frame(state(...started, { type: 'transaction', transaction: txn({ status: 'canceled', cancellation_reason: 'canceled_by_staff' }) }));
    expect(canceled).toContain('✘ CANCELED  $10.00');
    expect(canceled).toContain('Nothing was charged (canceled by staff).');
  });

  it('explains a cancel on the reader with the one-key way out', () => {
    const f = frame(state(...started, { type: 'reader', reader: reader({ activity: 'canceled_on_reader', payment: paying('t-1') }) }));
    expect(f).toContain('CANCELED ON THE READER');
    expect(f).toContain('press a to send it to the reader again, or x to cancel it');
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
