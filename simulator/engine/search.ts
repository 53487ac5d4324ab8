import { invalidRequest } from '../errors.js';
import type { Scope } from '../store.js';
import type { Kernel } from './kernel.js';

/**
 * Stripe's search query language (docs.stripe.com/search#search-query-language) over the fields
 * the simulator keeps: clauses `field:value` (exact, case-insensitive for strings), `field~"sub"`
 * (substring, at least three characters), `field>N`, `>=`, `<`, `<=` on numbers and timestamps,
 * `-field:value` (negation), `metadata['key']:'value'`, `field:null`; clauses joined by `AND` or by
 * `OR` (Stripe refuses both in one query), at most ten. Results are newest first; `next_page` is an
 * opaque token for the `page` parameter.
 */

type Operator = ':' | '~' | '>' | '>=' | '<' | '<=';

interface Clause {
  field: string;
  /** `metadata['key']`: the key. */
  metadataKey: string | null;
  operator: Operator;
  value: string | number | null;
  negated: boolean;
}

interface Query {
  join: 'AND' | 'OR';
  clauses: Clause[];
}

/** Stripe's limit on the clauses of one query. */
const MAX_CLAUSES = 10;
const MIN_SUBSTRING = 3;

function syntaxError(query: string, detail: string): Error {
  return invalidRequest(`Invalid search query: ${detail}. Query: ${query}`, 'query', 'parameter_invalid');
}

const CLAUSE = /^\s*(-)?\s*(metadata\[\s*(['"])(.*?)\3\s*\]|[a-z_][a-z0-9_.]*)\s*(>=|<=|:|~|>|<)\s*(?:(['"])((?:\\.|(?!\6).)*)\6|([^\s'"]+))\s*/i;

export function parseQuery(query: string): Query {
  let rest = query.trim();
  if (rest === '') throw syntaxError(query, 'the query is empty');
  const clauses: Clause[] = [];
  const joins = new Set<'AND' | 'OR'>();
  for (;;) {
    const match = CLAUSE.exec(rest);
    if (!match) throw syntaxError(query, `could not parse "${rest}"`);
    const [whole, minus, fieldText, , metadataKey, operator, , quoted, bare] = match;
    const field = metadataKey !== undefined ? 'metadata' : (fieldText ?? '').toLowerCase();
    let value: string | number | null;
    if (quoted !== undefined) value = quoted.replace(/\\(.)/g, '$1');
    else if (bare === 'null') value = null;
    else if (bare !== undefined && /^-?\d+(\.\d+)?$/.test(bare)) value = Number(bare);
    else throw syntaxError(query, `string values must be quoted ("${bare ?? ''}")`);
    const op = operator as Operator;
    if ((op === '>' || op === '<' || op === '>=' || op === '<=') && typeof value !== 'number') {
      throw syntaxError(query, `the ${op} operator takes a number`);
    }
    if (op === '~' && (typeof value !== 'string' || value.length < MIN_SUBSTRING)) {
      throw syntaxError(query, `a substring search needs at least ${MIN_SUBSTRING} characters`);
    }
    clauses.push({ field, metadataKey: metadataKey ?? null, operator: op, value, negated: minus === '-' });
    rest = rest.slice(whole.length);
    if (rest === '') break;
    const join = /^(AND|OR)\s+/.exec(rest);
    if (!join) throw syntaxError(query, `expected AND or OR before "${rest}"`);
    joins.add(join[1] as 'AND' | 'OR');
    rest = rest.slice(join[0].length);
  }
  if (joins.size > 1) throw syntaxError(query, 'AND and OR cannot be combined in one query');
  if (clauses.length > MAX_CLAUSES) throw syntaxError(query, `at most ${MAX_CLAUSES} clauses are allowed`);
  return { join: joins.has('OR') ? 'OR' : 'AND', clauses };
}

function fieldValue(body: Record<string, unknown>, clause: Clause): unknown {
  if (clause.metadataKey !== null) return (body.metadata as Record<string, unknown> | undefined)?.[clause.metadataKey];
  let value: unknown = body;
  for (const part of clause.field.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  return value;
}

function matches(body: Record<string, unknown>, clause: Clause): boolean {
  const actual = fieldValue(body, clause);
  let result: boolean;
  const expected = clause.value;
  if (expected === null) result = actual === null || actual === undefined || actual === '';
  else if (clause.operator === ':') {
    if (typeof actual === 'string') result = actual.toLowerCase() === String(expected).toLowerCase();
    else if (typeof actual === 'number') result = actual === Number(expected);
    else if (typeof actual === 'boolean') result = String(actual) === String(expected);
    else result = false;
  } else if (clause.operator === '~') result = typeof actual === 'string' && actual.toLowerCase().includes(String(expected).toLowerCase());
  else {
    const n = Number(expected);
    if (typeof actual !== 'number') result = false;
    else if (clause.operator === '>') result = actual > n;
    else if (clause.operator === '>=') result = actual >= n;
    else if (clause.operator === '<') result = actual < n;
    else result = actual <= n;
  }
  return clause.negated ? !result : result;
}

export interface SearchResult<T> {
  object: 'search_result';
  data: T[];
  has_more: boolean;
  next_page: string | null;
  url: string;
}

export interface SearchRequest {
  query: string;
  limit?: number | undefined;
  page?: string | undefined;
}

/** The default and largest page of a search, as on Stripe. */
const DEFAULT_LIMIT = 10;
const MAX_LIMIT = 100;
/** Objects a search scans, newest first: far beyond what a simulator run creates. */
const SCAN_LIMIT = 100_000;

/**
 * A search over the objects of `type` in `scope`. `fields` are the resource's searchable fields
 * (Stripe's list per resource, cut to what the simulator keeps); another field is refused.
 */
export function search<T>(kernel: Kernel, type: string, scope: Scope, resource: string, fields: readonly string[], request: SearchRequest): SearchResult<T> {
  const query = parseQuery(request.query);
  for (const clause of query.clauses) {
    if (!fields.includes(clause.field)) {
      throw invalidRequest(
        `Field \`${clause.field}\` is an unsupported search field for resource \`${resource}\`. See https://stripe.com/docs/search#query-fields-for-${resource.replace(/_/g, '-')} for a list of supported fields.`,
        'query',
        'parameter_invalid',
      );
    }
  }
  const limit = Math.min(request.limit ?? DEFAULT_LIMIT, MAX_LIMIT);
  let offset = 0;
  if (request.page !== undefined) {
    const decoded = /^page_(\d+)$/.exec(Buffer.from(request.page, 'base64url').toString('utf8'));
    if (!decoded) throw invalidRequest(`Invalid page: ${request.page}.`, 'page', 'parameter_invalid');
    offset = Number(decoded[1]);
  }
  const rows = kernel.store.list<Record<string, unknown>, unknown>(type, scope, {}, { limit: SCAN_LIMIT }).data;
  const hits = rows.filter((row) => (query.join === 'AND' ? query.clauses.every((c) => matches(row.body, c)) : query.clauses.some((c) => matches(row.body, c))));
  const data = hits.slice(offset, offset + limit).map((row) => row.body as T);
  const hasMore = hits.length > offset + limit;
  return {
    object: 'search_result',
    data,
    has_more: hasMore,
    next_page: hasMore ? Buffer.from(`page_${offset + limit}`).toString('base64url') : null,
    url: `/v1/${resource}/search`,
  };
}
