import { Router } from 'express';
import { z } from 'zod';
import { DEFAULT_LIST_LIMIT, expand, int, listParams, metadata, parse, str } from '../params.js';
import { type Services, handle, page } from '../services.js';
import { paymentMethodData } from './paymentIntents.js';

const createSchema = paymentMethodData.extend({ expand }).strict();
const expandOnly = z.object({ expand }).strict();
const attachSchema = z.object({ customer: str, expand }).strict();
const listSchema = z.object({ ...listParams, customer: str.optional(), type: str.optional(), allow_redisplay: str.optional() }).strict();
const updateSchema = z
  .object({
    billing_details: z
      .object({ name: str.optional(), email: str.optional(), phone: str.optional(), address: z.record(z.string(), z.string()).optional() })
      .strict()
      .optional(),
    card: z.object({ exp_month: int.optional(), exp_year: int.optional() }).strict().optional(),
    allow_redisplay: z.enum(['always', 'limited', 'unspecified']).optional(),
    metadata: metadata.optional(),
    expand,
  })
  .strict();

export function paymentMethodsRouter(s: Services): Router {
  const r = Router();
  r.post('/v1/payment_methods', handle(s, ({ ctx, params }) => s.paymentMethods.create(ctx, parse(createSchema, params), '').body));
  r.get('/v1/payment_methods', handle(s, ({ ctx, params }) => {
    const p = parse(listSchema, params);
    return s.savedPaymentMethods.list(ctx.scope, { customer: p.customer, type: p.type }, page(p, DEFAULT_LIST_LIMIT), '/v1/payment_methods');
  }));
  r.get('/v1/customers/:id/payment_methods', handle(s, ({ ctx, params, path }) => {
    const p = parse(listSchema.omit({ customer: true }), params);
    return s.savedPaymentMethods.list(ctx.scope, { customer: String(path.id), type: p.type }, page(p, DEFAULT_LIST_LIMIT), `/v1/customers/${String(path.id)}/payment_methods`);
  }));
  r.get('/v1/payment_methods/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.paymentMethods.retrieve(ctx.scope, String(path.id));
  }));
  r.post('/v1/payment_methods/:id', handle(s, ({ ctx, params, path }) => {
    const { expand: _expand, ...input } = parse(updateSchema, params);
    return s.savedPaymentMethods.update(ctx, String(path.id), input);
  }));
  r.post('/v1/payment_methods/:id/attach', handle(s, ({ ctx, params, path }) => s.savedPaymentMethods.attach(ctx, String(path.id), parse(attachSchema, params).customer)));
  r.post('/v1/payment_methods/:id/detach', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.savedPaymentMethods.detach(ctx, String(path.id));
  }));
  return r;
}
