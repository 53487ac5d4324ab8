import { invalidRequest } from '../errors.js';
import type { Kernel } from '../engine/kernel.js';
import type { Scope } from '../store.js';

/**
 * `expand[]`: replaces id strings on the response with the objects they name, following dotted
 * paths (`latest_charge`, `data.payment_method`, `latest_charge.transfer`,
 * `balance_transaction`). Ids the simulator does not store as objects are left as ids.
 */

/** Stripe's limit on expansion depth. */
const MAX_EXPAND_DEPTH = 4;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * `target` with the path expanded: a new object wherever a field along the path changes, the same
 * object (shared, never changed) wherever nothing does. The handler's answer may be an object the
 * store keeps for others to read (`all`, `peek`), so it is copied only along the paths, not whole.
 */
function expandPath(kernel: Kernel, scope: Scope, target: Json, parts: string[], full: string): Json {
  const [field, ...rest] = parts;
  if (field === undefined) return target;
  if (target.object === 'list' && field === 'data' && Array.isArray(target.data)) {
    return { ...target, data: target.data.map((item: unknown) => (isObject(item) ? expandPath(kernel, scope, item, rest, full) : item)) };
  }
  if (!(field in target)) {
    throw invalidRequest(`This property cannot be expanded (${full}).`, 'expand', 'parameter_invalid');
  }
  let value = target[field];
  if (typeof value === 'string') {
    // `find` parses the stored JSON each time: the object is this response's own.
    const found = kernel.store.find<unknown, unknown>(value);
    if (found && found.livemode === scope.livemode) value = found.body;
  }
  if (isObject(value)) value = expandPath(kernel, scope, value, rest, full);
  return value === target[field] ? target : { ...target, [field]: value };
}

export function expandBody(kernel: Kernel, scope: Scope, body: unknown, paths: string[]): unknown {
  if (!isObject(body)) return body;
  let expanded = body;
  for (const path of paths) {
    const parts = path.split('.');
    if (parts.length > MAX_EXPAND_DEPTH) throw invalidRequest(`You cannot expand more than ${MAX_EXPAND_DEPTH} levels of a property (${path}).`, 'expand');
    expanded = expandPath(kernel, scope, expanded, parts, path);
  }
  return expanded;
}
