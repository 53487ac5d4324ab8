import { describe, expect, it } from 'vitest';
import { cartTotal, emptyCart, reduceCart, type CartAction, type CartState } from './cart.js';
import { reader } from './fixtures.js';
import { hintsFor, intentFor, type KeyInfo } from './keys.js';
import { initialState, reduce, type CounterState } from './state.js';

const run = (currency: string, ...actions: CartAction[]): CartState => actions.reduce((cart, a) => reduceCart(cart, a, currency), emptyCart());
const type = (text: string): CartAction => ({ type: 'cart_input', text });
const enter: CartAction = { type: 'cart_next' };
const line = (description: string, price: string, quantity = ''): CartAction[] => [{ type: 'cart_open' }, type(description), enter, type(price), enter, ...(quantity ? [type(quantity)] : []), enter];

describe('cart', () => {
  it('adds lines in three steps, the quantity 1 when left empty, and totals them', () => {
    const cart = run('usd', ...line('Coffee', '3.50', '2'), ...line('Bagel', '2,5'));
    expect(cart.lines).toEqual([
      { description: 'Coffee', quantity: 2, amount: 350 },
      { description: 'Bagel', quantity: 1, amount: 250 },
    ]);
    expect(cart.draft).toBeNull();
    expect(cartTotal(cart.lines)).toBe(950);
  });

  it('reads the unit price in the currency: no decimals in JPY, minor units with c', () => {
    expect(run('jpy', ...line('Onigiri', '180', '3')).lines).toEqual([{ description: 'Onigiri', quantity: 3, amount: 180 }]);
    const refused = run('jpy', { type: 'cart_open' }, type('Onigiri'), enter, type('1.5'), enter);
    expect(refused.draft?.step).toBe('amount');
    expect(refused.error).toMatch(/JPY has no decimals/);
    expect(run('usd', ...line('Gum', '75c')).lines[0]?.amount).toBe(75);
  });

  it('refuses, with words, what the API would refuse, and keeps the line being typed', () => {
    const noDescription = run('usd', { type: 'cart_open' }, type('   '), enter);
    expect(noDescription.error).toBe('Type what is sold (a description), then Enter.');
    const long = run('usd', { type: 'cart_open' }, type('x'.repeat(6000)), enter);
    expect(long.error).toBe('A description is at most 5000 characters (this one has 5001).');
    expect(run('usd', { type: 'cart_open' }, type('Tea'), enter, type('1,000'), enter).error).toMatch(/comma that could separate thousands/);
    const zero = run('usd', { type: 'cart_open' }, type('Tea'), enter, type('3'), enter, type('0'), enter);
    expect(zero.error).toBe('The quantity is a whole number from 1 to 10,000.');
    expect(zero.lines).toEqual([]);
    // A quantity field holds five digits: 99999 is refused rather than cut to a smaller number.
    expect(run('usd', { type: 'cart_open' }, type('Tea'), enter, type('3'), enter, type('99999'), enter).error).toMatch(/1 to 10,000/);
    const over = run('usd', ...line('Car', '999999.99'), ...line('Car', '1'));
    expect(over.lines).toHaveLength(1);
    expect(over.error).toBe('That line would take the cart over the maximum charge of $999,999.99.');
  });

  it('holds at most 100 lines', () => {
    let cart = emptyCart();
    for (let i = 0; i < 100; i += 1) for (const a of line(`Item ${i}`, '1')) cart = reduceCart(cart, a, 'usd');
    expect(cart.lines).toHaveLength(100);
    cart = reduceCart(cart, { type: 'cart_open' }, 'usd');
    expect(cart.draft).toBeNull();
    expect(cart.error).toBe('A cart holds at most 100 lines.');
  });

  it('takes off the last line, drops a half-typed line, and clears', () => {
    const two = run('usd', ...line('Coffee', '3.50', '2'), ...line('Bagel', '2.50'));
    expect(reduceCart(two, { type: 'cart_remove_last' }, 'usd').lines.map((l) => l.description)).toEqual(['Coffee']);
    const typing = reduceCart(reduceCart(two, { type: 'cart_open' }, 'usd'), type('Mu'), 'usd');
    expect(reduceCart(typing, { type: 'cart_close' }, 'usd')).toEqual({ ...two, draft: null });
    expect(reduceCart(two, { type: 'cart_clear' }, 'usd')).toEqual(emptyCart());
  });
});

describe('cart keys on the charge screen', () => {
  const base = (): CounterState => reduce(reduce(initialState({ via: 'polling' }), { type: 'merchant', name: 'Shop', mode: 'test', currency: 'usd' }), { type: 'readers', readers: [reader()] });
  const press = (s: CounterState, input: string, key: KeyInfo = {}): CounterState => {
    const intent = intentFor(s, input, key);
    return intent?.kind === 'dispatch' ? reduce(s, intent.action) : s;
  };
  const keys = (s: CounterState, ...presses: (string | KeyInfo)[]) => presses.reduce<CounterState>((acc, p) => (typeof p === 'string' ? press(acc, p) : press(acc, '', p)), s);

  it('+ opens a line where q and letters are text, Enter steps, - removes, Esc clears the cart', () => {
    const s = keys(base(), '+', 'Q', 'u', 'i', 'c', 'h', 'e', { return: true }, '4', { return: true }, '2', { return: true });
    expect(s.charge.cart.lines).toEqual([{ description: 'Quiche', quantity: 2, amount: 400 }]);
    expect(hintsFor(s)).toMatch(/^Enter charge the cart · \+ add item · - remove last/);
    expect(intentFor(s, '', { return: true })).toEqual({ kind: 'start_charge' });
    expect(intentFor(s, '5', {})).toMatchObject({ action: { type: 'notice', text: expect.stringContaining('The cart sets the amount') } });
    const typingQ = keys(s, '+', 'q');
    expect(typingQ.charge.cart.draft?.text).toBe('q');
    expect(keys(s, '-').charge.cart.lines).toEqual([]);
    expect(keys(s, { escape: true }).charge.cart).toEqual(emptyCart());
    expect(keys(s, '+', 'x', { escape: true }).charge.cart.lines).toHaveLength(1);
  });

  it('+ with an amount typed says to clear it first', () => {
    expect(intentFor(keys(base(), '5'), '+', {})).toMatchObject({ action: { type: 'notice' } });
  });
});
