/**
 * A location's local time: its IANA time zone and the hour its business day ends. Receipts, the
 * counter's Day view and the close-out read times through these, never through the machine's
 * zone or UTC (docs/terminal.md, "Local time").
 */

/** The zone a location without one uses: the machine's own, as the operating system sets it. */
export function machineTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/**
 * An IANA zone name ("America/Los_Angeles", "Europe/Paris", "UTC") the runtime knows. Offsets
 * ("+01:00") and abbreviations ("PST") are refused: they do not follow daylight saving time.
 */
export function isTimeZone(name: string): boolean {
  if (!/^(?:UTC|Etc\/UTC|[A-Za-z]+(?:\/[A-Za-z0-9_+-]+)+)$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** "HH:MM", 00:00 to 23:59: when a location's business day ends (and the next one starts). */
export const DAY_END_PATTERN = /^([01]\d|2[0-3]):([0-5]\d)$/;

export const DEFAULT_DAY_ENDS_AT = '00:00';

export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formatters.set(timeZone, f);
  }
  return f;
}

/** The wall clock in `timeZone` at `ms`. */
export function wallClock(ms: number, timeZone: string): WallClock {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(ms))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour! % 24, minute: parts.minute!, second: parts.second! };
}

/** The zone's short name at that moment ("PST", "CEST", or "GMT+2" where it has none). */
export function zoneAbbreviation(ms: number, timeZone: string): string {
  const part = new Intl.DateTimeFormat('en-US', { timeZone, timeZoneName: 'short' }).formatToParts(new Date(ms)).find((p) => p.type === 'timeZoneName');
  return part?.value ?? timeZone;
}

/**
 * The moment the wall clock in `timeZone` reads the given local time. In a daylight-saving gap the
 * first moment after it is taken; in an overlap, the earlier one.
 */
export function zonedEpoch(local: Omit<WallClock, 'second'> & { second?: number }, timeZone: string): number {
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second ?? 0);
  // The wall clock at `ms` read as if it were UTC: equal to `asUtc` exactly when `ms` is a moment the clock reads it.
  const reads = (ms: number) => {
    const w = wallClock(ms, timeZone);
    return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  };
  // The zone's offset at the naive guess, then at the first answer: one of the two is right
  // unless the local time falls in a gap.
  const first = asUtc - (reads(asUtc) - asUtc);
  const second = asUtc - (reads(first) - first);
  const exact = [first, second].filter((ms) => reads(ms) === asUtc);
  if (exact.length > 0) return Math.min(...exact);
  // In a gap the two guesses straddle it: the first second whose wall clock reads past the local time.
  let lo = Math.min(first, second);
  let hi = Math.max(first, second);
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (reads(mid) >= asUtc) hi = mid;
    else lo = mid;
  }
  return hi;
}

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * The business day (YYYY-MM-DD) `ms` belongs to, when days end at `dayEndsAt` in `timeZone`: the
 * one whose bounds (businessDayBounds, the one rule) hold it, so the two never disagree, not even
 * in the hour a clock repeats when daylight saving time ends.
 */
export function businessDate(ms: number, timeZone: string, dayEndsAt: string = DEFAULT_DAY_ENDS_AT): string {
  const w = wallClock(ms, timeZone);
  const calendar = ymd(w.year, w.month, w.day);
  const { start, end } = businessDayBounds(calendar, timeZone, dayEndsAt);
  // Before the day's end hour, the moment still belongs to the previous calendar day's business.
  if (ms < start) return ymd(w.year, w.month, w.day - 1);
  if (ms >= end) return ymd(w.year, w.month, w.day + 1);
  return calendar;
}

/** The date of year, month and day, as YYYY-MM-DD (a day past the month's end rolls over). */
function ymd(year: number, month: number, day: number): string {
  const d = new Date(Date.UTC(year, month - 1, day));
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

/** Business day `date` [start, end) as epoch ms: from `dayEndsAt` on that date to `dayEndsAt` the next, local time. */
export function businessDayBounds(date: string, timeZone: string, dayEndsAt: string = DEFAULT_DAY_ENDS_AT): { start: number; end: number } {
  const d = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!d) throw new Error(`not a date: ${date}`);
  const year = Number(d[1]);
  const month = Number(d[2]);
  const day = Number(d[3]);
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) throw new Error(`not a date: ${date}`);
  const [hour, minute] = parseDayEnd(dayEndsAt);
  const next = new Date(Date.UTC(year, month - 1, day + 1));
  return {
    start: zonedEpoch({ year, month, day, hour, minute }, timeZone),
    end: zonedEpoch({ year: next.getUTCFullYear(), month: next.getUTCMonth() + 1, day: next.getUTCDate(), hour, minute }, timeZone),
  };
}

function parseDayEnd(text: string): [number, number] {
  const m = DAY_END_PATTERN.exec(text);
  if (!m) throw new Error(`not a time of day (HH:MM): ${text}`);
  return [Number(m[1]), Number(m[2])];
}
