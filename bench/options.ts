/** A benchmark option that must be a positive integer (`1_000_000` and `1,000,000` read as 1000000), or its default when absent. */
export function positiveOption(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw.replaceAll('_', '').replaceAll(',', ''));
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${raw}`);
  return n;
}
