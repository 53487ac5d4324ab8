import { describe, expect, it } from 'vitest';
import { businessDate, businessDayBounds, isTimeZone, wallClock, zonedEpoch } from './time-zone.js';

describe('local time', () => {
  it('takes IANA zone names only', () => {
    expect(isTimeZone('America/Los_Angeles')).toBe(true);
    expect(isTimeZone('Europe/Paris')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus_Mons')).toBe(false);
    expect(isTimeZone('PST')).toBe(false);
    expect(isTimeZone('+01:00')).toBe(false);
    expect(isTimeZone('')).toBe(false);
  });

  it('finds the moment a wall clock reads a time, across daylight saving', () => {
    expect(zonedEpoch({ year: 2026, month: 11, day: 25, hour: 17, minute: 24 }, 'America/Los_Angeles')).toBe(Date.UTC(2026, 10, 26, 1, 24));
    expect(zonedEpoch({ year: 2026, month: 7, day: 1, hour: 9, minute: 0 }, 'Europe/Paris')).toBe(Date.UTC(2026, 6, 1, 7, 0));
    expect(wallClock(Date.UTC(2026, 6, 1, 7, 0), 'Europe/Paris')).toMatchObject({ hour: 9, minute: 0, day: 1 });
  });

  it('counts a night past midnight with the business day it began when the day ends at 04:00', () => {
    const zone = 'America/Los_Angeles';
    const at = (h: number, d = 26) => zonedEpoch({ year: 2026, month: 11, day: d, hour: h, minute: 30 }, zone);
    expect(businessDate(at(1), zone, '04:00')).toBe('2026-11-25');
    expect(businessDate(at(5), zone, '04:00')).toBe('2026-11-26');
    expect(businessDate(at(1), zone)).toBe('2026-11-26');
    const { start, end } = businessDayBounds('2026-11-25', zone, '04:00');
    expect(start).toBe(zonedEpoch({ year: 2026, month: 11, day: 25, hour: 4, minute: 0 }, zone));
    expect(end - start).toBe(24 * 3_600_000);
    // The day summer time ends in Paris is 25 hours long.
    const paris = businessDayBounds('2026-10-25', 'Europe/Paris');
    expect(paris.end - paris.start).toBe(25 * 3_600_000);
    expect(() => businessDayBounds('2026-02-30', zone)).toThrow(/not a date/);
  });
});
