import type { z } from 'zod';
import { invalid } from '../errors.js';

type Issue = z.core.$ZodIssue;

/** `metadata.order` → `metadata[order]`, Stripe's way of naming a nested parameter. */
function paramName(path: readonly PropertyKey[]): string | undefined {
  if (path.length === 0) return undefined;
  const [head, ...rest] = path.map(String);
  return head + rest.map((p) => `[${p}]`).join('');
}

/** zod does not keep the offending input on an issue, so a missing value is found by walking the path. */
function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = Object.hasOwn(value, key) ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  }
  return value;
}

function describe(issue: Issue, param: string | undefined, missing: boolean): string {
  if (issue.code === 'unrecognized_keys') return `Received unknown parameter: ${param}`;
  if (missing) return `Missing required param: ${param}`;
  return param ? `Invalid ${param}: ${issue.message}` : `Invalid request: ${issue.message}`;
}

/** Validates client input once, at the edge; the first problem becomes a 400 naming its param. */
export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (!issue) throw invalid(undefined, 'Invalid request');
  let param = paramName(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    param = param ? `${param}[${key}]` : key;
  }
  const missing = issue.code === 'invalid_type' && issue.path.length > 0 && valueAt(input, issue.path) === undefined;
  const code = missing ? 'parameter_missing' : issue.code === 'unrecognized_keys' ? 'parameter_unknown' : 'parameter_invalid';
  throw invalid(param, describe(issue, param, missing), code);
}
