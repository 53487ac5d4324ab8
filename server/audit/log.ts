import { sql } from 'kysely';
import { auditEntryHash, GENESIS_HASH } from '../../shared/audit-chain.js';
import { newReference } from '../../shared/ids.js';
import { toIsoTimestamp, type Clock } from '../../shared/time.js';
import type { AuditLogTable, Mode } from '../db/schema.js';
import { insertRow, Prepared } from '../db/prepared.js';
import type { Store, Trx } from '../db/store.js';
import { offsetPage, type Page, type PageRequest, seqPage } from '../pagination.js';
import type { Scope } from '../accounts/scope.js';
import type { AuditEntryView } from '../../shared/contract/audit.js';
import type { ActingKey, RequestOrigin } from './origin.js';

/**
 * The audit trail: who changed what, through which request. One entry per change made through
 * /v1 (and per drawer opening an agent reports), chained per merchant and mode: each entry's hash
 * covers the hash of the one before, so editing or removing one shows (shared/audit-chain.ts).
 * That `prev_hash` is not stored: it is the stored hash of the entry at the seq before (entries
 * are never deleted), read with the entry. Whoever rewrites an entry and its hash then breaks the
 * hash of the entry after it, as a stored link would have been broken.
 *
 * Writers take their place in the chain by locking its head row first (an upsert, which holds the
 * row until commit on PostgreSQL; SQLite's transactions run one at a time), so entries of one
 * merchant written at once on several instances line up one after another and never fork. Taking
 * the head must be the last lock a transaction takes (writers call `recordAudit` last), so a
 * writer holding it never waits for another lock: no deadlock, and the head is held only for the
 * commit.
 */

/** What one entry records, beyond its place in the chain. */
export interface AuditFacts {
  key: ActingKey | null;
  requestId: string | null;
  idempotencyKey: string | null;
  operation: string;
  targetId: string | null;
  objectId: string | null;
  status: number;
  details?: Record<string, unknown> | null;
}

type ChainArgs = { merchantId: string; mode: Mode };

/** Takes the next place: the new seq and the hash of the entry now before it. */
const takeHead = new Prepared<ChainArgs & { genesis: string }, { seq: number; hash: string }>((db, arg) =>
  db
    .insertInto('audit_heads')
    .values({ merchant_id: arg('merchantId'), mode: arg('mode'), seq: 1, hash: arg('genesis') })
    .onConflict((oc) => oc.columns(['merchant_id', 'mode']).doUpdateSet((eb) => ({ seq: eb('audit_heads.seq', '+', 1) })))
    .returning(['seq', 'hash']),
);

const moveHead = new Prepared<ChainArgs & { hash: string }, never>((db, arg) =>
  db.updateTable('audit_heads').set({ hash: arg('hash') }).where('merchant_id', '=', arg('merchantId')).where('mode', '=', arg('mode')),
);

const readHead = new Prepared<ChainArgs, { seq: number }>((db, arg) => db.selectFrom('audit_heads').select('seq').where('merchant_id', '=', arg('merchantId')).where('mode', '=', arg('mode')));

/** An entry as stored, with the hash of the entry before it (GENESIS_HASH before the first). */
export type LinkedAuditRow = Omit<AuditLogTable, 'hash'> & { hash?: string; prev_hash: string };

export function presentAuditEntry(row: LinkedAuditRow): AuditEntryView {
  return {
    id: row.id,
    object: 'audit_entry',
    seq: Number(row.seq),
    mode: row.mode,
    created_at: toIsoTimestamp(Number(row.created_at)),
    key: row.key_id && row.key_type && row.key_last4 !== null ? { id: row.key_id, type: row.key_type as ActingKey['type'], last4: row.key_last4 } : null,
    request: { id: row.request_id, idempotency_key: row.idempotency_key },
    operation: row.operation,
    target_id: row.target_id,
    object_id: row.object_id,
    status: Number(row.status),
    details: row.details === null ? null : (JSON.parse(row.details) as Record<string, unknown>),
    prev_hash: row.prev_hash,
    hash: row.hash ?? '',
  };
}

