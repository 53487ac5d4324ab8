import { describe, expect, it } from 'vitest';
import { reader, txn } from './fixtures.js';
import { hintsFor, intentFor } from './keys.js';
import { initialState, reduce, type Action, type CounterState } from './state.js';

const state = (...actions: Action[]): CounterState =>
  actions.reduce(reduce, reduce(reduce(initialState({ via: 'polling' }), { type: 'merchant', name: 'Shop', mode: 'test', currency: 'usd' }), { type: 'readers', readers: [reader()] }));

describe('keys', () => {
  it('types amounts on the charge screen and charges on Enter', () => {
    expect(intentFor(state(), '4', {})).toEqual({ kind: 'dispatch', action: { type: 'amount_input', text: '4' } });
    expect(intentFor(state(), 'c', {})).toEqual({ kind: 'dispatch', action: { type: 'amount_input', text: 'c' } });
    expect(intentFor(state(), '', { return: true })).toEqual({ kind: 'start_charge' });
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
  });

  it('switches views with letters and Tab, and quits with q when idle', () => {
    expect(intentFor(state(), 'h', {})).toEqual({ kind: 'dispatch', action: { type: 'view', view: 'transactions' } });
    expect(intentFor(state(), '', { tab: true })).toEqual({ kind: 'dispatch', action: { type: 'view', view: 'readers' } });
    expect(intentFor(state(), '', { tab: true, shift: true })).toEqual({ kind: 'dispatch', action: { type: 'view', view: 'day' } });
    expect(intentFor(state({ type: 'view', view: 'readers' }), 'c', {})).toEqual({ kind: 'dispatch', action: { type: 'view', view: 'charge' } });
    expect(intentFor(state(), 'q', {})).toEqual({ kind: 'quit' });
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
});
