import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { frameWith } from '../../test/helpers/ink.js';
import { PosClient } from '../api.js';
import { App } from './components/App.js';
import { TransactionsView } from './components/TransactionsView.js';
import { initialState, reduce } from './state.js';
import { theme } from './theme.js';
import { FakeSource, reader, txn } from './fixtures.js';

/** A sale paid in parts at the counter: cash then a card, two cards, and a card part declined. */

const api = new PosClient({ server: 'http://127.0.0.1:9', apiKey: 'sk_test_x', fetch: () => Promise.reject(new Error('offline')) });
const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));


async function counter() {
  const source = new FakeSource();
  // Each card part is its own payment.
  let n = 0;
  source.answers.startPayment = () => Promise.resolve({ transactionId: `t-card-${++n}` });
  const ui = render(<App source={source} api={api} color={false} />);
  await tick();
  source.emit({ type: 'merchant', name: 'Demo Shop', mode: 'test', currency: 'usd' });
  source.emit({ type: 'connection', status: 'connected' });
  source.emit({ type: 'readers', readers: [reader()] });
  await frameWith(ui, 'Press Enter to charge.');
  const type = async (...keys: string[]) => {
    for (const k of keys) {
      ui.stdin.write(k);
      await tick();
    }
  };
  const order = () => /order=(ord_\w+)/.exec(source.calls.join('\n'))?.[1];
  return { source, ui, type, order };
}

