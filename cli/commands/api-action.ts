import { readFile } from 'node:fs/promises';
import type { RawResponse } from '../../shared/api/transport.js';
import type { CliContext } from '../context.js';
import { CliError, usageError } from '../errors.js';
import { ExitCode } from '../exit-codes.js';
import { requireLive } from '../safety.js';

export interface ApiOptions {
  data?: string[];
  field?: string[];
  query?: string[];
  idempotencyKey?: string;
  include?: boolean;
  paginate?: boolean;
  list?: boolean;
  live?: boolean;
}

/** The routes whose POST moves money: payments made or captured, refunds, payouts. */
const MONEY_ROUTES = [
  /^\/v1\/(transactions|payment-intents|payouts)$/,
  /^\/v1\/transactions\/[^/]+\/(capture|refunds)$/,
  /^\/v1\/terminal\/(create-payment|process-payment)$/,
];

const METHODS = new Set(['GET', 'POST', 'DELETE', 'PUT', 'PATCH']);

/** A list page, as the API answers one: numbered (`page`/`lastPage`) or by cursor (`has_more`, `starting_after`). */
interface ListPage {
  data: unknown[];
  page?: number;
  lastPage?: number;
  has_more?: boolean;
}

/** Pages followed at most by --paginate: a runaway loop stops instead of filling the disk. */
const MAX_PAGES = 10_000;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

interface Operation {
  operationId: string;
  method: string;
  path: string;
}

/** `-d` values as gh's `-F` reads them: JSON's literals and numbers typed, anything else a string. */
export function typed(raw: string): Json {
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw === 'null') return null;
  if (/^-?(0|[1-9]\d*)(\.\d+)?$/.test(raw) && Number.isSafeInteger(Math.trunc(Number(raw)))) return Number(raw);
  return raw;
}

/** `a.b`, `a[b]` and `a[]` as the steps of a key path; `[]` appends. */
export function keyPath(key: string): string[] {
  const steps: string[] = [];
  for (const part of key.split('.')) {
    const match = /^([^[\]]+)((?:\[[^\]]*\])*)$/.exec(part);
    if (!match) throw usageError(`cannot read the field name "${key}": use a.b=v, a[b]=v or a[]=v`);
    steps.push(match[1] as string);
    for (const bracket of (match[2] ?? '').matchAll(/\[([^\]]*)\]/g)) steps.push(bracket[1] as string);
  }
  return steps;
}

