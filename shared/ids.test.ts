import { describe, expect, it } from 'vitest';
import { isUuid, newIdentity, newReference, randomBase62, timeOrderedUuid, timePrefix } from './ids.js';

describe('ids', () => {
  it('makes a uuid and a typed reference together', () => {
    const { id, reference } = newIdentity('transaction');
    expect(isUuid(id)).toBe(true);
    expect(reference).toMatch(/^txn_[0-9A-Za-z]{20}$/);
    expect(newIdentity('refund').reference).toMatch(/^re_/);
    expect(newIdentity('checkoutSession').reference).toMatch(/^cs_/);
    expect(newIdentity('paymentLink').reference).toMatch(/^pl_/);
  });

  it('makes ids that sort by the time they were made, as text, and differ within one millisecond', () => {
    const times = [0, 1, 61, 62, 1_795_000_000_000, 1_795_000_000_001, 1_795_000_060_000, 62 ** 8 - 1];
    const prefixes = times.map((t) => timePrefix(t));
    expect(prefixes.every((p) => /^[0-9A-Za-z]{8}$/.test(p))).toBe(true);
    expect([...prefixes].sort()).toEqual(prefixes);
    expect(new Set(prefixes).size).toBe(times.length);

    const earlier = [newReference('event', 1_795_000_000_000), timeOrderedUuid(1_795_000_000_000)];
    const later = [newReference('event', 1_795_000_000_001), timeOrderedUuid(1_795_000_000_001)];
    for (const i of [0, 1]) expect(earlier[i]! < later[i]!).toBe(true);
    expect(later[0]).toMatch(/^evt_[0-9A-Za-z]{20}$/);
    // Within one millisecond the random part still tells them apart.
    const sameMs = Array.from({ length: 1_000 }, () => newReference('transaction', 1_795_000_000_000));
    expect(new Set(sameMs).size).toBe(1_000);
    expect(new Set(Array.from({ length: 1_000 }, () => timeOrderedUuid(1_795_000_000_000))).size).toBe(1_000);
  });

  it('draws base62 characters without bias toward the start of the alphabet', () => {
    const counts = new Map<string, number>();
    for (const ch of randomBase62(62 * 400)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Folding bytes 248–255 would give the first eight letters ~3 % more; allow noise, not that.
    const mean = 400;
    for (const n of counts.values()) expect(Math.abs(n - mean)).toBeLessThan(mean * 0.35);
  });
});
