import { Router } from 'express';
import { scopeOf } from '../http/middleware.js';
import { parseInput } from '../http/validate.js';
import type { RouteDoc } from '../openapi.js';
import { dataEnvelope, UuidParam } from '../../shared/contract/common.js';
import { CloseDisputeSchema, DisputeListQuerySchema, DisputeListSchema, DisputeSchema, SubmitEvidenceSchema } from '../../shared/contract/disputes.js';
import { z } from '../../shared/contract/zod.js';
import { pageRequest } from '../pagination.js';
import type { DisputeService } from '../disputes/disputes.js';

const IdParams = z.object({ id: UuidParam });

export const disputeDocs: RouteDoc[] = [
  { method: 'get', path: '/v1/disputes', scope: 'disputes:read', summary: 'List disputes, newest first, optionally of one payment or status', query: DisputeListQuerySchema, response: DisputeListSchema },
  { method: 'get', path: '/v1/disputes/{id}', scope: 'disputes:read', summary: 'Retrieve a dispute by uuid or dp_ reference', params: IdParams, response: dataEnvelope(DisputeSchema) },
  {
    method: 'post',
    path: '/v1/disputes/{id}/evidence',
    scope: 'disputes:write',
    summary: 'Save evidence for a dispute, and with submit: true send it to the card network',
    params: IdParams,
    body: SubmitEvidenceSchema,
    response: dataEnvelope(DisputeSchema),
  },
  { method: 'post', path: '/v1/disputes/{id}/close', scope: 'disputes:write', summary: 'Accept the dispute: it is lost (an inquiry is closed); safe to repeat', params: IdParams, body: CloseDisputeSchema, response: dataEnvelope(DisputeSchema) },
];

export function disputesRouter(disputes: DisputeService): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    const query = parseInput(DisputeListQuerySchema, req.query);
    res.json(await disputes.list(scopeOf(req), pageRequest(query), { transactionId: query.transaction_id, status: query.status }));
  });
  router.get('/:id', async (req, res) => {
    res.json({ data: await disputes.get(scopeOf(req), req.params.id) });
  });
  router.post('/:id/evidence', async (req, res) => {
    const input = parseInput(SubmitEvidenceSchema, req.body ?? {});
    res.json({ data: await disputes.submitEvidence(scopeOf(req), req.params.id, input) });
  });
  router.post('/:id/close', async (req, res) => {
    parseInput(CloseDisputeSchema, req.body ?? {});
    res.json({ data: await disputes.accept(scopeOf(req), req.params.id) });
  });
  return router;
}
