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

  it('keeps a night past midnight in one business day, across a month and a year end, far from UTC', () => {
    const zone = 'Pacific/Auckland';
    const local = (year: number, month: number, day: number, hour: number, minute = 0) => zonedEpoch({ year, month, day, hour, minute }, zone);
    const { start, end } = businessDayBounds('2026-12-31', zone, '04:00');
    // 04:00 NZDT (UTC+13) is 15:00 UTC the day before.
    expect(start).toBe(Date.UTC(2026, 11, 30, 15));
    expect(end).toBe(Date.UTC(2026, 11, 31, 15));
    for (const at of [local(2026, 12, 31, 4), local(2026, 12, 31, 23, 30), local(2027, 1, 1, 0, 30), local(2027, 1, 1, 3, 59)]) {
      expect(businessDate(at, zone, '04:00')).toBe('2026-12-31');
      expect(at >= start && at < end).toBe(true);
    }
    expect(businessDate(local(2027, 1, 1, 4), zone, '04:00')).toBe('2027-01-01');
    expect(businessDate(local(2026, 12, 31, 3, 59), zone, '04:00')).toBe('2026-12-30');
  });

  it('makes the business days around daylight saving time 23 and 25 hours long, and agrees with its bounds in the hour that repeats', () => {
    const zone = 'America/Los_Angeles';
    const hours = (date: string, dayEndsAt: string) => {
      const b = businessDayBounds(date, zone, dayEndsAt);
      return (b.end - b.start) / 3_600_000;
    };
    // Clocks go forward at 02:00 on 8 March 2026 and back at 02:00 on 1 November 2026.
    expect(hours('2026-03-07', '04:00')).toBe(23);
    expect(hours('2026-03-08', '04:00')).toBe(24);
    expect(hours('2026-10-31', '04:00')).toBe(25);
    // A day ending at a time the spring gap skips ends when the clock comes back: 03:00 PDT.
    expect(businessDayBounds('2026-03-07', zone, '02:30').end).toBe(Date.UTC(2026, 2, 8, 10));
    // A day ending at a time the autumn repeats ends at its first occurrence (01:30 PDT).
    const repeated = businessDayBounds('2026-10-31', zone, '01:30');
    expect(repeated.end).toBe(Date.UTC(2026, 10, 1, 8, 30));
    // 01:15 the second time (PST) is after that end: the next business day, as its bounds say.
    const secondPass = Date.UTC(2026, 10, 1, 9, 15);
    expect(wallClock(secondPass, zone)).toMatchObject({ hour: 1, minute: 15 });
    expect(businessDate(secondPass, zone, '01:30')).toBe('2026-11-01');
    const next = businessDayBounds('2026-11-01', zone, '01:30');
    expect(secondPass >= next.start && secondPass < next.end).toBe(true);
    expect((next.end - next.start) / 3_600_000).toBe(25);
  });
});
