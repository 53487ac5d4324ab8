import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SerialBinding, SerialConnection } from '../ports.js';
import { DeviceLink } from './link.js';

const connection = (): SerialConnection => ({ write: () => undefined, onData: () => undefined, onClose: () => undefined, close: async () => undefined });

describe('a device link', () => {
  let opened: string[];
  let link: DeviceLink | undefined;
  const binding: SerialBinding = {
    list: async () => [],
    exists: () => true,
    open: async (path) => {
      opened.push(path);
      return connection();
    },
  };

  beforeEach(() => {
    vi.useFakeTimers();
    opened = [];
  });

  afterEach(async () => {
    await link?.stop();
    vi.useRealTimers();
  });

  it('opens a device that is there when it starts, before its first poll', async () => {
    const events = { opened: vi.fn(), closed: vi.fn(), tick: vi.fn() };
    link = new DeviceLink({ serial: binding, tcp: { open: () => Promise.reject(new Error('no tcp')) }, logger: pino({ level: 'silent' }) }, { kind: 'path', path: '/dev/printer' }, 9600, events);
    link.start();
    // No timer has fired: only promises settle here.
    await vi.advanceTimersByTimeAsync(0);
    expect(opened).toEqual(['/dev/printer']);
    expect(events.opened).toHaveBeenCalledTimes(1);
    expect(link.connection).toBeDefined();
  });
});
