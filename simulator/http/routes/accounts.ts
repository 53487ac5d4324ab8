import { Router } from 'express';
import { z } from 'zod';
import { bool, DEFAULT_LIST_LIMIT, expand, int, listParams, metadata, parse, str } from '../params.js';
import { type Services, handle, page } from '../services.js';

const capabilities = z.record(z.string(), z.object({ requested: bool.optional() }).strict());
const businessProfile = z.record(z.string(), z.string());
const businessType = z.enum(['individual', 'company', 'non_profit', 'government_entity']);
const settings = z
  .object({
    payouts: z
      .object({
        schedule: z
          .object({ interval: str.optional(), delay_days: z.union([z.literal('minimum'), int]).optional() })
          .strict()
          .optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
const bankAccountHash = z
  .object({
    object: str,
    account_number: str.optional(),
    routing_number: str.optional(),
    country: str.optional(),
    currency: str.optional(),
    account_holder_name: str.optional(),
    account_holder_type: z.enum(['individual', 'company']).optional(),
  })
  .strict();
const externalAccountCreate = z
  .object({ external_account: z.union([str, bankAccountHash]), default_for_currency: bool.optional(), metadata: metadata.optional(), expand })
  .strict();
const externalAccountList = z.object({ ...listParams, object: z.enum(['bank_account', 'card']).optional() }).strict();

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
    settings: settings.optional(),
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
    settings: settings.optional(),
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
  r.post('/v1/accounts/:id/external_accounts', handle(s, ({ ctx, params, path }) => {
    const account = s.accounts.retrieve(ctx.scope, String(path.id));
    return s.bankAccounts.create(ctx, account.id, parse(externalAccountCreate, params));
  }));
  r.get('/v1/accounts/:id/external_accounts', handle(s, ({ ctx, params, path }) => {
    const p = parse(externalAccountList, params);
    const account = s.accounts.retrieve(ctx.scope, String(path.id));
    // Bank accounts only, a handful per account: one page holds them all.
    return p.object === 'card' ? { ...s.bankAccounts.list(ctx.scope.livemode, account.id), data: [] } : s.bankAccounts.list(ctx.scope.livemode, account.id);
  }));
  r.get('/v1/accounts/:id/external_accounts/:external', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    const account = s.accounts.retrieve(ctx.scope, String(path.id));
    return s.bankAccounts.retrieve(ctx.scope.livemode, account.id, String(path.external));
  }));
  return r;
}
