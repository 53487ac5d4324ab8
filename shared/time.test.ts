import { describe, expect, it } from 'vitest';
import { toIsoOrNull, toIsoTimestamp } from './time.js';

describe('toIsoTimestamp', () => {
  it('shows each time as ISO 8601 with an explicit offset, whatever order the times come in', () => {
    const times = [0, 1_795_848_470_109, 1_795_848_470_110, 1_795_848_470_109, 0, 0, 1_795_848_470_110, 253_402_300_799_999];
    for (const ms of times) expect(toIsoTimestamp(ms)).toBe(new Date(ms).toISOString().replace('Z', '+00:00'));
    expect(toIsoTimestamp(1_795_848_470_109)).toBe('2026-11-28T06:47:50.109+00:00');
    expect(toIsoOrNull('1795848470110' as unknown as number)).toBe('2026-11-28T06:47:50.110+00:00');
  });

  it('refuses what is not a time every time, right after the times it shows', () => {
    for (const bad of [Number.NaN, 8.64e15 + 1, Number.POSITIVE_INFINITY]) {
      toIsoTimestamp(1_795_848_470_109);
      expect(() => toIsoTimestamp(bad)).toThrow(RangeError);
      expect(() => toIsoTimestamp(bad)).toThrow(RangeError);
      expect(toIsoTimestamp(1_795_848_470_109)).toBe('2026-11-28T06:47:50.109+00:00');
    }
  });
});
