import { Router } from 'express';
import { z } from 'zod';
import { expand, parse } from '../params.js';
import { type Services, handle } from '../services.js';
import { paymentMethodData } from './paymentIntents.js';

const createSchema = paymentMethodData.extend({ expand }).strict();
const expandOnly = z.object({ expand }).strict();

export function paymentMethodsRouter(s: Services): Router {
  const r = Router();
  r.post('/v1/payment_methods', handle(s, ({ ctx, params }) => s.paymentMethods.create(ctx, parse(createSchema, params), '').body));
  r.get('/v1/payment_methods/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.paymentMethods.retrieve(ctx.scope, String(path.id));
  }));
  return r;
}
