import { Router } from 'express';
import { z } from 'zod';
import { DEFAULT_LIST_LIMIT, expand, listParams, parse, str } from '../params.js';
import { type Services, handle, page } from '../services.js';

const expandOnly = z.object({ expand }).strict();
const listSchema = z
  .object({ ...listParams, type: str.optional(), source: str.optional(), currency: str.optional(), payout: str.optional() })
  .strict();

export function balanceRouter(s: Services): Router {
  const r = Router();
  r.get('/v1/balance', handle(s, ({ ctx, params }) => {
    parse(expandOnly, params);
    return s.ledger.balance(ctx.scope);
  }));
  r.get('/v1/balance_transactions', handle(s, ({ ctx, params }) => {
    const p = parse(listSchema, params);
    // A payout's own transaction is the one whose source it is; the simulator does not link the
    // charges an automatic payout swept up, so `payout` filters to that one transaction.
    return s.ledger.list(ctx.scope, { type: p.type, source: p.source ?? p.payout, currency: p.currency?.toLowerCase() }, page(p, DEFAULT_LIST_LIMIT));
  }));
  r.get('/v1/balance_transactions/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.ledger.retrieve(ctx.scope, String(path.id));
  }));
  return r;
}
