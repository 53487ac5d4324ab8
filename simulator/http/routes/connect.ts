import { Router } from 'express';
import { z } from 'zod';
import { bool, DEFAULT_LIST_LIMIT, expand, int, listParams, metadata, parse, str } from '../params.js';
import { type Services, handle, page } from '../services.js';

/** The platform's own account, deleting and rejecting accounts, login links, persons and external account changes. */

const expandOnly = z.object({ expand }).strict();
const rejectSchema = z.object({ reason: z.enum(['fraud', 'terms_of_service', 'other']), expand }).strict();
const relationship = z
  .object({
    authorizer: bool.optional(),
    director: bool.optional(),
    executive: bool.optional(),
    legal_guardian: bool.optional(),
    owner: bool.optional(),
    percent_ownership: z.union([int, z.string().regex(/^\d+(\.\d+)?$/).transform(Number)]).optional(),
    representative: bool.optional(),
    title: str.optional(),
  })
  .strict();
const personSchema = z
  .object({
    first_name: str.optional(),
    last_name: str.optional(),
    email: str.optional(),
    phone: str.optional(),
    dob: z.object({ day: int, month: int, year: int }).strict().optional(),
    address: z.record(z.string(), z.string()).optional(),
    relationship: relationship.optional(),
    metadata: metadata.optional(),
    expand,
  })
  .strict();
const personList = z.object({ ...listParams, relationship: z.record(z.string(), str).optional() }).strict();
const externalUpdate = z
  .object({
    account_holder_name: str.optional(),
    account_holder_type: z.enum(['individual', 'company']).optional(),
    name: str.optional(),
    default_for_currency: bool.optional(),
    metadata: metadata.optional(),
    expand,
  })
  .strict();

export function connectRouter(s: Services): Router {
  const r = Router();
  const zeroBalance = (scope: { livemode: boolean; account: string | null }): boolean => {
    const balance = s.ledger.balance(scope);
    return [...balance.available, ...balance.pending].every((entry) => entry.amount === 0);
  };
  r.get('/v1/account', handle(s, ({ ctx, params }) => {
    parse(expandOnly, params);
    return s.accountAdmin.current(ctx.scope);
  }));
  r.delete('/v1/accounts/:id', handle(s, ({ ctx, path }) => s.accountAdmin.remove(ctx, String(path.id), zeroBalance)));
  r.post('/v1/accounts/:id/reject', handle(s, ({ ctx, params, path }) => s.accountAdmin.reject(ctx, String(path.id), parse(rejectSchema, params).reason)));
  r.post('/v1/accounts/:id/login_links', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.accountAdmin.loginLink(ctx, String(path.id));
  }));
  r.post('/v1/accounts/:id/persons', handle(s, ({ ctx, params, path }) => {
    const { expand: _expand, ...input } = parse(personSchema, params);
    return s.accountAdmin.createPerson(ctx, String(path.id), input);
  }));
  r.get('/v1/accounts/:id/persons', handle(s, ({ ctx, params, path }) => s.accountAdmin.listPersons(ctx, String(path.id), page(parse(personList, params), DEFAULT_LIST_LIMIT))));
  r.get('/v1/accounts/:id/persons/:person', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.accountAdmin.retrievePerson(ctx, String(path.id), String(path.person));
  }));
  r.post('/v1/accounts/:id/persons/:person', handle(s, ({ ctx, params, path }) => {
    const { expand: _expand, ...input } = parse(personSchema, params);
    return s.accountAdmin.updatePerson(ctx, String(path.id), String(path.person), input);
  }));
  r.delete('/v1/accounts/:id/persons/:person', handle(s, ({ ctx, path }) => s.accountAdmin.deletePerson(ctx, String(path.id), String(path.person))));
  r.post('/v1/accounts/:id/external_accounts/:external', handle(s, ({ ctx, params, path }) => {
    const account = s.accounts.retrieve(ctx.scope, String(path.id));
    const { expand: _expand, ...input } = parse(externalUpdate, params);
    return s.bankAccounts.update(ctx, account.id, String(path.external), input);
  }));
  r.delete('/v1/accounts/:id/external_accounts/:external', handle(s, ({ ctx, path }) => {
    const account = s.accounts.retrieve(ctx.scope, String(path.id));
    return s.bankAccounts.remove(ctx, account.id, String(path.external));
  }));
  return r;
}