/**
 * Writes one entry inside the caller's transaction, so it exists if and only if the change does.
 * Call it last in the transaction (see above). `holding` runs once the head is held, before the
 * entry is written: what it reads no other writer of the chain can change until the commit.
 */
export async function recordAudit(
  trx: Trx,
  scope: Pick<Scope, 'merchantId' | 'mode'>,
  facts: AuditFacts,
  now: number,
  holding?: () => Promise<void>,
): Promise<AuditLogTable> {
  const head = await takeHead.first(trx, { merchantId: scope.merchantId, mode: scope.mode, genesis: GENESIS_HASH });
  if (!head) throw new Error('the audit chain head returned no row');
  await holding?.();
  const stored: Omit<AuditLogTable, 'hash'> = {
    id: newReference('audit'),
    merchant_id: scope.merchantId,
    mode: scope.mode,
    seq: Number(head.seq),
    created_at: now,
    key_id: facts.key?.id ?? null,
    key_type: facts.key?.type ?? null,
    key_last4: facts.key?.last4 ?? null,
    request_id: facts.requestId,
    idempotency_key: facts.idempotencyKey,
    operation: facts.operation,
    target_id: facts.targetId,
    object_id: facts.objectId,
    status: facts.status,
    details: facts.details ? JSON.stringify(facts.details) : null,
  };
  const row: AuditLogTable = { ...stored, hash: auditEntryHash(presentAuditEntry({ ...stored, prev_hash: head.hash })) };
  await insertRow(trx, 'audit_log', row);
  await moveHead.execute(trx, { merchantId: scope.merchantId, mode: scope.mode, hash: row.hash });
  return row;
}

/** An origin's facts with the outcome a request came to. */
export function factsOf(origin: RequestOrigin, outcome: { status: number; objectId: string | null }): AuditFacts {
  return {
    key: origin.key,
    requestId: origin.requestId,
    idempotencyKey: origin.idempotencyKey,
    operation: origin.operation,
    targetId: origin.targetId,
    objectId: outcome.objectId ?? origin.targetId,
    status: outcome.status,
  };
}

/**
 * The id of the object an answer returned (`{data: {id}}` or `{id}`), for a success; null
 * otherwise, when the entry names the object the path named instead.
 */
export function answeredObjectId(status: number, body: unknown): string | null {
  if (status >= 300 || body === null || typeof body !== 'object') return null;
  const data = (body as { data?: unknown }).data;
  const object = data !== null && typeof data === 'object' && !Array.isArray(data) ? data : body;
  const id = (object as { id?: unknown }).id;
  return typeof id === 'string' ? id : null;
}

export interface AuditFilters {
  objectId?: string | undefined;
  keyId?: string | undefined;
  /** Epoch ms, inclusive. */
  from?: number | undefined;
  to?: number | undefined;
}

/** A cash drawer opened at a counter, as its agent reports it (shared/agent-upstream.ts). */
export interface DrawerOpening {
  id: string;
  reason: string;
  staff: string | null;
  transaction_id: string | null;
  opened_at: number;
}

export const DRAWER_OPERATION = 'agent drawer_opened';

/** An agent's report that is in the trail already: its unit is rolled back. */
class AlreadyWritten extends Error {
  constructor() {
    super('this report is in the audit trail already');
  }
}

export class AuditLog {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** Writes an entry in a transaction of its own: for changes whose own transaction could not hold it. */
  async record(scope: Pick<Scope, 'merchantId' | 'mode'>, facts: AuditFacts): Promise<AuditLogTable> {
    return this.store.transaction((trx) => recordAudit(trx, scope, facts, this.clock.now()));
  }

