import type { Selectable, SelectQueryBuilder } from 'kysely';
import type { Tables } from './db/schema.js';
import type { Executor } from './db/store.js';
import { readCount } from './db/counters.js';
import type { Scope } from './accounts/scope.js';

/**
 * The one pagination scheme of every list: `page` (1-based) and `size`, answered with
 * `{data, totalCount, page, size, lastPage}`.
 */
export const DEFAULT_PAGE_SIZE = 10;

export interface PageRequest {
  page: number;
  size: number;
}

export interface Page<T> {
  data: T[];
  totalCount: number;
  page: number;
  size: number;
  lastPage: number;
}

export function pageRequest(query: { page: number; size?: number | undefined; per_page?: number | undefined }): PageRequest {
  return { page: query.page, size: query.size ?? query.per_page ?? DEFAULT_PAGE_SIZE };
}

export function toPage<T>(data: T[], totalCount: number, request: PageRequest): Page<T> {
  return {
    data,
    totalCount,
    page: request.page,
    size: request.size,
    lastPage: Math.max(1, Math.ceil(totalCount / request.size)),
  };
}

/**
 * For lists numbered 1…totalCount in insertion order and shown newest first: the inclusive range
 * of sequence numbers on the requested page, or null past the end. An index range on the sequence
 * costs the same on page 50,000 as on page 1, where OFFSET would scan every row before it.
 */
export function newestFirstSeqRange(totalCount: number, request: PageRequest): { from: number; to: number } | null {
  const to = totalCount - (request.page - 1) * request.size;
  if (to < 1) return null;
  return { from: Math.max(1, to - request.size + 1), to };
}

/** Tables numbered by `seq` within a merchant and mode, with a counter of the same name. */
type CountedSeqTable = 'customers' | 'transactions' | 'events';
/** Tables numbered by `seq` whose last number the caller reads elsewhere (the audit chain's head). */
type SeqTable = CountedSeqTable | 'audit_log';

/**
 * A newest-first page of a seq-numbered list: the count comes from the maintained counter (or is
 * given, for a table whose newest row carries it) and the rows from an index range, so every page
 * costs the same however deep it is.
 */
export async function seqPage<T extends SeqTable, R>(
  db: Executor,
  table: T,
  scope: Scope,
  request: PageRequest,
  present: (row: Selectable<Tables[T]>) => R,
  ...[knownTotal, pruned = 0]: T extends CountedSeqTable ? [total?: undefined, pruned?: number] : [total: number]
): Promise<Page<R>> {
  // `pruned`: the oldest rows 1…pruned are gone (server/retention.ts); the list numbers the rest.
  const total = (knownTotal ?? (await readCount(db, scope.merchantId, scope.mode, table as CountedSeqTable))) - pruned;
  const page = newestFirstSeqRange(total, request);
  if (!page) return toPage([], total, request);
  const range = { from: page.from + pruned, to: page.to + pruned };
  const rows = await (db as Executor)
    .selectFrom(table as SeqTable)
    .selectAll()
    .where('merchant_id', '=', scope.merchantId)
    .where('mode', '=', scope.mode)
    .where('seq', '>=', range.from)
    .where('seq', '<=', range.to)
    .orderBy('seq', 'desc')
    .execute();
  return toPage((rows as Selectable<Tables[T]>[]).map(present), total, request);
}

/**
 * A page of a list filtered beyond what a maintained counter covers (a payment's refunds, an
 * event type, endpoints): COUNT(*) of `base`, then `rows` of it (selection and order) over
 * LIMIT/OFFSET. For lists that stay short or filtered; long ones use `seqPage`.
 */
export async function offsetPage<DB, TB extends keyof DB, O, Row, R>(
  base: SelectQueryBuilder<DB, TB, O>,
  rows: (query: SelectQueryBuilder<DB, TB, O>) => SelectQueryBuilder<DB, TB, Row>,
  request: PageRequest,
  present: (row: Row) => R,
): Promise<Page<R>> {
  const counted = await base
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .$castTo<{ n: number }>()
    .executeTakeFirstOrThrow();
  const found = await rows(base)
    .limit(request.size)
    .offset((request.page - 1) * request.size)
    .execute();
  return toPage(found.map(present), counted.n, request);
}
