import { scopeOf } from '../http/middleware.js';
import { route } from '../http/route-table.js';
import { dataEnvelope, UuidParam } from '../../shared/contract/common.js';
import { CloseDisputeSchema, DisputeListQuerySchema, DisputeListSchema, DisputeSchema, SubmitEvidenceSchema } from '../../shared/contract/disputes.js';
import { z } from '../../shared/contract/zod.js';
import { pageRequest } from '../pagination.js';

const IdParams = z.object({ id: UuidParam });

export const disputeRoutes = [
  route({
    operationId: 'listDisputes',
    method: 'get',
    path: '/v1/disputes',
    scope: 'disputes:read',
    summary: 'List disputes, newest first, optionally of one payment or status',
    query: DisputeListQuerySchema,
    responses: { 200: DisputeListSchema },
    async handle({ disputes }, { req, res, query }) {
      res.json(await disputes.list(scopeOf(req), pageRequest(query), { transactionId: query.transaction_id, status: query.status }));
    },
  }),
  route({
    operationId: 'retrieveDispute',
    method: 'get',
    path: '/v1/disputes/{id}',
    scope: 'disputes:read',
    summary: 'Retrieve a dispute by uuid or dp_ reference',
    params: IdParams,
    responses: { 200: dataEnvelope(DisputeSchema) },
    async handle({ disputes }, { req, res, params }) {
      res.json({ data: await disputes.get(scopeOf(req), params.id) });
    },
  }),
  route({
    operationId: 'submitDisputeEvidence',
    method: 'post',
    path: '/v1/disputes/{id}/evidence',
    scope: 'disputes:write',
    summary: 'Save evidence for a dispute, and with submit: true send it to the card network',
    params: IdParams,
    body: SubmitEvidenceSchema,
    responses: { 200: dataEnvelope(DisputeSchema) },
    errors: [502, 503],
    conflicts: ['dispute_closed', 'dispute_under_review'],
    async handle({ disputes }, { req, res, params, body }) {
      res.json({ data: await disputes.submitEvidence(scopeOf(req), params.id, body) });
    },
  }),
  route({
    operationId: 'closeDispute',
    method: 'post',
    path: '/v1/disputes/{id}/close',
    scope: 'disputes:write',
    summary: 'Accept the dispute: it is lost (an inquiry is closed); safe to repeat',
    params: IdParams,
    body: CloseDisputeSchema,
    responses: { 200: dataEnvelope(DisputeSchema) },
    errors: [502, 503],
    conflicts: ['dispute_closed', 'dispute_under_review'],
    async handle({ disputes }, { req, res, params }) {
      res.json({ data: await disputes.accept(scopeOf(req), params.id) });
    },
  }),
];
