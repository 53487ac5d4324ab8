import { Router } from 'express';
import { z } from 'zod';
import { DEFAULT_LIST_LIMIT, expand, int, searchSchema, listParams, metadata, optionalText, parse, str, stringList } from '../params.js';
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

const taxIdCreate = z.object({ type: str, value: str, expand }).strict();
const balanceTxnCreate = z.object({ amount: int, currency: str, description: str.optional(), metadata: metadata.optional(), expand }).strict();
const balanceTxnUpdate = z.object({ description: str.optional(), metadata: metadata.optional(), expand }).strict();
const sourceCreate = z.object({ source: str, metadata: metadata.optional(), validate: z.unknown().optional(), expand }).strict();
const sourceUpdate = z
  .object({
    name: str.optional(),
    account_holder_name: str.optional(),
    account_holder_type: z.unknown().optional(),
    exp_month: int.optional(),
    exp_year: int.optional(),
    metadata: metadata.optional(),
    address_city: z.unknown().optional(),
    address_country: z.unknown().optional(),
    address_line1: z.unknown().optional(),
    address_line2: z.unknown().optional(),
    address_state: z.unknown().optional(),
    address_zip: z.unknown().optional(),
    expand,
  })
  .strict();
const sourceVerify = z.object({ amounts: z.array(int).optional(), expand }).strict();
const sourceList = z.object({ ...listParams, object: str.optional() }).strict();
const plainList = z.object(listParams).strict();

const cashBalanceUpdate = z.object({ settings: z.object({ reconciliation_mode: z.enum(['automatic', 'manual', 'merchant_default']).optional() }).strict().optional(), expand }).strict();
const fundCashBalance = z.object({ amount: int, currency: str, reference: str.optional(), expand }).strict();
const fundingInstructionsCreate = z
  .object({
    currency: str,
    funding_type: str,
    bank_transfer: z
      .object({ type: str, requested_address_types: stringList.optional(), eu_bank_transfer: z.object({ country: str }).strict().optional() })
      .strict(),
    expand,
  })
  .strict();

/** Tax ids, customer balance transactions, legacy sources (`engine/customers/customerObjects.ts`) and the cash balance (`cashBalances.ts`). */
export function customerObjectsRouter(s: Services): Router {
  const r = Router();
  const o = s.customerObjects;
  r.get('/v1/customers/:id/cash_balance', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.cashBalances.retrieve(ctx.scope, String(path.id));
  }));
  r.post('/v1/customers/:id/cash_balance', handle(s, ({ ctx, params, path }) => s.cashBalances.update(ctx, String(path.id), parse(cashBalanceUpdate, params).settings?.reconciliation_mode)));
  r.get('/v1/customers/:id/cash_balance_transactions', handle(s, ({ ctx, params, path }) => s.cashBalances.listTransactions(ctx.scope, String(path.id), page(parse(plainList, params), DEFAULT_LIST_LIMIT))));
  r.get('/v1/customers/:id/cash_balance_transactions/:child', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.cashBalances.retrieveTransaction(ctx.scope, String(path.id), String(path.child));
  }));
  r.post('/v1/test_helpers/customers/:id/fund_cash_balance', handle(s, ({ ctx, params, path }) => {
    const { expand: _expand, ...input } = parse(fundCashBalance, params);
    return s.cashBalancePayments.receive(ctx, String(path.id), input);
  }));
  r.post('/v1/customers/:id/funding_instructions', handle(s, ({ ctx, params, path }) => {
    const { expand: _expand, ...input } = parse(fundingInstructionsCreate, params);
    return s.cashBalances.fundingInstructions(ctx, String(path.id), input);
  }));
  r.post('/v1/customers/:id/tax_ids', handle(s, ({ ctx, params, path }) => {
    const p = parse(taxIdCreate, params);
    return o.createTaxId(ctx, String(path.id), { type: p.type, value: p.value });
  }));
  r.get('/v1/customers/:id/tax_ids', handle(s, ({ ctx, params, path }) => o.listTaxIds(ctx.scope, String(path.id), page(parse(plainList, params), DEFAULT_LIST_LIMIT))));
  r.get('/v1/customers/:id/tax_ids/:child', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return o.retrieveTaxId(ctx.scope, String(path.id), String(path.child));
  }));
  r.delete('/v1/customers/:id/tax_ids/:child', handle(s, ({ ctx, path }) => o.deleteTaxId(ctx, String(path.id), String(path.child))));
  r.post('/v1/customers/:id/balance_transactions', handle(s, ({ ctx, params, path }) => {
    const { expand: _expand, ...input } = parse(balanceTxnCreate, params);
    return o.createBalanceTransaction(ctx, String(path.id), input);
  }));
  r.get('/v1/customers/:id/balance_transactions', handle(s, ({ ctx, params, path }) => o.listBalanceTransactions(ctx.scope, String(path.id), page(parse(plainList, params), DEFAULT_LIST_LIMIT))));
  r.get('/v1/customers/:id/balance_transactions/:child', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return o.retrieveBalanceTransaction(ctx.scope, String(path.id), String(path.child));
  }));
  r.post('/v1/customers/:id/balance_transactions/:child', handle(s, ({ ctx, params, path }) => {
    const { expand: _expand, ...input } = parse(balanceTxnUpdate, params);
    return o.updateBalanceTransaction(ctx, String(path.id), String(path.child), input);
  }));
  r.post('/v1/customers/:id/sources', handle(s, ({ ctx, params, path }) => {
    const p = parse(sourceCreate, params);
    return o.createSource(ctx, String(path.id), { source: p.source, metadata: p.metadata });
  }));
  r.get('/v1/customers/:id/sources', handle(s, ({ ctx, params, path }) => {
    const p = parse(sourceList, params);
    return o.listSources(ctx.scope, String(path.id), p.object, page(p, DEFAULT_LIST_LIMIT));
  }));
  r.get('/v1/customers/:id/sources/:child', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return o.retrieveSource(ctx.scope, String(path.id), String(path.child));
  }));
  r.post('/v1/customers/:id/sources/:child', handle(s, ({ ctx, params, path }) => {
    const p = parse(sourceUpdate, params);
    return o.updateSource(ctx, String(path.id), String(path.child), { name: p.name, account_holder_name: p.account_holder_name, exp_month: p.exp_month, exp_year: p.exp_year, metadata: p.metadata });
  }));
  r.post('/v1/customers/:id/sources/:child/verify', handle(s, ({ ctx, params, path }) => o.verifySource(ctx, String(path.id), String(path.child), parse(sourceVerify, params).amounts)));
  r.delete('/v1/customers/:id/sources/:child', handle(s, ({ ctx, path }) => o.deleteSource(ctx, String(path.id), String(path.child))));
  return r;
}
