import { Router } from 'express';
import { z } from 'zod';
import { bool, DEFAULT_LIST_LIMIT, expand, listParams, metadata, parse, str } from '../params.js';
import { type Services, handle, page } from '../services.js';
import { EVIDENCE_FIELDS } from '../../engine/disputes/types.js';

const evidence = z.object(Object.fromEntries(EVIDENCE_FIELDS.map((field) => [field, str.optional()]))).strict();
const updateSchema = z
  .object({
    evidence: evidence.optional(),
    metadata: metadata.optional(),
    submit: bool.optional(),
    intended_submission_method: z.enum(['manual', 'prefer_manual', 'prefer_smart_disputes', 'smart_disputes']).optional(),
    expand,
  })
  .strict();
const listSchema = z.object({ ...listParams, charge: str.optional(), payment_intent: str.optional() }).strict();
const expandOnly = z.object({ expand }).strict();

export function disputesRouter(s: Services): Router {
  const r = Router();
  r.get('/v1/disputes', handle(s, ({ ctx, params }) => {
    const p = parse(listSchema, params);
    return s.disputes.list(ctx.scope, { charge: p.charge, payment_intent: p.payment_intent }, page(p, DEFAULT_LIST_LIMIT));
  }));
  r.get('/v1/disputes/:id', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.disputes.retrieve(ctx.scope, String(path.id));
  }));
  r.post('/v1/disputes/:id', handle(s, ({ ctx, params, path }) => {
    const p = parse(updateSchema, params);
    return s.disputes.update(ctx, String(path.id), { evidence: p.evidence, metadata: p.metadata, submit: p.submit });
  }));
  r.post('/v1/disputes/:id/close', handle(s, ({ ctx, params, path }) => {
    parse(expandOnly, params);
    return s.disputes.close(ctx, String(path.id));
  }));
  return r;
}
