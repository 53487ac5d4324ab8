/** Timestamps are stored as integer epoch milliseconds and shown as ISO 8601 with an explicit offset. */
export function toIsoTimestamp(epochMs: number): string {
  const iso = new Date(epochMs).toISOString();
  return `${iso.slice(0, -1)}+00:00`;
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
