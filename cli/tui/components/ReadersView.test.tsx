import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { reader } from '../fixtures.js';
import { initialState, reduce } from '../state.js';
import { theme } from '../theme.js';
import { ReadersView } from './ReadersView.js';

describe('ReadersView', () => {
  it('lists readers with presence, last seen and activity', () => {
    const s = reduce(initialState({ via: 'agent' }), {
      type: 'readers',
      readers: [reader({ activity: 'waiting_for_card' }), reader({ id: 'r-2', name: 'Bar', status: 'offline', last_seen_at: '2026-11-21T11:55:00.000Z', processor_terminal_id: 'tmr_Bar' })],
    });
    const f = render(<ReadersView state={s} theme={theme(false)} now={Date.parse('2026-11-21T12:00:10.000Z')} />).lastFrame() ?? '';
    expect(f).toMatch(/› Till 1\s+● online\s+10s ago\s+waiting for card\s+tmr_Till1/);
    expect(f).toMatch(/ {2}Bar\s+○ offline\s+5m ago\s+—\s+tmr_Bar/);
  });

  it('says how to register the first reader', () => {
    expect(render(<ReadersView state={initialState({ via: 'polling' })} theme={theme(false)} />).lastFrame()).toContain('pos readers register');
  });
});
