import type { CliContext } from './context.js';
import { usageError } from './errors.js';

type Row = Record<string, string | number | null | undefined>;

/** A page of a numbered list, as the API answers one. */
export interface NumberedPage<T> {
  data: T[];
  page: number;
  lastPage: number;
  totalCount: number;
}

/** A page of a cursor list, as the API answers one. */
export interface CursorPage<T> {
  data: T[];
  has_more: boolean;
}

/** Pages followed at most by --all: a runaway loop (a list growing as fast as it is read) stops. */
const MAX_PAGES = 100_000;

function whole(value: string | undefined, flag: string, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw usageError(`${flag} must be a whole number from 1 to ${max}`);
  return n;
}

/**
 * Prints a numbered list: one page (`--page`, `--limit`), or with `--all` every page from the
 * first. jsonl streams each page as it arrives; json and a table print once the last is in, as
 * one `{data: […]}` and one table.
 */
export async function printNumbered<T>(
  ctx: CliContext,
  flags: { limit?: string; size?: string; page?: string; all?: boolean },
  fetch: (page: number, size: number) => Promise<NumberedPage<T>>,
  row: (item: T) => Row,
  noun: string,
): Promise<void> {
  const size = whole(flags.limit ?? flags.size, flags.limit !== undefined ? '--limit' : '--size', 10, 100);
  if (!flags.all) {
    const page = await fetch(whole(flags.page, '--page', 1, 1_000_000_000), size);
    if (ctx.out.json) ctx.out.printJson(page);
    else {
      ctx.out.table(page.data.map(row));
      ctx.out.line(`page ${page.page} of ${page.lastPage} (${page.totalCount} ${noun})`);
    }
    return;
  }
  if (flags.page !== undefined) throw usageError('--all starts from the first page: give --page or --all, not both');
  const items: T[] = [];
  for (let n = 1; n <= MAX_PAGES; n++) {
    const page = await fetch(n, size);
    if (ctx.out.format === 'jsonl') ctx.out.printJson(page.data);
    else items.push(...page.data);
    if (page.page >= page.lastPage || page.data.length === 0) break;
  }
  finish(ctx, items, row, noun);
}

/** Prints a cursor list: one page (`--starting-after`, `--limit`), or with `--all` every page. */
export async function printCursor<T extends { id: string }>(
  ctx: CliContext,
  flags: { limit?: string; startingAfter?: string; all?: boolean },
  fetch: (query: { limit: number; starting_after?: string }) => Promise<CursorPage<T>>,
  row: (item: T) => Row,
  noun: string,
): Promise<void> {
  const limit = whole(flags.limit, '--limit', 10, 100);
  const first = { limit, ...(flags.startingAfter ? { starting_after: flags.startingAfter } : {}) };
  if (!flags.all) {
    const page = await fetch(first);
    if (ctx.out.json) ctx.out.printJson(page);
    else {
      ctx.out.table(page.data.map(row));
      if (page.has_more && page.data.length) ctx.out.line(`more: --starting-after ${page.data.at(-1)?.id}`);
    }
    return;
  }
  const items: T[] = [];
  let query = first;
  for (let n = 0; n < MAX_PAGES; n++) {
    const page = await fetch(query);
    if (ctx.out.format === 'jsonl') ctx.out.printJson(page.data);
    else items.push(...page.data);
    const last = page.data.at(-1);
    if (!page.has_more || !last) break;
    query = { limit, starting_after: last.id };
  }
  finish(ctx, items, row, noun);
}

function finish<T>(ctx: CliContext, items: T[], row: (item: T) => Row, noun: string): void {
  if (ctx.out.format === 'jsonl') return;
  if (ctx.out.json) ctx.out.printJson({ data: items });
  else {
    ctx.out.table(items.map(row));
    ctx.out.line(`${items.length} ${noun}`);
  }
}