describe('split tender at the counter', () => {
  it('takes part in cash and the rest on a card, both under one order, and closes the sale when paid', async () => {
    const { source, ui, type, order } = await counter();
    await type('5', '0', '$');
    await frameWith(ui, 'CASH SALE  $50.00 due');
    await type('2', '0', '\r');
    // Less than due is refused on Enter (a slip), and taken as a part with /.
    await frameWith(ui, '$20.00 is less than the $50.00 due. / takes it as part of the sale');
    expect(source.calls.filter((c) => c.startsWith('cash'))).toEqual([]);
    await type('/');
    // $20.00 handed over for $50.00: a cash part of $20.00, no change.
    await frameWith(ui, 'STILL DUE $30.00: Enter, then a card or more cash.');
    const ref = order();
    expect(source.calls).toContain(`cash 2000 2000 usd order=${ref}`);
    await type('\r');
    const open = await frameWith(ui, 'STILL DUE $30.00');
    expect(open).toContain(`Sale ${ref}  $50.00  paid $20.00 cash`);
    expect(open).toContain('Enter alone: $30.00 on card');

    await type('\r');
    await frameWith(ui, 'WAITING FOR CARD on Till 1: $30.00');
    expect(source.calls).toContain(`start Till 1 3000 usd order=${ref}`);
    source.emit({ type: 'transaction', transaction: txn({ id: 't-card-1', status: 'succeeded', amount: 3000, metadata: { order: ref! } }) });
    const paid = await frameWith(ui, 'PAID IN FULL');
    expect(paid).toContain('APPROVED  $30.00');
    expect(paid).toContain('paid $20.00 cash + $30.00 card');
    await type('\r');
    const done = await frameWith(ui, `Sale ${ref} paid in full: 20.00 cash + 30.00 card.`);
    expect(done).not.toContain('STILL DUE');
    expect(done).toContain('Enter alone asks to charge');
  });

  it('keeps the cash part and the sale open when the card part is declined, and says what is still due', async () => {
    const { source, ui, type, order } = await counter();
    await type('5', '0', '$', '2', '0', '/');
    await frameWith(ui, 'STILL DUE $30.00: Enter');
    await type('\r', '\r');
    await frameWith(ui, 'WAITING FOR CARD on Till 1: $30.00');
    source.emit({ type: 'transaction', transaction: txn({ id: 't-card-1', status: 'failed', amount: 3000, failure_code: 'card_declined', decline_code: 'insufficient_funds' }) });
    const declined = await frameWith(ui, 'DECLINED  $30.00');
    expect(declined).toContain('The sale stays open with its paid parts kept');
    expect(declined).toContain('STILL DUE $30.00');

    await type('\r');
    const open = await frameWith(ui, 'Enter alone: $30.00 on card');
    expect(open).toContain(`Sale ${order()}  $50.00  paid $20.00 cash`);
    // Esc does not drop a sale with a paid part.
    await type('\u001b');
    await frameWith(ui, `20.00 of sale ${order()} is paid: take the 30.00 still due`);
    // The rest in cash this time: exact cash closes the sale.
    await type('$', '\r');
    await frameWith(ui, 'CASH SALE $30.00 PAID');
    expect(source.calls.filter((c) => c.startsWith('cash'))).toEqual([`cash 2000 2000 usd order=${order()}`, `cash 3000 3000 usd order=${order()}`]);
  });

  it('splits a sale over two cards with /, and refuses a part larger than what is due', async () => {
    const { source, ui, type, order } = await counter();
    await type('5', '0', '/');
    await frameWith(ui, 'STILL DUE $50.00');
    await type('6', '0', '\r');
    await frameWith(ui, '$60.00 is more than the $50.00 still due');
    await type('\u001b', '2', '0', '\r');
    await frameWith(ui, 'WAITING FOR CARD on Till 1: $20.00');
    source.emit({ type: 'transaction', transaction: txn({ id: 't-card-1', status: 'succeeded', amount: 2000 }) });
    await frameWith(ui, 'STILL DUE $30.00');
    await type('\r', '\r');
    await frameWith(ui, 'WAITING FOR CARD on Till 1: $30.00');
    expect(source.calls.filter((c) => c.startsWith('start'))).toEqual([`start Till 1 2000 usd order=${order()}`, `start Till 1 3000 usd order=${order()}`]);
  });

  it('lists a sale paid in parts as one sale in History, its parts beneath it, each selectable to refund', () => {
    const order = { order: 'ord_1234abcd5678efgh' };
    // Newest first, as the API lists them: another sale came between the two parts.
    const list = [
      txn({ id: 'b', reference: 'txn_b', status: 'succeeded', amount: 3000, amount_captured: 3000, card_brand: 'visa', card_last_four: '4242', metadata: order, created_at: '2026-11-21T12:02:00.000Z' }),
      txn({ id: 'c', reference: 'txn_c', status: 'succeeded', created_at: '2026-11-21T12:01:30.000Z' }),
      txn({ id: 'x', reference: 'txn_x', status: 'failed', amount: 3000, metadata: order, created_at: '2026-11-21T12:01:00.000Z' }),
      txn({ id: 'a', reference: 'txn_a', status: 'succeeded', amount: 2000, amount_captured: 2000, payment_method_type: 'cash', metadata: order, created_at: '2026-11-21T12:00:00.000Z' }),
    ];
    const state = reduce(initialState({ via: 'polling' }), { type: 'transactions', transactions: list });
    const frame = render(<TransactionsView state={state} theme={theme(false)} />).lastFrame() ?? '';
    const lines = frame.split('\n');
    const sale = lines.findIndex((l) => l.includes('ord_1234abcd5678efgh'));
    expect(lines[sale]).toMatch(/\$50\.00\s+paid: cash \+ visa\s+3 parts\s+ord_1234abcd5678efgh/);
    expect(frame.match(/ord_1234abcd5678efgh/g)).toHaveLength(1);
    // Its parts right under it, newest first; the sale in between is its own row after them.
    expect(lines[sale + 1]).toMatch(/› {3}└\s+\$30\.00\s+succeeded\s+counter\s+visa ••4242\s+txn_b/);
    expect(lines[sale + 2]).toMatch(/└\s+\$30\.00\s+failed\s+counter\s+txn_x/);
    expect(lines[sale + 3]).toMatch(/└\s+\$20\.00\s+succeeded\s+counter\s+txn_a/);
    expect(lines[sale + 4]).toMatch(/\$10\.00\s+succeeded\s+counter\s+txn_c/);
    // The selection walks the parts in the order shown: two down is the cash part, which r refunds.
    const onCash = [{ type: 'select_transaction', delta: 2 } as const, { type: 'confirm_refund', transactionId: 'a' } as const].reduce(reduce, state);
    const asking = render(<TransactionsView state={onCash} theme={theme(false)} />).lastFrame() ?? '';
    expect(asking.split('\n').find((l) => l.startsWith('›'))).toContain('txn_a');
    expect(asking).toContain('Refund $20.00 of txn_a? y to refund');
    // A sale whose newest part was declined after a paid one still has something due: open.
    const declined = reduce(initialState({ via: 'polling' }), { type: 'transactions', transactions: [list[2]!, list[3]!] });
    expect(render(<TransactionsView state={declined} theme={theme(false)} />).lastFrame()).toMatch(/\$20\.00\s+open: cash\s+2 parts\s+ord_1234abcd5678efgh/);
  });

  it('keeps History on an 80×24 screen when sale lines add to a page, scrolling with the selection', () => {
    // Twelve payments, six sales of two parts each: eighteen lines for a list of twelve.
    const list = Array.from({ length: 12 }, (_, i) => txn({ id: `p${i}`, reference: `txn_p${String(i).padStart(2, '0')}`, status: 'succeeded', metadata: { order: `ord_sale${Math.floor(i / 2)}` } }));
    const state = reduce(initialState({ via: 'polling' }), { type: 'transactions', transactions: list });
    const frame = (s: typeof state) => render(<TransactionsView state={s} theme={theme(false)} />).lastFrame() ?? '';
    const top = frame(state);
    expect(top.split('\n')).toHaveLength(1 + 12 + 1);
    expect(top).toContain('ord_sale0');
    expect(top).toContain('Page 1 of 1 · all payments · 6 below');
    const bottom = frame(reduce(state, { type: 'select_transaction', delta: 11 }));
    expect(bottom.split('\n')).toHaveLength(1 + 12 + 1);
    expect(bottom.split('\n').find((l) => l.startsWith('›'))).toContain('txn_p11');
    expect(bottom).toContain('ord_sale5');
    expect(bottom).not.toContain('ord_sale0');
    expect(bottom).toContain('6 above');
  });
});
