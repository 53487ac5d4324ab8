import { Router } from 'express';
import { z } from 'zod';
import { bool, DEFAULT_LIST_LIMIT, expand, int, listParams, metadata, parse, str } from '../params.js';
import { type Services, handle, page } from '../services.js';

const createSchema = z
  .object({
    payment_intent: str.optional(),
    charge: str.optional(),
    amount: int.optional(),
    reason: z.enum(['duplicate', 'fraudulent', 'requested_by_customer']).optional(),
    reverse_transfer: bool.optional(),
    refund_application_fee: bool.optional(),
    metadata: metadata.optional(),
    instructions_email: str.optional(),
    expand,
  })
  .strict();
const updateSchema = z.object({ metadata: metadata.optional(), expand }).strict();
const listSchema = z.object({ ...listParams, payment_intent: str.optional(), charge: str.optional() }).strict();
const expandOnly = z.object({ expand }).strict();

export function refundsRouter(s: Services): Router {
  const r = Router();
  r.post('/v1/refunds', handle(s, ({ ctx, params }) => s.refunds.create(ctx, parse(createSchema, params))));
  r.get('/v1/refunds', handle(s, ({ ctx, params }) => {
    const p = parse(listSchema, params);
    return s.refunds.list(ctx.scope, { payment_intent: p.payment_intent, charge: p.charge }, page(p, DEFAULT_LIST_LIMIT));
  }));
  r.get('/v1/refunds/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.refunds.retrieve(ctx.scope, String(path.id));
  }));
  r.post('/v1/refunds/:id', handle(s, ({ ctx, params, path }) => s.refunds.update(ctx.scope, String(path.id), parse(updateSchema, params).metadata)));
  return r;
}
