import { usageError } from '../errors.js';
import { type Json, keyPath, typed } from './api-action.js';

/**
 * `pos trigger --override path=value`, `--add path=value`, `--remove path` (the Stripe CLI's flags)
 * on the body of every object the trigger creates, optionally only one kind's (`payment:amount=5000`,
 * `customer:name=Ada`, `payout:description=x`). Values are typed as `pos api -d` types them
 * (numbers, true, false, null), except under metadata, whose values the API keeps as strings.
 */
export interface OverrideFlags {
  override?: string[];
  add?: string[];
  remove?: string[];
}

export const OBJECT_KINDS = ['payment', 'payout', 'customer'] as const;
export type ObjectKind = (typeof OBJECT_KINDS)[number];

type Change = { op: 'override' | 'add' | 'remove'; kind: ObjectKind | undefined; steps: string[]; value: Json; flag: string };

function parse(op: Change['op'], text: string): Change {
  const flag = `--${op} ${text}`;
  const prefix = /^([a-z_]+):(.*)$/.exec(text);
  let kind: ObjectKind | undefined;
  let rest = text;
  if (prefix && (OBJECT_KINDS as readonly string[]).includes(prefix[1] as string)) {
    kind = prefix[1] as ObjectKind;
    rest = prefix[2] as string;
  } else if (prefix) {
    throw usageError(`${flag}: "${prefix[1]}" is not an object a trigger creates (${OBJECT_KINDS.join(', ')})`);
  }
  if (op === 'remove') return { op, kind, steps: keyPath(rest), value: null, flag };
  const eq = rest.indexOf('=');
  if (eq <= 0) throw usageError(`${flag}: give path=value, e.g. metadata.order=42`);
  const steps = keyPath(rest.slice(0, eq));
  const raw = rest.slice(eq + 1);
  return { op, kind, steps, value: steps[0] === 'metadata' ? raw : typed(raw), flag };
}

export function parseOverrides(flags: OverrideFlags): Change[] {
  return [...(flags.override ?? []).map((t) => parse('override', t)), ...(flags.add ?? []).map((t) => parse('add', t)), ...(flags.remove ?? []).map((t) => parse('remove', t))];
}

/** `body` with the changes for `kind` made: a copy, so a trigger's defaults are never changed. */
export function applyOverrides<T extends object>(kind: ObjectKind, body: T, changes: readonly Change[]): T {
  const copy = structuredClone(body) as Record<string, Json>;
  for (const change of changes) {
    if (change.kind && change.kind !== kind) continue;
    const parents = change.steps.slice(0, -1);
    const last = change.steps.at(-1) as string;
    let node: Record<string, Json> = copy;
    for (const step of parents) {
      const next = node[step];
      if (next === undefined || next === null) {
        if (change.op === 'remove') break;
        node[step] = {};
      } else if (typeof next !== 'object' || Array.isArray(next)) throw usageError(`${change.flag}: ${step} is not an object`);
      node = node[step] as Record<string, Json>;
    }
    if (change.op === 'remove') delete node[last];
    else if (change.op === 'add' && Array.isArray(node[last])) (node[last] as Json[]).push(change.value);
    else if (change.op === 'add' && node[last] !== undefined) throw usageError(`${change.flag}: ${change.steps.join('.')} is already set; --override replaces it`);
    else node[last] = change.value;
  }
  return copy as T;
}
