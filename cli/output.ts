import type { Writable } from 'node:stream';
import type { LooseFileReport } from '../shared/files.js';
import { type ColorMode, colorEnabled, paintStatus } from './color.js';
import { usageError } from './errors.js';
import type { CliIo } from './io.js';

export const OUTPUT_FORMATS = ['table', 'json', 'jsonl'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export interface OutputOptions {
  /** `--json`: the same as `--format json`. */
  json?: boolean;
  format?: OutputFormat;
  /** `--fields a,b`: the keys of each object (JSON) or the columns (table) to print, in that order. */
  fields?: string;
  color?: ColorMode;
}

type Cell = string | number | null | undefined;

/**
 * Where commands print: data to stdout, diagnostics to stderr. A command prints its answer with
 * `printJson` when `json` is true and with `table`/`line` otherwise; how that answer looks
 * (`--format`, `--fields`, `--color`) is decided here, once, for every command.
 */
export interface Output {
  /** The answer is wanted as JSON (`--json`, `--format json|jsonl`): commands call printJson. */
  readonly json: boolean;
  readonly format: OutputFormat;
  readonly color: boolean;
  /** Prints an API answer: one JSON document, or with jsonl one line per item of its list. */
  printJson(value: unknown): void;
  line(text?: string): void;
  table(rows: readonly Record<string, Cell>[], columns?: readonly string[]): void;
  /** A line on stderr beside the data: progress, warnings, what to do next. Plain: red is for the error `pos` ends with (cli/main.ts). */
  error(text: string): void;
}

type Json = unknown;

/** `a.b` reads a nested key; the result keeps the nesting, so `--fields id,card.last4` stays JSON-shaped. */
function pick(value: Json, fields: readonly string[]): Json {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    const steps = field.split('.');
    let from: unknown = value;
    for (const step of steps) from = from !== null && typeof from === 'object' ? (from as Record<string, unknown>)[step] : undefined;
    if (from === undefined) continue;
    let into = out;
    for (const step of steps.slice(0, -1)) into = (into[step] ??= {}) as Record<string, unknown>;
    into[steps.at(-1) as string] = from;
  }
  return out;
}

/** The objects of an answer: a list's items, a `{data: …}`'s object, or the value itself. */
function itemsOf(value: Json): Json[] {
  if (Array.isArray(value)) return value;
  if (value !== null && typeof value === 'object' && 'data' in value) {
    const data = (value as { data: unknown }).data;
    return Array.isArray(data) ? data : [data];
  }
  return [value];
}

/** The answer with `fields` picked from each object, its envelope (page, has_more) kept. */
function project(value: Json, fields: readonly string[] | undefined): Json {
  if (!fields) return value;
  if (Array.isArray(value)) return value.map((v) => pick(v, fields));
  if (value !== null && typeof value === 'object' && 'data' in value) {
    const data = (value as { data: unknown }).data;
    return { ...value, data: Array.isArray(data) ? data.map((v) => pick(v, fields)) : pick(data, fields) };
  }
  return pick(value, fields);
}

function fieldList(fields: string | undefined): string[] | undefined {
  if (fields === undefined) return undefined;
  const list = fields
    .split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  if (list.length === 0) throw usageError('--fields takes names separated by commas, e.g. --fields id,status,amount');
  return list;
}

export function createOutput(options: OutputOptions, { stdout, stderr, env }: Pick<CliIo, 'stdout' | 'stderr' | 'env'>): Output {
  const format: OutputFormat = options.format ?? (options.json ? 'json' : 'table');
  const fields = fieldList(options.fields);
  const color = colorEnabled(options.color, env, stdout);
  return {
    json: format !== 'table',
    format,
    color,
    printJson(value) {
      if (format === 'jsonl') for (const item of itemsOf(value)) stdout.write(`${JSON.stringify(fields ? pick(item, fields) : item)}\n`);
      else stdout.write(`${JSON.stringify(project(value, fields), null, 2)}\n`);
    },
    line: (text = '') => stdout.write(`${text}\n`),
    error: (text) => stderr.write(`${text}\n`),
    table(rows, columns) {
      const all = columns ?? (rows[0] ? Object.keys(rows[0]) : []);
      let cols = all;
      if (fields) {
        const unknown = rows.length > 0 ? fields.filter((f) => !all.includes(f)) : [];
        if (unknown.length) throw usageError(`no column ${unknown.join(', ')} in this table (columns: ${all.join(', ')}; --format json picks from the API's fields)`);
        cols = fields;
      }
      if (rows.length === 0) {
        stdout.write('(none)\n');
        return;
      }
      const cell = (v: Cell) => (v === null || v === undefined ? '' : String(v));
      const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
      // Padded first, painted after: colour codes take no room on the screen.
      const fmt = (values: string[], paintCell: (v: string, i: number) => string = (v) => v) =>
        values
          .map((v, i) => paintCell(i === values.length - 1 ? v : v.padEnd(widths[i] ?? 0), i))
          .join('  ')
          .trimEnd();
      stdout.write(`${fmt(cols.map((c) => c.toUpperCase()))}\n`);
      for (const row of rows) {
        stdout.write(`${fmt(
          cols.map((c) => cell(row[c])),
          (v, i) => (cols[i] === 'status' ? v.replace(/\S+/, (word) => paintStatus(color, word)) : v),
        )}\n`);
      }
    },
  };
}

/** A profile file or data dir found open to other users: one line on the run's stderr, beside the errors. */
export function warnOn(stderr: Writable): LooseFileReport {
  return (found) => void stderr.write(`pos: warning: ${found.message}\n`);
}
