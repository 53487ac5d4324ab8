import { Router } from 'express';
import { z } from 'zod';
import { bool, DEFAULT_LIST_LIMIT, expand, listParams, metadata, parse, str } from '../params.js';
import { type Services, handle, page } from '../services.js';

const capabilities = z.record(z.string(), z.object({ requested: bool.optional() }).strict());
const businessProfile = z.record(z.string(), z.string());
const businessType = z.enum(['individual', 'company', 'non_profit', 'government_entity']);

const createSchema = z
  .object({
    type: z.enum(['custom', 'express', 'standard']).optional(),
    country: str.optional(),
    email: str.optional(),
    business_type: businessType.optional(),
    business_profile: businessProfile.optional(),
    capabilities: capabilities.optional(),
    metadata: metadata.optional(),
    controller: z.record(z.string(), z.unknown()).optional(),
    default_currency: str.optional(),
    tos_acceptance: z.record(z.string(), z.unknown()).optional(),
    expand,
  })
  .strict();

const updateSchema = z
  .object({
    email: str.optional(),
    business_type: businessType.optional(),
    business_profile: businessProfile.optional(),
    capabilities: capabilities.optional(),
    metadata: metadata.optional(),
    tos_acceptance: z.record(z.string(), z.unknown()).optional(),
    expand,
  })
  .strict();

const listSchema = z.object(listParams).strict();
const expandOnly = z.object({ expand }).strict();
const capabilityUpdate = z.object({ requested: bool.optional(), expand }).strict();

export function accountsRouter(s: Services): Router {
  const r = Router();
  r.post('/v1/accounts', handle(s, ({ ctx, params }) => s.accounts.create(ctx, parse(createSchema, params))));
  r.get('/v1/accounts', handle(s, ({ ctx, params }) => {
    const p = parse(listSchema, params);
    const { limit, startingAfter, endingBefore } = page(p, DEFAULT_LIST_LIMIT);
    return s.accounts.list(ctx.scope, limit, startingAfter, endingBefore);
  }));
  r.get('/v1/accounts/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.accounts.retrieve(ctx.scope, String(path.id)).body;
  }));
  r.post('/v1/accounts/:id', handle(s, ({ ctx, params, path }) => s.accounts.update(ctx, String(path.id), parse(updateSchema, params))));
  r.get('/v1/accounts/:id/capabilities', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.accounts.listCapabilities(ctx.scope, String(path.id));
  }));
  r.get('/v1/accounts/:id/capabilities/:capability', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.accounts.retrieveCapability(ctx.scope, String(path.id), String(path.capability));
  }));
  r.post('/v1/accounts/:id/capabilities/:capability', handle(s, ({ ctx, params, path }) => {
    const p = parse(capabilityUpdate, params);
    return s.accounts.updateCapability(ctx, String(path.id), String(path.capability), p.requested);
  }));
  return r;
}
