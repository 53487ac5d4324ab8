import { scopeOf } from '../http/middleware.js';
import { route } from '../http/route-table.js';
import { CheckoutSessionSchema, CreateCheckoutSessionSchema } from '../../shared/contract/checkout.js';
import { dataEnvelope, UuidParam } from '../../shared/contract/common.js';
import { z } from '../../shared/contract/zod.js';

const IdParams = z.object({ id: UuidParam });

export const checkoutSessionRoutes = [
  route({
    operationId: 'createCheckoutSession',
    method: 'post',
    path: '/v1/checkout/sessions',
    scope: 'checkout:write',
    summary: 'Create a hosted checkout session (not idempotent: a retry creates a second session)',
    body: CreateCheckoutSessionSchema,
    responses: { 201: dataEnvelope(CheckoutSessionSchema) },
    errors: [502, 503],
    // Idempotency-Key is deliberately not read here (spec §8): it is neither honoured nor echoed.
    async handle({ checkout }, { req, res, body }) {
      res.status(201).json({ data: await checkout.create(scopeOf(req), body) });
    },
  }),
  route({
    operationId: 'retrieveCheckoutSession',
    method: 'get',
    path: '/v1/checkout/sessions/{id}',
    scope: 'checkout:read',
    summary: 'Retrieve a checkout session by uuid or cs_ reference',
    params: IdParams,
    responses: { 200: dataEnvelope(CheckoutSessionSchema) },
    async handle({ checkout }, { req, res, params }) {
      res.json({ data: await checkout.get(scopeOf(req), params.id) });
    },
  }),
];
