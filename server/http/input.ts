import { type ApiError, invalid } from '../errors.js';
import { EVIDENCE_PROSE_FIELDS } from '../../shared/contract/disputes.js';

/**
 * How deeply a body or query may nest objects and arrays. The deepest legitimate input is three
 * levels (a body, its `address` or `metadata`, their strings; an agent heartbeat's readers list);
 * 20 leaves room for growth while keeping every walk over client input (ours, zod's, a JSON
 * encoder's) far from any recursion limit.
 */
export const MAX_INPUT_DEPTH = 20;

/**
 * Fields written by people as prose, where a tab or a line break means something: their strings
 * (and, for metadata, the values under them) may hold `\t`, `\n` and `\r`. Everywhere else (names,
 * addresses, ids, codes, keys) a control character is a mistake or an attack. A dispute's evidence
 * is mostly prose: explanations, policies, addresses written as on a letter.
 */
const FREE_TEXT_FIELDS: ReadonlySet<string> = new Set(['description', 'reason', 'metadata', ...EVIDENCE_PROSE_FIELDS]);

/** With the `u` flag only unpaired surrogates are of category Cs: a pair is one code point. */
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;
/** C0 controls, DEL and C1 controls: nothing a field of ours means. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
/** The same, less tab, line feed and carriage return. */
const CONTROL_IN_PROSE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

interface Frame {
  value: unknown;
  /** The key or index this value sits under; undefined for the root. */
  key: string | undefined;
  parent: Frame | undefined;
  depth: number;
  /** Whether strings under this value are free text (see FREE_TEXT_FIELDS). */
  prose: boolean;
}

/** Stripe's way of naming a nested parameter: `metadata[order]`, `items[0][name]`. */
function paramOf(frame: Frame): string | undefined {
  const keys: string[] = [];
  for (let f: Frame | undefined = frame; f?.key !== undefined; f = f.parent) keys.push(f.key.replace(LONE_SURROGATES, '\ufffd'));
  keys.reverse();
  const [head, ...rest] = keys;
  return head === undefined ? undefined : head + rest.map((k) => `[${k}]`).join('');
}

function textProblem(text: string, prose: boolean): string | undefined {
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode text (it holds a lone UTF-16 surrogate)';
  if ((prose ? CONTROL_IN_PROSE : CONTROL).test(text)) return prose ? 'must not contain control characters other than tab and line breaks' : 'must not contain control characters';
  return undefined;
}

/**
 * The first problem with parsed client input (a JSON body, a query, an agent message) that no
 * schema should have to think about: nesting deeper than MAX_INPUT_DEPTH, a string or key that is
 * not well-formed Unicode or holds a control character. Iterative with an explicit stack, so input
 * of any depth is answered, never a stack overflow. `where` names the input in messages about its
 * root (`body`, `query`).
 */
export function inputProblem(input: unknown, where: string): ApiError | undefined {
  const stack: Frame[] = [{ value: input, key: undefined, parent: undefined, depth: 0, prose: false }];
  for (let frame = stack.pop(); frame; frame = stack.pop()) {
    const { value } = frame;
    if (typeof value === 'string') {
      const problem = textProblem(value, frame.prose);
      if (problem) {
        const param = paramOf(frame);
        return invalid(param, `Invalid ${param ?? where}: ${problem}`);
      }
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    if (frame.depth >= MAX_INPUT_DEPTH) {
      // Named by the top-level field it hangs from: the full path of a hostile nest is noise.
      let top = frame;
      while (top.parent?.key !== undefined) top = top.parent;
      const param = paramOf(top);
      return invalid(param, `Invalid ${param ?? where}: nested more than ${MAX_INPUT_DEPTH} levels deep`);
    }
    const depth = frame.depth + 1;
    const root = frame.key === undefined;
    if (Array.isArray(value)) {
      // Pushed in reverse so the first problem found is the first in document order.
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], key: String(i), parent: frame, depth, prose: frame.prose });
      continue;
    }
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      const child: Frame = { value: (value as Record<string, unknown>)[key], key, parent: frame, depth, prose: frame.prose || (root && FREE_TEXT_FIELDS.has(key)) };
      stack.push(child);
    }
    // Keys are checked before values, as a parser meets them; a key is never free text.
    for (const key of keys) {
      const problem = textProblem(key, false);
      if (problem) {
        const param = paramOf({ value: key, key, parent: frame, depth, prose: false });
        return invalid(param, `Invalid ${param ?? where}: the parameter name ${problem}`);
      }
    }
  }
  return undefined;
}
