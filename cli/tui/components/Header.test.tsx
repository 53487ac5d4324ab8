import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { initialState, reduce } from '../state.js';
import { theme } from '../theme.js';
import { Header } from './Header.js';

const base = reduce(initialState({ via: 'polling' }), { type: 'merchant', name: 'Demo Shop', mode: 'test', currency: 'usd' });

describe('Header', () => {
  it('shows the merchant, the test-mode banner, the connection and the tabs', () => {
    const { lastFrame } = render(<Header state={reduce(base, { type: 'connection', status: 'connected' })} theme={theme(false)} />);
    expect(lastFrame()).toContain('Demo Shop');
    expect(lastFrame()).toContain('TEST MODE: simulated cards, no real money moves');
    expect(lastFrame()).toContain('● connected (polling)');
    expect(lastFrame()).toContain('[c Charge]');
  });

  it('says when the connection is lost, and why', () => {
    const { lastFrame } = render(<Header state={reduce(base, { type: 'connection', status: 'lost', error: 'cannot reach http://127.0.0.1:4242' })} theme={theme(false)} />);
    expect(lastFrame()).toContain('⚠ CONNECTION LOST, retrying');
    expect(lastFrame()).toContain('cannot reach http://127.0.0.1:4242');
  });

  it('has no banner in live mode and no escape codes with NO_COLOR', () => {
    const live = reduce(initialState({ via: 'agent' }), { type: 'merchant', name: 'Real Shop', mode: 'live', currency: 'usd' });
    const { lastFrame } = render(<Header state={live} theme={theme(false)} />);
    expect(lastFrame()).not.toContain('TEST MODE');
    expect(lastFrame()).not.toMatch(/\u001b\[/);
  });

  it('says plainly that the till sells cash only while the server is out of reach, with the sales waiting', () => {
    let s = reduce(base, { type: 'connection', status: 'lost', error: 'the agent cannot reach the server' });
    s = reduce(reduce(s, { type: 'cash_only', on: true }), { type: 'offline_sales', waiting: 3, refused: 0, limit: null });
    const { lastFrame } = render(<Header state={s} theme={theme(false)} />);
    expect(lastFrame()).toContain('Offline: cash only · 3 sales waiting to sync');
    expect(lastFrame()).not.toContain('CONNECTION LOST');
    const back = reduce(reduce(s, { type: 'cash_only', on: false }), { type: 'connection', status: 'connected' });
    expect(render(<Header state={back} theme={theme(false)} />).lastFrame()).toContain('Syncing: 3 sales waiting to sync');
    const full = reduce(s, { type: 'offline_sales', waiting: 500, refused: 0, limit: 'Offline limit reached: 500 cash sales are waiting to sync (at most 500). Reconnect the server before taking more sales' });
    expect(render(<Header state={full} theme={theme(false)} width={200} />).lastFrame()).toContain('Offline limit reached: 500 cash sales are waiting to sync');
  });
});