function setField(body: JsonObject, pair: string, value: (raw: string) => Json): void {
  const eq = pair.indexOf('=');
  if (eq <= 0) throw usageError(`"${pair}" is not key=value`);
  const steps = keyPath(pair.slice(0, eq));
  let node: JsonObject | Json[] = body;
  for (const [i, step] of steps.entries()) {
    const lastStep = i === steps.length - 1;
    const next = steps[i + 1];
    const fresh = (): JsonObject | Json[] => (next === '' ? [] : {});
    if (Array.isArray(node)) {
      if (step !== '') throw usageError(`"${pair}": ${steps.slice(0, i).join('.')} is a list, add to it with []`);
      if (lastStep) node.push(value(pair.slice(eq + 1)));
      else {
        const child = fresh();
        node.push(child);
        node = child;
      }
    } else {
      if (step === '') throw usageError(`"${pair}": [] must follow a name`);
      if (lastStep) node[step] = value(pair.slice(eq + 1));
      else {
        const existing: Json | undefined = node[step];
        if (existing !== undefined && (existing === null || typeof existing !== 'object')) throw usageError(`"${pair}": ${step} is already a value`);
        const child: JsonObject | Json[] = (existing as JsonObject | Json[] | undefined) ?? fresh();
        node[step] = child;
        node = child;
      }
    }
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** The body from `-d`/`-f`, or the whole of `@file`/`@-`; undefined when none was given. */
async function bodyOf(options: ApiOptions, ctx: CliContext): Promise<JsonObject | undefined> {
  const whole = (options.data ?? []).filter((d) => d.startsWith('@'));
  if (whole.length > 1) throw usageError('only one @file or @- may give the whole body');
  if (whole.length === 1) {
    if ((options.data ?? []).length > 1 || (options.field ?? []).length > 0) throw usageError('@file gives the whole body: add fields to the file, not beside it');
    const source = (whole[0] as string).slice(1);
    const text = source === '-' ? await readAll(ctx.io.stdin) : await readFile(source, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw usageError(`cannot read ${source}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw usageError(`${source === '-' ? 'stdin' : source} is not JSON`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw usageError(`${source === '-' ? 'stdin' : source} must hold one JSON object`);
    return parsed as JsonObject;
  }
  if (!options.data?.length && !options.field?.length) return undefined;
  const body: JsonObject = {};
  for (const pair of options.data ?? []) setField(body, pair, typed);
  for (const pair of options.field ?? []) setField(body, pair, (raw) => raw);
  return body;
}

function queryOf(pairs: string[] = []): Record<string, string> {
  const query: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw usageError(`"${pair}" is not key=value`);
    query[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return query;
}

/** `transactions`, `v1/transactions` and `/v1/transactions` all name `/v1/transactions`. */
function v1Path(path: string): string {
  const trimmed = path.replace(/^\/+/, '');
  return trimmed.startsWith('v1/') || trimmed === 'v1' ? `/${trimmed}` : `/v1/${trimmed}`;
}

async function operations(ctx: CliContext): Promise<Operation[]> {
  const document = await ctx.api.request<{ paths: Record<string, Record<string, { operationId?: string }>> }>('GET', '/v1/openapi.json');
  const found: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      if (operation.operationId) found.push({ operationId: operation.operationId, method: method.toUpperCase(), path });
    }
  }
  return found.sort((a, b) => a.operationId.localeCompare(b.operationId));
}

/** An operationId and its path parameters, in order, as a method and a path. */
async function resolveOperation(ctx: CliContext, operationId: string, params: string[]): Promise<{ method: string; path: string }> {
  const known = await operations(ctx);
  const operation = known.find((o) => o.operationId === operationId) ?? known.find((o) => o.operationId.toLowerCase() === operationId.toLowerCase());
  if (!operation) throw usageError(`no operation ${operationId} in the API document: \`pos api --list\` shows them (or give METHOD PATH)`);
  const names = [...operation.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string);
  if (params.length !== names.length) {
    throw usageError(`${operation.operationId} (${operation.method} ${operation.path}) takes ${names.length === 0 ? 'no path parameters' : names.join(', ')}, in that order; got ${params.length}`);
  }
  let i = 0;
  const path = operation.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(params[i++] as string));
  return { method: operation.method, path };
}

function printResponse(ctx: CliContext, res: RawResponse, include: boolean): void {
  if (include) {
    ctx.io.stdout.write(`HTTP/1.1 ${res.status}\n`);
    for (const [name, value] of res.headers) ctx.io.stdout.write(`${name}: ${value}\n`);
    ctx.io.stdout.write('\n');
  }
  if (res.isJson) ctx.out.printJson(res.json);
  else if (res.text) ctx.io.stdout.write(res.text.endsWith('\n') ? res.text : `${res.text}\n`);
}

function failed(res: RawResponse): CliError {
  const error = (res.json as { error?: { message?: string; code?: string } } | undefined)?.error;
  const what = error?.message ? `${error.message}${error.code ? ` (${error.code})` : ''}` : `the server answered ${res.status}`;
  return new CliError(`HTTP ${res.status}: ${what}`, ExitCode.apiError);
}

export async function callApi(args: [string | undefined, string[]], options: ApiOptions, ctx: CliContext): Promise<void> {
  const [first, rest] = args;
  if (options.list) {
    const list = await operations(ctx);
    if (ctx.out.json) ctx.out.printJson(list);
    else ctx.out.table(list.map((o) => ({ operation: o.operationId, method: o.method, path: o.path })));
    return;
  }
  if (!first) throw usageError('pos api takes METHOD PATH or an operationId (`pos api --list` shows them)');
  let method: string;
  let path: string;
  if (METHODS.has(first.toUpperCase())) {
    method = first.toUpperCase();
    if (rest.length !== 1) throw usageError(`pos api ${method} takes one path (e.g. /v1/transactions), got ${rest.length}`);
    path = v1Path(rest[0] as string);
  } else {
    ({ method, path } = await resolveOperation(ctx, first, rest));
  }
  if (method === 'POST' && MONEY_ROUTES.some((route) => route.test(path))) requireLive(ctx, options.live, `POST ${path}`);
  const body = await bodyOf(options, ctx);
  if (body !== undefined && (method === 'GET' || method === 'DELETE')) throw usageError(`${method} takes no body: give query parameters with -q key=value`);
  const query = queryOf(options.query);
  const send = (extra: Record<string, string> = {}) =>
    ctx.api.transport.send(method, path, {
      headers: { accept: 'application/json' },
      ...(body === undefined ? {} : { body }),
      ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}),
      query: { ...query, ...extra },
    });

  if (!options.paginate) {
    const res = await send();
    printResponse(ctx, res, Boolean(options.include));
    if (res.status >= 400) throw failed(res);
    return;
  }
  if (method !== 'GET') throw usageError('--paginate follows lists: it takes GET');
  const items: unknown[] = [];
  let extra: Record<string, string> = {};
  for (let pages = 0; pages < MAX_PAGES; pages++) {
    const res = await send(extra);
    if (res.status >= 400) {
      printResponse(ctx, res, Boolean(options.include));
      throw failed(res);
    }
    const page = res.json as Partial<ListPage> | undefined;
    if (!page || !Array.isArray(page.data)) throw new CliError(`${path} is not a list: --paginate follows answers with a data array`, ExitCode.usage);
    items.push(...page.data);
    if (typeof page.page === 'number' && typeof page.lastPage === 'number') {
      if (page.page >= page.lastPage) break;
      extra = { page: String(page.page + 1) };
    } else if (page.has_more === true) {
      const last = page.data.at(-1) as { id?: unknown } | undefined;
      if (typeof last?.id !== 'string') break;
      extra = { starting_after: last.id };
    } else break;
  }
  ctx.out.printJson(items);
}
