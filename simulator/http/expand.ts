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

function expandPath(kernel: Kernel, scope: Scope, target: Json, parts: string[], full: string): void {
  const [field, ...rest] = parts;
  if (field === undefined) return;
  if (target.object === 'list' && field === 'data' && Array.isArray(target.data)) {
    for (const item of target.data) if (isObject(item)) expandPath(kernel, scope, item, rest, full);
    return;
  }
  if (!(field in target)) {
    throw invalidRequest(`This property cannot be expanded (${full}).`, 'expand', 'parameter_invalid');
  }
  let value = target[field];
  if (typeof value === 'string') {
    // `find` parses the stored JSON each time: the object is this response's own, no copy needed.
    const found = kernel.store.find<unknown, unknown>(value);
    if (found && found.livemode === scope.livemode) {
      value = found.body;
      target[field] = value;
    }
  }
  if (isObject(value)) expandPath(kernel, scope, value, rest, full);
}

export function expandBody(kernel: Kernel, scope: Scope, body: unknown, paths: string[]): unknown {
  if (!isObject(body)) return body;
  const copy = structuredClone(body);
  for (const path of paths) {
    const parts = path.split('.');
    if (parts.length > MAX_EXPAND_DEPTH) throw invalidRequest(`You cannot expand more than ${MAX_EXPAND_DEPTH} levels of a property (${path}).`, 'expand');
    expandPath(kernel, scope, copy, parts, path);
  }
  return copy;
}
