/**
 * The last two stamps made, newest first. A request writes the same one or two times over and over
 * (a payment's created_at and updated_at, presented for its answer and each of its events, then
 * read back from each of them as they are packed), and a Date and its toISOString cost more than
 * the rest of presenting a time.
 */
let lastMs = Number.NaN;
let lastText = '';
let olderMs = Number.NaN;
let olderText = '';

/** Timestamps are stored as integer epoch milliseconds and shown as ISO 8601 with an explicit offset. */
export function toIsoTimestamp(epochMs: number): string {
  // NaN equals nothing, so a time that is not one still throws its RangeError, before anything is kept.
  if (epochMs === lastMs) return lastText;
  const text = epochMs === olderMs ? olderText : `${new Date(epochMs).toISOString().slice(0, -1)}+00:00`;
  olderMs = lastMs;
  olderText = lastText;
  lastMs = epochMs;
  lastText = text;
  return text;
}

export function toIsoOrNull(epochMs: number | null | undefined): string | null {
  // Number(): PostgreSQL hands bigint columns back as strings.
  return epochMs === null || epochMs === undefined ? null : toIsoTimestamp(Number(epochMs));
}

/** The clock is a dependency so tests and the stale-payment sweep can control time. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
