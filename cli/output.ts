import type { Writable } from 'node:stream';
import type { LooseFileReport } from '../shared/files.js';
import type { CliIo } from './io.js';

/** Where commands print: data to stdout, diagnostics to stderr, and JSON when asked. */
export interface Output {
  readonly json: boolean;
  /** Prints a value as one JSON document. */
  printJson(value: unknown): void;
  line(text?: string): void;
  table(rows: readonly Record<string, string | number | null | undefined>[], columns?: readonly string[]): void;
  error(text: string): void;
}

export function createOutput(json: boolean, { stdout, stderr }: Pick<CliIo, 'stdout' | 'stderr'>): Output {
  return {
    json,
    printJson: (value) => stdout.write(`${JSON.stringify(value, null, 2)}\n`),
    line: (text = '') => stdout.write(`${text}\n`),
    error: (text) => stderr.write(`${text}\n`),
    table(rows, columns) {
      const cols = columns ?? (rows[0] ? Object.keys(rows[0]) : []);
      if (rows.length === 0) {
        stdout.write('(none)\n');
        return;
      }
      const cell = (v: string | number | null | undefined) => (v === null || v === undefined ? '' : String(v));
      const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
      const fmt = (values: string[]) => values.map((v, i) => v.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
      stdout.write(`${fmt(cols.map((c) => c.toUpperCase()))}\n`);
      for (const row of rows) stdout.write(`${fmt(cols.map((c) => cell(row[c])))}\n`);
    },
  };
}

/** A profile file or data dir found open to other users: one line on the run's stderr, beside the errors. */
export function warnOn(stderr: Writable): LooseFileReport {
  return (found) => void stderr.write(`pos: warning: ${found.message}\n`);
}
