import { createHash } from 'node:crypto';
import type { AuditEntry } from './api/types.js';

/**
 * The audit trail's hash chain, one function for the server that writes it and for whoever checks
 * it (`pos audit verify`, over the API). Each entry's hash is SHA-256 over a canonical text of the
 * entry, which includes the hash of the entry before it (`prev_hash`); the first entry of a
 * merchant's and mode's chain follows GENESIS_HASH.
 */

export const GENESIS_HASH = '0'.repeat(64);

/**
 * The fields an entry's hash covers, in this order. Named rather than "every field", so a field the
 * API adds later does not change the hash of entries written before it.
 */
const HASHED_FIELDS = ['id', 'seq', 'mode', 'created_at', 'key', 'request', 'operation', 'target_id', 'object_id', 'status', 'details', 'prev_hash'] as const;

/** Names the text format, so a different canonical form later cannot be mistaken for this one. */
const FORMAT = 'pos-audit-v1';

export type HashedEntry = Pick<AuditEntry, (typeof HASHED_FIELDS)[number]>;

/** JSON with object keys sorted at every level: the same entry always gives the same text. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
}

/** The text an entry's hash is taken over. */
export function canonicalAuditText(entry: HashedEntry): string {
  return `${FORMAT}\n${HASHED_FIELDS.map((field) => `${field}=${canonicalJson(entry[field])}`).join('\n')}`;
}

export function auditEntryHash(entry: HashedEntry): string {
  return createHash('sha256').update(canonicalAuditText(entry)).digest('hex');
}

/** The first thing wrong with a chain, by entry. */
export type ChainProblem =
  /** No entry at `seq`: removed (or never committed, which the writer makes impossible). */
  | { kind: 'missing'; seq: number; next: AuditEntry | null }
  /** The entry's content does not give its hash: it was edited. */
  | { kind: 'altered'; entry: AuditEntry }
  /** The entry's `prev_hash` is not the hash of the entry before it: that one was rewritten, or this link was. */
  | { kind: 'unlinked'; entry: AuditEntry; previous: AuditEntry | null }
  /** The head hash recorded earlier is nowhere in the chain: entries up to it were rewritten or removed. */
  | { kind: 'head_not_found'; hash: string };

export interface ChainReport {
  /** Entries checked. */
  entries: number;
  /** The newest entry: keep its hash somewhere else to check against later (`--expect-head`). */
  head: { seq: number; hash: string; id: string } | null;
  problem: ChainProblem | null;
}

export interface VerifyOptions {
  /** How many entries the chain should hold (the server's head): entries missing at the newest end are found too. */
  expectedCount?: number;
  /** A head hash recorded earlier: it must still be in the chain. */
  expectHead?: string;
}

/**
 * Recomputes a chain from its entries (any order; the same entry seen twice, as paging a growing
 * list can return, counts once) and names the first entry that was altered or removed.
 */
export function verifyAuditChain(input: readonly AuditEntry[], options: VerifyOptions = {}): ChainReport {
  const bySeq = new Map<number, AuditEntry>();
  for (const entry of input) if (!bySeq.has(entry.seq)) bySeq.set(entry.seq, entry);
  const entries = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
  const report = (problem: ChainProblem | null): ChainReport => {
    const last = entries.at(-1);
    return { entries: entries.length, head: last ? { seq: last.seq, hash: last.hash, id: last.id } : null, problem };
  };
  let previous: AuditEntry | null = null;
  let expectedSeq = 1;
  for (const entry of entries) {
    if (entry.seq !== expectedSeq) return report({ kind: 'missing', seq: expectedSeq, next: entry });
    if (auditEntryHash(entry) !== entry.hash) return report({ kind: 'altered', entry });
    if (entry.prev_hash !== (previous?.hash ?? GENESIS_HASH)) return report({ kind: 'unlinked', entry, previous });
    previous = entry;
    expectedSeq += 1;
  }
  if (options.expectedCount !== undefined && options.expectedCount >= expectedSeq) return report({ kind: 'missing', seq: expectedSeq, next: null });
  if (options.expectHead !== undefined && !entries.some((e) => e.hash === options.expectHead)) return report({ kind: 'head_not_found', hash: options.expectHead });
  return report(null);
}

/** One sentence for a problem, naming the entry. */
export function describeChainProblem(problem: ChainProblem): string {
  switch (problem.kind) {
    case 'missing':
      return problem.next
        ? `entry #${problem.seq} is missing: removed from the chain (the next one present is #${problem.next.seq}, ${problem.next.id})`
        : `entry #${problem.seq} is missing: removed from the newest end of the chain`;
    case 'altered':
      return `entry #${problem.entry.seq} (${problem.entry.id}) was altered: its content does not give its hash`;
    case 'unlinked':
      return `entry #${problem.entry.seq} (${problem.entry.id}) does not follow #${problem.entry.seq - 1}${problem.previous ? ` (${problem.previous.id})` : ''}: one of them was rewritten`;
    case 'head_not_found':
      return `the head recorded earlier (${problem.hash}) is not in the chain: entries up to it were rewritten or removed`;
  }
}
