import { describe, expect, it } from 'vitest';
import { emptyDrawer, reduceDrawer, type DrawerAction, type DrawerState } from './drawer.js';

const run = (...actions: DrawerAction[]): DrawerState => actions.reduce(reduceDrawer, emptyDrawer());
const type = (text: string): DrawerAction[] => [...text].map((ch) => ({ type: 'drawer_input', text: ch }));
const enter: DrawerAction = { type: 'drawer_enter', currency: 'usd' };

describe('counting the drawer', () => {
  it('takes the float, then the counted cash, read like sales ("7,50" is 7.50)', () => {
    const float = run({ type: 'drawer_open', currency: 'usd' }, ...type('100'), enter);
    expect(float).toEqual({ float: 10_000, counted: null, entry: { step: 'counted', text: '', error: null } });
    const counted = run({ type: 'drawer_open', currency: 'usd' }, ...type('100'), enter, ...type('112,50'), enter);
    expect(counted).toEqual({ float: 10_000, counted: 11_250, entry: null });
  });

  it('takes no float on Enter alone, an empty drawer as 0, and offers the last float again', () => {
    expect(run({ type: 'drawer_open', currency: 'usd' }, enter, ...type('0'), enter)).toEqual({ float: 0, counted: 0, entry: null });
    const again = reduceDrawer({ float: 2500, counted: 3000, entry: null }, { type: 'drawer_open', currency: 'usd' });
    expect(again.entry).toEqual({ step: 'float', text: '25.00', error: null });
    expect(reduceDrawer(again, enter)).toMatchObject({ float: 2500, entry: { step: 'counted' } });
  });

  it('says what is wrong in words and keeps the entry open', () => {
    const open = run({ type: 'drawer_open', currency: 'usd' }, enter);
    expect(reduceDrawer(open, enter).entry?.error).toBe('Type the cash counted in the drawer (0 if it is empty).');
    expect(reduceDrawer(open, { type: 'drawer_input', text: 'x' }).entry?.error).toMatch(/"x" is not part of an amount/);
    const decimals = [...type('12.345'), enter].reduce(reduceDrawer, open);
    expect(decimals.entry).toMatchObject({ step: 'counted', text: '12.345', error: 'Counted cash: "12.345" has more than 2 decimals for USD' });
    expect(decimals.counted).toBeNull();
    const thousands = [...type('1,000'), enter].reduce(reduceDrawer, open);
    expect(thousands.entry?.error).toMatch(/^Counted cash: "1,000" has a comma that could separate thousands/);
    const float = run({ type: 'drawer_open', currency: 'jpy' }, ...type('10.5'), { type: 'drawer_enter', currency: 'jpy' });
    expect(float.entry?.error).toMatch(/^Float: JPY has no decimals/);
  });

  it('backspaces, and Esc leaves the last count as it was', () => {
    const counted: DrawerState = { float: 0, counted: 500, entry: null };
    const typing = [{ type: 'drawer_open', currency: 'usd' } as const, enter, ...type('99')].reduce(reduceDrawer, counted);
    expect(reduceDrawer(typing, { type: 'drawer_backspace' }).entry?.text).toBe('9');
    expect(reduceDrawer(typing, { type: 'drawer_close' })).toEqual(counted);
  });
});
