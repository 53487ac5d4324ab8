import { describe, expect, it } from 'vitest';
import { isUuid, newIdentity, randomBase62 } from './ids.js';

describe('ids', () => {
  it('makes a uuid and a typed reference together', () => {
    const { id, reference } = newIdentity('transaction');
    expect(isUuid(id)).toBe(true);
    expect(reference).toMatch(/^txn_[0-9A-Za-z]{20}$/);
    expect(newIdentity('refund').reference).toMatch(/^re_/);
    expect(newIdentity('checkoutSession').reference).toMatch(/^cs_/);
    expect(newIdentity('paymentLink').reference).toMatch(/^pl_/);
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
