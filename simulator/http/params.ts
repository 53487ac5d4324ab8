import { z } from 'zod';
import { SimError, invalidRequest } from '../errors.js';

/**
 * Form parameters as the SDK sends them (`a[b]=1`, `list[0]=x`, empty string for null), parsed by
 * the extended query parser into nested objects of strings, then validated with strict zod schemas
 * so unknown parameters are refused the way Stripe refuses them.
 */

export type RawParams = Record<string, unknown>;

/**
 * qs turns `list[25]=x` into an object once an index passes its array limit; every object whose keys
 * are all indices is turned back into an array here, in index order.
 */
export function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length > 0 && entries.every(([key]) => /^\d+$/.test(key))) {
      return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, v]) => normalize(v));
    }
    return Object.fromEntries(entries.map(([key, v]) => [key, normalize(v)]));
  }
  return value;
}

export const int = z.union([z.number().int(), z.string().regex(/^-?\d+$/, 'Invalid integer')]).transform(Number);
export const nonNegativeInt = int.refine((n) => n >= 0, 'This value must be greater than or equal to 0.');
export const bool = z.union([z.boolean(), z.enum(['true', 'false'])]).transform((v) => v === true || v === 'true');
export const str = z.string();
/** A nullable string: the SDK sends `null` as an empty string. */
export const optionalText = z.string().transform((v) => (v === '' ? null : v));
export const metadata = z.union([z.literal(''), z.record(z.string(), z.string())]);
export const stringList = z.union([z.array(z.string()), z.string().transform((v) => [v])]);
export const expand = stringList.optional();

/** Every Stripe list endpoint accepts these. */
export const listParams = {
  limit: int.refine((n) => n >= 1 && n <= 100, 'This value must be between 1 and 100.').optional(),
  starting_after: str.optional(),
  ending_before: str.optional(),
  expand,
  created: z.union([int, z.record(z.string(), int)]).optional(),
};

/** Stripe's default page size. */
export const DEFAULT_LIST_LIMIT = 10;

function paramName(path: readonly PropertyKey[]): string {
  const [head, ...rest] = path.map(String);
  return (head ?? '') + rest.map((part) => `[${part}]`).join('');
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let value = input;
  for (const key of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[key];
  }
  return value;
}

export function toSimError(error: z.ZodError, input: unknown): SimError {
  const issue = error.issues[0];
  if (!issue) return invalidRequest('Invalid request');
  if (issue.code === 'unrecognized_keys') {
    const param = paramName([...issue.path, issue.keys[0] ?? '']);
    return invalidRequest(`Received unknown parameter: ${param}`, param, 'parameter_unknown');
  }
  const param = paramName(issue.path);
  if (valueAt(input, issue.path) === undefined) {
    return invalidRequest(`Missing required param: ${param}.`, param, 'parameter_missing');
  }
  if (issue.code === 'invalid_value' || issue.code === 'invalid_union') {
    return invalidRequest(`Invalid ${param}: must be one of the documented values`, param, 'parameter_invalid');
  }
  return invalidRequest(`Invalid ${param}: ${issue.message}`, param, 'parameter_invalid');
}

export function parse<S extends z.ZodType>(schema: S, params: RawParams): z.infer<S> {
  const result = schema.safeParse(params);
  if (!result.success) throw toSimError(result.error, params);
  return result.data;
}

/** `GET /v1/<resource>/search`: Stripe's query language, page size and the `next_page` token. */
export const searchSchema = z
  .object({
    query: str,
    limit: int.refine((n) => n >= 1 && n <= 100, 'This value must be between 1 and 100.').optional(),
    page: str.optional(),
    expand,
  })
  .strict();
