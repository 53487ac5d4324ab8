import { Router } from 'express';
import { z } from 'zod';
import { DEFAULT_LIST_LIMIT, expand, searchSchema, listParams, metadata, optionalText, parse, str, stringList } from '../params.js';
import { type Services, handle, page } from '../services.js';
import { search } from '../../engine/search.js';

/** Stripe's searchable customer fields (docs.stripe.com/search#query-fields-for-customers). */
const CUSTOMER_SEARCH_FIELDS = ['created', 'email', 'metadata', 'name', 'phone'] as const;

const address = z.union([z.literal(''), z.record(z.string(), z.string())]);
const fields = {
  name: optionalText.optional(),
  email: optionalText.optional(),
  phone: optionalText.optional(),
  description: optionalText.optional(),
  metadata: metadata.optional(),
  address: address.optional(),
  preferred_locales: stringList.optional(),
  expand,
};
const writeSchema = z.object(fields).strict();
const listSchema = z.object({ ...listParams, email: str.optional() }).strict();
const expandOnly = z.object({ expand }).strict();

export function customersRouter(s: Services): Router {
  const r = Router();
  r.post('/v1/customers', handle(s, ({ ctx, params }) => s.customers.create(ctx, parse(writeSchema, params))));
  r.get('/v1/customers', handle(s, ({ ctx, params }) => {
    const p = parse(listSchema, params);
    return s.customers.list(ctx.scope, { email: p.email }, page(p, DEFAULT_LIST_LIMIT));
  }));
  r.get('/v1/customers/search', handle(s, ({ ctx, params }) => search(s.kernel, 'customer', ctx.scope, 'customers', CUSTOMER_SEARCH_FIELDS, parse(searchSchema, params))));
  r.get('/v1/customers/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.customers.retrieve(ctx.scope, String(path.id));
  }));
  r.post('/v1/customers/:id', handle(s, ({ ctx, params, path }) => s.customers.update(ctx, String(path.id), parse(writeSchema, params))));
  r.delete('/v1/customers/:id', handle(s, ({ ctx, path }) => s.customers.remove(ctx, String(path.id))));
  return r;
}
