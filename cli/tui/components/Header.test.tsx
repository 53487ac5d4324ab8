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
});
