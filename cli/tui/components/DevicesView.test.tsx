import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { DeviceState } from '../../../shared/agent-protocol.js';
import { theme } from '../theme.js';
import { DevicesView } from './DevicesView.js';

const printer: DeviceState = {
  id: 'printer', kind: 'receipt_printer', target: '/dev/ttyUSB0', status: 'online', last_seen_at: '2026-11-21T12:00:09.000Z',
  last_error: 'Printer out of paper', paper: 'out', cover_open: false, drawer_open: true, queued: 2,
};
const display: DeviceState = {
  id: 'display', kind: 'customer_display', target: '/dev/ttyUSB1', status: 'offline', last_seen_at: null,
  last_error: 'not connected', paper: null, cover_open: null, drawer_open: null, queued: null,
};

describe('DevicesView', () => {
  it('lists the printer and the display with presence and what is wrong in words', () => {
    const f = render(<DevicesView devices={[printer, display]} theme={theme(false)} now={Date.parse('2026-11-21T12:00:10.000Z')} />).lastFrame() ?? '';
    expect(f).toMatch(/Receipt printer\s+● online\s+1s ago\s+out of paper · drawer open · 2 queued/);
    expect(f).toMatch(/Customer display\s+○ offline\s+never\s+not connected/);
  });

  it('says ready when all is well, and shows nothing without devices', () => {
    const ok = { ...printer, last_error: null, paper: 'ok' as const, drawer_open: false, queued: 0 };
    expect(render(<DevicesView devices={[ok]} theme={theme(false)} />).lastFrame()).toMatch(/Receipt printer\s+● online\s+\S+ ago\s+ready/);
    expect(render(<DevicesView devices={[]} theme={theme(false)} />).lastFrame()).toBe('');
  });
});
