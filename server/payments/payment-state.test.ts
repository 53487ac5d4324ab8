import { describe, expect, it } from 'vitest';
import type { TransactionsTable } from '../db/schema.js';
import { NO_RECEIPT, type PaymentSnapshot } from '../processor/snapshots.js';
import { canMove, impliedStatus, patchFromSnapshot } from './payment-state.js';

const snapshot = (over: Partial<PaymentSnapshot>): PaymentSnapshot => ({
  id: 'pi_1',
  status: 'requires_payment_method',
  amount: 1000,
  amountReceived: 0,
  tip: 0,
  currency: 'usd',
  clientSecret: null,
  metadata: {},
  failureCode: null,
  declineCode: null,
  failureMessage: null,
  card: null,
  receipt: NO_RECEIPT,
  cancellationReason: null,
  ...over,
});

const row = (over: Partial<TransactionsTable>): TransactionsTable =>
  ({ status: 'pending', amount: 1000, card_brand: null, card_last_four: null, failure_code: null, failure_message: null, cancellation_reason: null, ...over }) as TransactionsTable;

describe('payment state machine', () => {
  it('maps processor statuses, treating an unpaid intent with an error as failed', () => {
    expect(impliedStatus(snapshot({ status: 'succeeded' }))).toBe('succeeded');
    expect(impliedStatus(snapshot({ status: 'requires_capture' }))).toBe('requires_capture');
    expect(impliedStatus(snapshot({ status: 'processing' }))).toBe('pending');
    expect(impliedStatus(snapshot({ status: 'requires_payment_method' }))).toBe('pending');
    expect(impliedStatus(snapshot({ status: 'requires_payment_method', failureCode: 'card_declined' }))).toBe('failed');
    expect(impliedStatus(snapshot({ status: 'canceled' }))).toBe('canceled');
  });

  it('never moves backwards or out of a final state', () => {
    expect(canMove('succeeded', 'pending')).toBe(false);
    expect(canMove('succeeded', 'failed')).toBe(false);
    expect(canMove('canceled', 'succeeded')).toBe(false);
    expect(canMove('refunded', 'partially_refunded')).toBe(false);
    expect(canMove('failed', 'succeeded')).toBe(true);
    expect(patchFromSnapshot(row({ status: 'succeeded', card_brand: 'visa' }), snapshot({ status: 'processing' }), 1)).toBeNull();
  });

  it('keeps the card that paid when an older snapshot arrives late', () => {
    const paid = row({ status: 'succeeded', card_brand: 'visa', card_last_four: '4242' });
    const stale = snapshot({ status: 'requires_payment_method', failureCode: 'card_declined', card: { brand: 'mastercard', last4: '0002' } });
    expect(patchFromSnapshot(paid, stale, 1)).toBeNull();
  });

  it('stamps the move: captured amount, tip and time on success; failure code on a decline', () => {
    expect(patchFromSnapshot(row({}), snapshot({ status: 'succeeded', amount: 1200, amountReceived: 1200, tip: 200, card: { brand: 'visa', last4: '4242' } }), 7)).toMatchObject({
      status: 'succeeded',
      captured_at: 7,
      amount: 1200,
      amount_captured: 1200,
      tip_amount: 200,
      card_brand: 'visa',
    });
    expect(patchFromSnapshot(row({}), snapshot({ failureCode: 'card_declined', declineCode: 'insufficient_funds', failureMessage: 'no' }), 8)).toMatchObject({ status: 'failed', failed_at: 8, failure_code: 'card_declined', decline_code: 'insufficient_funds' });
  });
});
