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

const address = z
  .object({ line1: str.optional(), line2: str.optional(), city: str.optional(), state: str.optional(), postal_code: str.optional(), country: str.optional() })
  .strict();
const individual = z
  .object({
    first_name: str.optional(),
    last_name: str.optional(),
    email: str.optional(),
    phone: str.optional(),
    dob: z.union([z.literal(''), z.object({ day: int, month: int, year: int }).strict()]).optional(),
    address: address.optional(),
    id_number: str.optional(),
    ssn_last_4: str.optional(),
  })
  .strict();
const company = z
  .object({
    name: str.optional(),
    phone: str.optional(),
    tax_id: str.optional(),
    address: address.optional(),
    owners_provided: bool.optional(),
    directors_provided: bool.optional(),
    executives_provided: bool.optional(),
  })
  .strict();
const tosAcceptance = z
  .object({ date: int.optional(), ip: str.optional(), user_agent: str.optional(), service_agreement: z.enum(['full', 'recipient']).optional() })
  .strict();
const controller = z
  .object({
    fees: z.object({ payer: z.enum(['account', 'application']).optional() }).strict().optional(),
    losses: z.object({ payments: z.enum(['application', 'stripe']).optional() }).strict().optional(),
    requirement_collection: z.enum(['application', 'stripe']).optional(),
    stripe_dashboard: z.object({ type: z.enum(['express', 'full', 'none']).optional() }).strict().optional(),
  })
  .strict();

/** Fields both create and update take. */
export const accountUpdateFields = {
  email: str.optional(),
  business_type: businessType.optional(),
  business_profile: businessProfile.optional(),
  individual: individual.optional(),
  company: company.optional(),
  tos_acceptance: tosAcceptance.optional(),
  external_account: z.union([str, bankAccountHash]).optional(),
  capabilities: capabilities.optional(),
  metadata: metadata.optional(),
  settings: settings.optional(),
  expand,
};

const createSchema = z
  .object({
    ...accountUpdateFields,
    type: z.enum(['custom', 'express', 'standard']).optional(),
    controller: controller.optional(),
    country: str.optional(),
    default_currency: str.optional(),
  })
  .strict();

const updateSchema = z.object(accountUpdateFields).strict();

const collectFields = z.enum(['currently_due', 'eventually_due']);
const accountLinkSchema = z
  .object({
    account: str,
    type: z.enum(['account_onboarding', 'account_update']),
    refresh_url: str.optional(),
    return_url: str.optional(),
    collect: collectFields.optional(),
    collection_options: z.object({ fields: collectFields.optional(), future_requirements: z.enum(['include', 'omit']).optional() }).strict().optional(),
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
  r.post('/v1/account_links', handle(s, ({ ctx, params }) => s.accountLinks.create(ctx, parse(accountLinkSchema, params))));
  r.post('/v1/accounts/:id', handle(s, ({ ctx, params, path }) => s.accounts.update(ctx, String(path.id), parse(updateSchema, params))));
  r.get('/v1/accounts/:id/capabilities', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.capabilities.listCapabilities(ctx.scope, String(path.id));
  }));
  r.get('/v1/accounts/:id/capabilities/:capability', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.capabilities.retrieveCapability(ctx.scope, String(path.id), String(path.capability));
  }));
  r.post('/v1/accounts/:id/capabilities/:capability', handle(s, ({ ctx, params, path }) => {
    const p = parse(capabilityUpdate, params);
    return s.capabilities.updateCapability(ctx, String(path.id), String(path.capability), p.requested);
  }));
  r.post('/v1/accounts/:id/external_accounts', handle(s, ({ ctx, params, path }) => {
    return s.accounts.addExternalAccount(ctx, String(path.id), parse(externalAccountCreate, params));
  }));
  r.get('/v1/accounts/:id/external_accounts', handle(s, ({ ctx, params, path }) => {
    const p = parse(externalAccountList, params);
    const account = s.accounts.retrieve(ctx.scope, String(path.id));
    // A handful per account: one page holds them all.
    return s.bankAccounts.listExternal(ctx.scope.livemode, account.id, p.object);
  }));
  r.get('/v1/accounts/:id/external_accounts/:external', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    const account = s.accounts.retrieve(ctx.scope, String(path.id));
    return s.bankAccounts.retrieveExternal(ctx.scope.livemode, account.id, String(path.external));
  }));
  return r;
}
