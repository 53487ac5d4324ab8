import { Router } from 'express';
import { z } from 'zod';
import { bool, DEFAULT_LIST_LIMIT, expand, listParams, metadata, optionalText, parse, str, stringList } from '../params.js';
import { type Services, handle, page } from '../services.js';

const createSchema = z
  .object({
    url: str,
    enabled_events: stringList,
    connect: bool.optional(),
    description: optionalText.optional(),
    metadata: metadata.optional(),
    api_version: str.optional(),
    expand,
  })
  .strict();
const updateSchema = z
  .object({ url: str.optional(), enabled_events: stringList.optional(), disabled: bool.optional(), description: optionalText.optional(), metadata: metadata.optional(), expand })
  .strict();
const listSchema = z.object(listParams).strict();
const eventList = z
  .object({ ...listParams, type: str.optional(), types: stringList.optional(), delivery_success: bool.optional() })
  .strict();
const expandOnly = z.object({ expand }).strict();

export function webhooksRouter(s: Services): Router {
  const r = Router();
  r.post('/v1/webhook_endpoints', handle(s, ({ ctx, params }) => s.endpoints.create(ctx.scope, parse(createSchema, params))));
  r.get('/v1/webhook_endpoints', handle(s, ({ ctx, params }) => s.endpoints.list(ctx.scope, page(parse(listSchema, params), DEFAULT_LIST_LIMIT))));
  r.get('/v1/webhook_endpoints/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.endpoints.retrieve(ctx.scope, String(path.id));
  }));
  r.post('/v1/webhook_endpoints/:id', handle(s, ({ ctx, params, path }) => s.endpoints.update(ctx.scope, String(path.id), parse(updateSchema, params))));
  r.delete('/v1/webhook_endpoints/:id', handle(s, ({ ctx, path }) => s.endpoints.remove(ctx.scope, String(path.id))));

  r.get('/v1/events', handle(s, ({ ctx, params }) => {
    const p = parse(eventList, params);
    return s.events.list(ctx.scope, { type: p.type, types: p.types }, page(p, DEFAULT_LIST_LIMIT));
  }));
  r.get('/v1/events/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.events.retrieve(ctx.scope, String(path.id), s.kernel);
  }));
  return r;
}
