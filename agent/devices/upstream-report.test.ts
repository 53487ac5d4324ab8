import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DeviceState } from '../../shared/agent-protocol.js';
import { AgentUpMessageSchema, type AgentUpMessage } from '../../shared/agent-upstream.js';
import { DeviceReports } from './upstream-report.js';

const printer = (over: Partial<DeviceState> = {}): DeviceState => ({
  id: 'printer',
  kind: 'receipt_printer',
  target: '/dev/ttyS0',
  status: 'online',
  last_seen_at: new Date().toISOString(),
  last_error: null,
  paper: 'ok',
  cover_open: false,
  drawer_open: false,
  queued: 0,
  ...over,
});

describe('device reports upstream', () => {
  let state: DeviceState[];
  let sent: AgentUpMessage[];
  let up: boolean;
  let reports: DeviceReports;

  beforeEach(() => {
    vi.useFakeTimers();
    state = [printer()];
    sent = [];
    up = true;
    reports = new DeviceReports(
      () => state,
      (message) => {
        if (up) sent.push(message);
        return up;
      },
      200,
    );
  });
  afterEach(() => {
    reports.stop();
    vi.useRealTimers();
  });

  it('sends the whole list on welcome, in the shape the server accepts, without the agent-clock last_seen_at', () => {
    reports.welcome();
    expect(sent).toHaveLength(1);
    expect(AgentUpMessageSchema.safeParse(sent[0]).success).toBe(true);
    expect(sent[0]).toEqual({ type: 'devices', devices: [expect.not.objectContaining({ last_seen_at: expect.anything() })] });
  });

  it('coalesces a burst of changes into one message, and says nothing when only last_seen_at moved', () => {
    reports.welcome();
    state = [printer({ queued: 1 })];
    reports.changed();
    state = [printer({ queued: 2 })];
    reports.changed();
    state = [printer({ queued: 1, last_seen_at: new Date(Date.now() + 500).toISOString() })];
    reports.changed();
    vi.advanceTimersByTime(199);
    expect(sent).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(sent).toHaveLength(2);
    expect(sent[1]).toMatchObject({ devices: [{ queued: 1 }] });
    for (let i = 0; i < 10; i += 1) {
      state = [printer({ queued: 1, last_seen_at: new Date(Date.now() + i * 500).toISOString() })];
      reports.changed();
      vi.advanceTimersByTime(500);
    }
    expect(sent).toHaveLength(2);
  });

  it('cuts words the server would refuse, and sends again on the next welcome what a down link missed', () => {
    up = false;
    state = [printer({ status: 'offline', last_error: 'x'.repeat(2_000), paper: null, cover_open: null, drawer_open: null })];
    reports.changed();
    vi.advanceTimersByTime(200);
    expect(sent).toHaveLength(0);
    up = true;
    reports.welcome();
    expect(AgentUpMessageSchema.safeParse(sent[0]).success).toBe(true);
    expect(sent[0]).toMatchObject({ devices: [{ status: 'offline', last_error: 'x'.repeat(500) }] });
    reports.welcome();
    expect(sent).toHaveLength(2);
  });
});
