import { z } from 'zod';
import { expect, it } from 'vitest';
import { SimError } from '../errors.js';
import { int, metadata, normalize, parse } from './params.js';

it('turns index-keyed objects (qs past its array limit) back into arrays', () => {
  const keys = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [String(i), `e${i}`]));
  expect(normalize({ enabled_events: keys, nested: { a: { '1': 'y', '0': 'x' } } })).toEqual({
    enabled_events: Array.from({ length: 30 }, (_, i) => `e${i}`),
    nested: { a: ['x', 'y'] },
  });
});

it('answers Stripe-style errors for unknown, missing and malformed params', () => {
  const schema = z.object({ amount: int, metadata: metadata.optional(), card: z.object({ number: z.string() }).strict().optional() }).strict();
  const unknown = (() => {
    try {
      parse(schema, { amount: '1', card: { number: '4', cvv: '1' } });
    } catch (error) {
      return error;
    }
  })() as SimError;
  expect(unknown.code).toBe('parameter_unknown');
  expect(unknown.param).toBe('card[cvv]');
  expect(() => parse(schema, {})).toThrow(/Missing required param: amount/);
  expect(() => parse(schema, { amount: 'ten' })).toThrow(/Invalid amount/);
  expect(parse(schema, { amount: '42', metadata: { a: 'b' } })).toEqual({ amount: 42, metadata: { a: 'b' } });
});
