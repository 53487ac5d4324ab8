import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { emptyCart, reduceCart, type CartAction } from '../cart.js';
import { theme } from '../theme.js';
import { CartView } from './CartView.js';

const enter: CartAction = { type: 'cart_next' };
const type = (text: string): CartAction => ({ type: 'cart_input', text });
const cartOf = (currency: string, ...actions: CartAction[]) => actions.reduce((c, a) => reduceCart(c, a, currency), emptyCart());
const frame = (currency: string, ...actions: CartAction[]) => render(<CartView cart={cartOf(currency, ...actions)} currency={currency} theme={theme(false)} />).lastFrame() ?? '';

describe('CartView', () => {
  it('lists the lines with their prices and the running total in money', () => {
    const f = frame('usd', { type: 'cart_open' }, type('Coffee'), enter, type('3.50'), enter, type('2'), enter, { type: 'cart_open' }, type('Bagel'), enter, type('2.50'), enter, enter);
    expect(f).toContain('Cart  2 lines');
    expect(f).toMatch(/2 × Coffee\s+@\s+\$3\.50\s+\$7\.00/);
    expect(f).toMatch(/1 × Bagel\s+@\s+\$2\.50\s+\$2\.50/);
    expect(f).toContain('Total   $9.50  USD');
  });

  it('shows the line being typed, step by step, and an error', () => {
    expect(frame('usd', { type: 'cart_open' }, type('Tea'))).toContain('New line  Description: Tea_');
    expect(frame('usd', { type: 'cart_open' }, type('Tea'), enter, type('2'))).toContain('New line  Tea · Unit price: 2_');
    expect(frame('usd', { type: 'cart_open' }, type('Tea'), enter, type('2'), enter)).toContain('New line  Tea @ $2.00 · Quantity: _  (Enter alone: 1)');
    expect(frame('jpy', { type: 'cart_open' }, type('Tea'), enter, type('2.5'), enter)).toContain('JPY has no decimals');
  });

  it('shows the last lines of a long cart and says how many are above', () => {
    const actions: CartAction[] = [];
    for (let i = 1; i <= 10; i += 1) actions.push({ type: 'cart_open' }, type(`Item ${i}`), enter, type('1'), enter, enter);
    const f = frame('eur', ...actions);
    expect(f).toContain('… 3 more above');
    expect(f).not.toContain('Item 3 ');
    expect(f).toContain('Item 10');
    expect(f).toContain('Total   €10.00  EUR');
  });
});
