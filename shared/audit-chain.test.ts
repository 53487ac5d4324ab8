import { describe, expect, it } from 'vitest';
import { auditEntryHash, canonicalAuditText, describeChainProblem, GENESIS_HASH, verifyAuditChain } from './audit-chain.js';
import type { AuditEntry } from './api/types.js';

/** A chain of `n` entries, each hashed over the one before, as the server writes them. */
function chain(n: number): AuditEntry[] {
  const entries: AuditEntry[] = [];
  for (let seq = 1; seq <= n; seq++) {
    const entry: Omit<AuditEntry, 'hash'> = {
      id: `aud_${seq}`,
      object: 'audit_entry',
      seq,
      mode: 'test',
      created_at: `2026-11-21T12:00:0${seq % 10}.000+00:00`,
      key: { id: 'key-1', type: 'secret', last4: 'abcd' },
      request: { id: `req_${seq}`, idempotency_key: seq % 2 ? `k${seq}` : null },
      operation: 'POST /v1/transactions/{id}/refunds',
      target_id: 'txn_1',
      object_id: `re_${seq}`,
      status: 201,
      details: seq === 2 ? { staff: 'alex', reason: 'no_sale' } : null,
      prev_hash: entries.at(-1)?.hash ?? GENESIS_HASH,
    };
    entries.push({ ...entry, hash: auditEntryHash(entry) });
  }
  return entries;
}

describe('the audit hash chain', () => {
  it('hashes the same entry the same way whatever the order of its keys', () => {
    const [, second] = chain(2);
    const reordered = { ...second!, details: { reason: 'no_sale', staff: 'alex' }, key: { last4: 'abcd', type: 'secret' as const, id: 'key-1' } };
    expect(canonicalAuditText(reordered)).toBe(canonicalAuditText(second!));
    // A field the API adds later is not hashed: older entries keep verifying.
    expect(auditEntryHash({ ...second!, ...{ extra: 1 } })).toBe(second!.hash);
  });

  it('verifies an intact chain in any order, an entry seen twice counting once', () => {
    const entries = chain(5);
    const report = verifyAuditChain([...entries].reverse().concat(entries[2]!), { expectedCount: 5, expectHead: entries[3]!.hash });
    expect(report).toEqual({ entries: 5, head: { seq: 5, hash: entries[4]!.hash, id: 'aud_5' }, problem: null });
  });

  it('names an edited entry, one rewritten with a new hash, a removed one and a missing head', () => {
    const entries = chain(5);
    const edited = entries.map((e) => (e.seq === 3 ? { ...e, status: 200 } : e));
    expect(describeChainProblem(verifyAuditChain(edited).problem!)).toBe('entry #3 (aud_3) was altered: its content does not give its hash');
    const rewritten = entries.map((e) => {
      if (e.seq !== 3) return e;
      const changed = { ...e, status: 200 };
      return { ...changed, hash: auditEntryHash(changed) };
    });
    expect(verifyAuditChain(rewritten).problem).toMatchObject({ kind: 'unlinked', entry: { seq: 4 }, previous: { seq: 3 } });
    expect(verifyAuditChain(entries.filter((e) => e.seq !== 1)).problem).toMatchObject({ kind: 'missing', seq: 1, next: { seq: 2 } });
    expect(verifyAuditChain(entries.slice(0, 4), { expectedCount: 5 }).problem).toEqual({ kind: 'missing', seq: 5, next: null });
    expect(verifyAuditChain(entries, { expectHead: 'f'.repeat(64) }).problem).toEqual({ kind: 'head_not_found', hash: 'f'.repeat(64) });
  });
});