  /**
   * Drawer openings an agent reports, each written once: an agent sends its unacknowledged ones
   * again after a reconnect, and an opening already in the trail (by its idempotency key, made of
   * the agent and the opening's id) is not written twice. Returns the ids now in the trail.
   */
  async drawerOpened(scope: Scope, key: ActingKey, agentId: string, openings: readonly DrawerOpening[], requestId: string): Promise<string[]> {
    const stored: string[] = [];
    for (const opening of openings) {
      const idempotencyKey = `agent_${agentId}_drawer_${opening.id}`;
      // Looked for with the chain's head held, so the same opening sent twice at once (a reconnect
      // to another instance) is still written once; found, the unit is rolled back whole.
      const unlessWritten = async (trx: Trx) => {
        const seen = await trx
          .selectFrom('audit_log')
          .select('id')
          .where('merchant_id', '=', scope.merchantId)
          .where('mode', '=', scope.mode)
          .where('idempotency_key', '=', idempotencyKey)
          .where('operation', '=', sql.lit(DRAWER_OPERATION))
          .executeTakeFirst();
        if (seen) throw new AlreadyWritten();
      };
      const written = this.store.transaction(async (trx) => {
        await recordAudit(
          trx,
          scope,
          {
            key,
            requestId,
            idempotencyKey,
            operation: DRAWER_OPERATION,
            targetId: agentId,
            objectId: opening.transaction_id,
            status: 200,
            details: { agent_id: agentId, reason: opening.reason, staff: opening.staff, transaction_id: opening.transaction_id, opened_at: toIsoTimestamp(opening.opened_at) },
          },
          this.clock.now(),
          () => unlessWritten(trx),
        );
      });
      await written.catch((err: unknown) => {
        if (!(err instanceof AlreadyWritten)) throw err;
      });
      stored.push(opening.id);
    }
    return stored;
  }

  /**
   * Entries newest first. Unfiltered, a page is a range of the chain's seq (the head row counts
   * them), so every page costs the same however long the trail; filtered, a count and an offset.
   */
  async list(scope: Scope, request: PageRequest, filters: AuditFilters = {}): Promise<Page<AuditEntryView>> {
    const db = this.store.db;
    const filtered = filters.objectId !== undefined || filters.keyId !== undefined || filters.from !== undefined || filters.to !== undefined;
    if (!filtered) {
      const total = Number((await readHead.first(db, { merchantId: scope.merchantId, mode: scope.mode }))?.seq ?? 0);
      return this.#linked(scope, await seqPage(db, 'audit_log', scope, request, (row) => row, total));
    }
    let base = db.selectFrom('audit_log').where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode);
    const { objectId, keyId, from, to } = filters;
    if (objectId !== undefined) {
      // As the entries whose own index names the object, and those whose target index does: an OR
      // of the two columns made SQLite walk every entry of the merchant along the chain instead.
      const own = (column: 'object_id' | 'target_id') => db.selectFrom('audit_log').select('seq').where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode).where(column, '=', objectId);
      base = base.where('seq', 'in', own('object_id').union(own('target_id')));
    }
    if (keyId !== undefined) base = base.where('key_id', '=', keyId);
    if (from !== undefined) base = base.where('created_at', '>=', from);
    if (to !== undefined) base = base.where('created_at', '<=', to);
    return this.#linked(scope, await offsetPage(base, (q) => q.selectAll().orderBy('seq', 'desc'), request, (row) => row));
  }

  /**
   * A page of entries presented with the hash of the entry before each: from the page itself where
   * it holds that entry, else read by seq. An entry whose predecessor is gone (removed behind the
   * server's back) links to nothing, which the chain's check names as a missing entry.
   */
  async #linked(scope: Pick<Scope, 'merchantId' | 'mode'>, page: Page<AuditLogTable>): Promise<Page<AuditEntryView>> {
    const hashes = new Map<number, string>([[0, GENESIS_HASH]]);
    for (const row of page.data) hashes.set(Number(row.seq), row.hash);
    const missing = [...new Set(page.data.map((row) => Number(row.seq) - 1))].filter((seq) => !hashes.has(seq));
    if (missing.length > 0) {
      const rows = await this.store.db
        .selectFrom('audit_log')
        .select(['seq', 'hash'])
        .where('merchant_id', '=', scope.merchantId)
        .where('mode', '=', scope.mode)
        .where('seq', 'in', missing)
        .execute();
      for (const row of rows) hashes.set(Number(row.seq), row.hash);
    }
    return { ...page, data: page.data.map((row) => presentAuditEntry({ ...row, prev_hash: hashes.get(Number(row.seq) - 1) ?? '' })) };
  }
}
