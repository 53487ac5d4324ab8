import { Router } from 'express';
import { z } from 'zod';
import { DEFAULT_LIST_LIMIT, expand, int, listParams, metadata, parse, str } from '../params.js';
import { type Services, handle, page } from '../services.js';

const createSchema = z
  .object({
    amount: int,
    currency: str,
    destination: str.optional(),
    description: str.optional(),
    metadata: metadata.optional(),
    method: str.optional(),
    source_type: z.enum(['bank_account', 'card', 'fpx']).optional(),
    statement_descriptor: str.optional(),
    expand,
  })
  .strict();
const updateSchema = z.object({ metadata: metadata.optional(), expand }).strict();
const listSchema = z
  .object({ ...listParams, status: str.optional(), destination: str.optional(), arrival_date: z.union([int, z.record(z.string(), int)]).optional() })
  .strict();
const expandOnly = z.object({ expand }).strict();

const reverseSchema = z.object({ metadata: metadata.optional(), expand }).strict();

export function payoutsRouter(s: Services): Router {
  const r = Router();
  r.post('/v1/payouts', handle(s, ({ ctx, params }) => {
    const { expand: _expand, source_type: _sourceType, ...input } = parse(createSchema, params);
    return s.payouts.create(ctx, input);
  }));
  r.get('/v1/payouts', handle(s, ({ ctx, params }) => {
    const p = parse(listSchema, params);
    return s.payouts.list(ctx.scope, { status: p.status, destination: p.destination }, page(p, DEFAULT_LIST_LIMIT));
  }));
  r.get('/v1/payouts/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.payouts.retrieve(ctx.scope, String(path.id));
  }));
  r.post('/v1/payouts/:id', handle(s, ({ ctx, params, path }) => s.payouts.update(ctx, String(path.id), parse(updateSchema, params).metadata)));
  r.post('/v1/payouts/:id/cancel', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.payouts.cancel(ctx, String(path.id));
  }));
  r.post('/v1/payouts/:id/reverse', handle(s, ({ ctx, params, path }) => s.payoutReversals.reverse(ctx, String(path.id), parse(reverseSchema, params).metadata)));
  return r;
}
