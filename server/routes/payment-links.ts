import { Router } from 'express';
import { idempotencyKeyOf, sendIdempotent } from '../http/idempotency.js';
import { scopeOf } from '../http/middleware.js';
import { parseInput } from '../http/validate.js';
import type { RouteDoc } from '../openapi.js';
import { CreatePaymentLinkSchema, PaymentLinkListQuerySchema, PaymentLinkListSchema, PaymentLinkSchema } from '../../shared/contract/checkout.js';
import { dataEnvelope, UuidParam } from '../../shared/contract/common.js';
import { z } from '../../shared/contract/zod.js';
import type { PaymentLinkService } from '../checkout/payment-links.js';

const IdParams = z.object({ id: UuidParam });

export const paymentLinkDocs: RouteDoc[] = [
  { method: 'post', path: '/v1/payment-links', scope: 'payment_links:write', summary: 'Create a payment link', body: CreatePaymentLinkSchema, status: 201, response: dataEnvelope(PaymentLinkSchema), idempotent: true },
  { method: 'get', path: '/v1/payment-links', scope: 'payment_links:read', summary: 'List payment links, newest first (limit 1–100, default 10)', query: PaymentLinkListQuerySchema, response: PaymentLinkListSchema },
  { method: 'get', path: '/v1/payment-links/{id}', scope: 'payment_links:read', summary: 'Retrieve a payment link by uuid or pl_ reference', params: IdParams, response: dataEnvelope(PaymentLinkSchema) },
  { method: 'delete', path: '/v1/payment-links/{id}', scope: 'payment_links:write', summary: 'Deactivate a payment link (safe to repeat)', params: IdParams, response: dataEnvelope(PaymentLinkSchema) },
];

export function paymentLinksRouter(links: PaymentLinkService): Router {
  const router = Router();
  router.post('/', async (req, res) => {
    const input = parseInput(CreatePaymentLinkSchema, req.body ?? {});
    const clientKey = idempotencyKeyOf(req);
    sendIdempotent(res, await links.create(scopeOf(req), input, clientKey), clientKey);
  });
  router.get('/', async (req, res) => {
    const query = parseInput(PaymentLinkListQuerySchema, req.query);
    res.json(await links.list(scopeOf(req), query.limit, query.starting_after));
  });
  router.get('/:id', async (req, res) => {
    res.json({ data: await links.get(scopeOf(req), req.params.id) });
  });
  router.delete('/:id', async (req, res) => {
    res.json({ data: await links.deactivate(scopeOf(req), req.params.id) });
  });
  return router;
}
