import { describe, expect, it } from 'vitest';
import { inputProblem, MAX_INPUT_DEPTH } from './input.js';

function nest(levels: number, arrays: boolean): unknown {
  let value: unknown = 'x';
  for (let i = 0; i < levels; i++) value = arrays ? [value] : { a: value };
  return value;
}

describe('inputProblem', () => {
  it('accepts ordinary input, emoji and right-to-left text', () => {
    expect(inputProblem({ name: 'נועה 🙂 Zoë', amount: 1000, metadata: { order: '42' }, tags: ['a', null, true] }, 'body')).toBeUndefined();
    expect(inputProblem(null, 'body')).toBeUndefined();
  });

  it('refuses nesting past the limit, naming the top-level field, at any depth without recursing', () => {
    expect(inputProblem(nest(MAX_INPUT_DEPTH, true), 'body')).toBeUndefined();
    expect(inputProblem(nest(MAX_INPUT_DEPTH + 1, true), 'body')?.message).toMatch(/nested more than 20 levels/);
    const deep = inputProblem({ metadata: nest(1_000_000, false) }, 'body');
    expect(deep).toMatchObject({ status: 400, code: 'parameter_invalid', param: 'metadata' });
  });

  it('names a lone surrogate or control character by its Stripe-style param', () => {
    expect(inputProblem({ address: { line1: 'a\ud800' } }, 'body')).toMatchObject({ code: 'parameter_invalid', param: 'address[line1]' });
    expect(inputProblem({ items: ['ok', '\udfff'] }, 'body')?.param).toBe('items[1]');
    expect(inputProblem({ metadata: { ['k\ud800']: 'v' } }, 'body')?.param).toBe('metadata[k\ufffd]');
    expect(inputProblem({ name: 'a\u0000' }, 'body')?.param).toBe('name');
    expect(inputProblem({ name: 'a\u0085' }, 'body')?.param).toBe('name');
    expect(inputProblem('\ud800', 'body')).toMatchObject({ param: undefined, message: expect.stringMatching(/^Invalid body/) });
  });

  it('allows tab and line breaks only in prose fields, never in keys', () => {
    expect(inputProblem({ description: 'a\r\n\tb', reason: 'x\ny', metadata: { note: 'a\nb' } }, 'body')).toBeUndefined();
    expect(inputProblem({ name: 'a\nb' }, 'body')?.param).toBe('name');
    expect(inputProblem({ metadata: { 'a\n': 'b' } }, 'body')?.param).toBe('metadata[a\n]');
    expect(inputProblem({ description: 'a\u0007' }, 'body')?.param).toBe('description');
    // Only the top-level prose fields: a nested `description` is no exception.
    expect(inputProblem({ address: { description: 'a\nb' } }, 'body')?.param).toBe('address[description]');
  });

  it('reports the first problem in document order', () => {
    expect(inputProblem({ a: 'ok', b: '\u0000', c: '\ud800' }, 'body')?.param).toBe('b');
  });
});
