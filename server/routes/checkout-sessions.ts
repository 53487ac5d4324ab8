import { Router } from 'express';
import { scopeOf } from '../http/middleware.js';
import { parseInput } from '../http/validate.js';
import type { RouteDoc } from '../openapi.js';
import { CheckoutSessionSchema, CreateCheckoutSessionSchema } from '../../shared/contract/checkout.js';
import { dataEnvelope, UuidParam } from '../../shared/contract/common.js';
import { z } from '../../shared/contract/zod.js';
import type { CheckoutService } from '../checkout/sessions.js';

const IdParams = z.object({ id: UuidParam });

export const checkoutSessionDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/checkout/sessions',
    scope: 'checkout:write',
    summary: 'Create a hosted checkout session (not idempotent: a retry creates a second session)',
    body: CreateCheckoutSessionSchema,
    status: 201,
    response: dataEnvelope(CheckoutSessionSchema),
  },
  { method: 'get', path: '/v1/checkout/sessions/{id}', scope: 'checkout:read', summary: 'Retrieve a checkout session by uuid or cs_ reference', params: IdParams, response: dataEnvelope(CheckoutSessionSchema) },
];

export function checkoutSessionsRouter(checkout: CheckoutService): Router {
  const router = Router();
  // Idempotency-Key is deliberately not read here (spec §8): it is neither honoured nor echoed.
  router.post('/', async (req, res) => {
    const input = parseInput(CreateCheckoutSessionSchema, req.body ?? {});
    res.status(201).json({ data: await checkout.create(scopeOf(req), input) });
  });
  router.get('/:id', async (req, res) => {
    res.json({ data: await checkout.get(scopeOf(req), req.params.id) });
  });
  return router;
}
