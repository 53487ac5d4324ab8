import { idempotencyKeyOf, sendIdempotent } from '../http/idempotency.js';
import { scopeOf } from '../http/middleware.js';
import { route } from '../http/route-table.js';
import { CreatePaymentLinkSchema, PaymentLinkListQuerySchema, PaymentLinkListSchema, PaymentLinkSchema } from '../../shared/contract/checkout.js';
import { dataEnvelope, UuidParam } from '../../shared/contract/common.js';
import { z } from '../../shared/contract/zod.js';

const IdParams = z.object({ id: UuidParam });

export const paymentLinkRoutes = [
  route({
    operationId: 'createPaymentLink',
    method: 'post',
    path: '/v1/payment-links',
    scope: 'payment_links:write',
    summary: 'Create a payment link',
    body: CreatePaymentLinkSchema,
    responses: { 201: dataEnvelope(PaymentLinkSchema), 200: dataEnvelope(PaymentLinkSchema) },
    errors: [503],
    idempotent: true,
    async handle({ paymentLinks }, { req, res, body }) {
      const clientKey = idempotencyKeyOf(req);
      sendIdempotent(res, await paymentLinks.create(scopeOf(req), body, clientKey), clientKey);
    },
  }),
  route({
    operationId: 'listPaymentLinks',
    method: 'get',
    path: '/v1/payment-links',
    scope: 'payment_links:read',
    summary: 'List payment links, newest first (limit 1–100, default 10)',
    query: PaymentLinkListQuerySchema,
    responses: { 200: PaymentLinkListSchema },
    async handle({ paymentLinks }, { req, res, query }) {
      res.json(await paymentLinks.list(scopeOf(req), query.limit, query.starting_after));
    },
  }),
  route({
    operationId: 'retrievePaymentLink',
    method: 'get',
    path: '/v1/payment-links/{id}',
    scope: 'payment_links:read',
    summary: 'Retrieve a payment link by uuid or pl_ reference',
    params: IdParams,
    responses: { 200: dataEnvelope(PaymentLinkSchema) },
    async handle({ paymentLinks }, { req, res, params }) {
      res.json({ data: await paymentLinks.get(scopeOf(req), params.id) });
    },
  }),
  route({
    operationId: 'deactivatePaymentLink',
    method: 'delete',
    path: '/v1/payment-links/{id}',
    scope: 'payment_links:write',
    summary: 'Deactivate a payment link (safe to repeat)',
    params: IdParams,
    responses: { 200: dataEnvelope(PaymentLinkSchema) },
    async handle({ paymentLinks }, { req, res, params }) {
      res.json({ data: await paymentLinks.deactivate(scopeOf(req), params.id) });
    },
  }),
];
