import { scopeOf } from '../http/middleware.js';
import { idempotencyKeyOf, sendIdempotent } from '../http/idempotency.js';
import { route } from '../http/route-table.js';
import { sendJson } from '../http/send.js';
import { dataEnvelope, ListQuerySchema, UuidParam } from '../../shared/contract/common.js';
import {
  CancelResponseSchema,
  CancelSchema,
  CaptureSchema,
  CreateRefundSchema,
  CreateTransactionResponseSchema,
  CreateTransactionSchema,
  RefundListSchema,
  ReceiptSchema,
  RefundSchema,
  TransactionListQuerySchema,
  TransactionListSchema,
  TransactionSchema,
} from '../../shared/contract/transactions.js';
import { z } from '../../shared/contract/zod.js';
import { pageRequest } from '../pagination.js';
import type { Services } from '../services.js';

const IdParams = z.object({ id: UuidParam });

/** A payment create, under its own path and its alias; a decline is the 402 that carries the failed payment. */
function createPayment(operationId: string, path: string, summary: string) {
  return route({
    operationId,
    method: 'post',
    path,
    scope: 'transactions:write',
    summary,
    body: CreateTransactionSchema,
    responses: { 201: CreateTransactionResponseSchema, 200: CreateTransactionResponseSchema },
    errors: [402, 502, 503],
    idempotent: true,
    async handle({ transactions }: Services, { req, res, body }) {
      const { idempotency_key: bodyKey, ...rest } = body;
      const clientKey = idempotencyKeyOf(req, bodyKey);
      const result = await transactions.create(scopeOf(req), { input: rest, source: 'api', terminalId: null, response: 'transaction' }, clientKey);
      sendIdempotent(res, result, clientKey);
    },
  });
}

export const transactionRoutes = [
  createPayment('createTransaction', '/v1/transactions', 'Create a payment'),
  createPayment('createPaymentIntent', '/v1/payment-intents', 'Alias of POST /v1/transactions'),
  route({
    operationId: 'listTransactions',
    method: 'get',
    path: '/v1/transactions',
    scope: 'transactions:read',
    summary: 'List payments, newest first',
    query: TransactionListQuerySchema,
    responses: { 200: TransactionListSchema },
    async handle({ transactions }, { req, res, query }) {
      res.json(await transactions.list(scopeOf(req), pageRequest(query), { status: query.status, channel: query.channel }));
    },
  }),
  route({
    operationId: 'retrieveTransaction',
    method: 'get',
    path: '/v1/transactions/{id}',
    scope: 'transactions:read',
    summary: 'Retrieve a payment by uuid or txn_ reference',
    params: IdParams,
    responses: { 200: dataEnvelope(TransactionSchema) },
    async handle({ transactions }, { req, res, params }) {
      sendJson(res, 200, { data: await transactions.get(scopeOf(req), params.id) });
    },
  }),
  route({
    operationId: 'retrieveTransactionReceipt',
    method: 'get',
    path: '/v1/transactions/{id}/receipt',
    scope: 'transactions:read',
    summary: "A paid payment's receipt as structured lines (what its receipt page and a receipt printer show)",
    params: IdParams,
    responses: { 200: dataEnvelope(ReceiptSchema) },
    errors: [502, 503],
    async handle({ transactions }, { req, res, params }) {
      sendJson(res, 200, { data: await transactions.receipt(scopeOf(req), params.id) });
    },
  }),
  route({
    operationId: 'captureTransaction',
    method: 'post',
    path: '/v1/transactions/{id}/capture',
    scope: 'transactions:write',
    summary: 'Capture a manual-capture payment',
    params: IdParams,
    body: CaptureSchema,
    responses: { 200: dataEnvelope(TransactionSchema) },
    errors: [502, 503],
    conflicts: ['transaction_not_capturable', 'transaction_being_created'],
    async handle({ transactions }, { req, res, params, body }) {
      res.json({ data: transactions.present(await transactions.capture(scopeOf(req), params.id, body.amount_to_capture)) });
    },
  }),
  route({
    operationId: 'cancelTransaction',
    method: 'post',
    path: '/v1/transactions/{id}/cancel',
    scope: 'transactions:write',
    summary: 'Cancel an uncaptured payment (safe to repeat)',
    params: IdParams,
    body: CancelSchema,
    responses: { 200: CancelResponseSchema },
    errors: [502, 503],
    conflicts: ['transaction_being_created', 'authorization_in_progress', 'already_captured'],
    async handle({ transactions }, { req, res, params, body }) {
      const { row, readerReset } = await transactions.cancel(scopeOf(req), params.id, body.reason);
      res.json({
        data: transactions.present(row),
        ...(readerReset ? { reader_reset: readerReset.reset, ...(readerReset.warning ? { warning: readerReset.warning } : {}) } : {}),
      });
    },
  }),
  route({
    operationId: 'createRefund',
    method: 'post',
    path: '/v1/transactions/{id}/refunds',
    scope: 'refunds:write',
    summary: 'Refund a payment, in full or in part',
    params: IdParams,
    body: CreateRefundSchema,
    responses: { 201: dataEnvelope(RefundSchema), 200: dataEnvelope(RefundSchema) },
    errors: [502, 503],
    conflicts: ['already_refunded', 'transaction_not_refundable', 'transaction_disputed'],
    idempotent: true,
    async handle({ refunds }, { req, res, params, body }) {
      const clientKey = idempotencyKeyOf(req);
      sendIdempotent(res, await refunds.create(scopeOf(req), params.id, body, clientKey), clientKey);
    },
  }),
  route({
    operationId: 'listRefunds',
    method: 'get',
    path: '/v1/transactions/{id}/refunds',
    scope: 'refunds:read',
    summary: "List a payment's refunds",
    params: IdParams,
    query: ListQuerySchema,
    responses: { 200: RefundListSchema },
    async handle({ refunds }, { req, res, params, query }) {
      res.json(await refunds.list(scopeOf(req), params.id, pageRequest(query)));
    },
  }),
];
