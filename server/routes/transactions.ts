import { Router } from 'express';
import { scopeOf } from '../http/middleware.js';
import { idempotencyKeyOf, sendIdempotent } from '../http/idempotency.js';
import { parseInput } from '../http/validate.js';
import { sendJson } from '../http/send.js';
import type { RouteDoc } from '../openapi.js';
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
import type { RefundService } from '../payments/refunds.js';
import type { TransactionService } from '../payments/transactions.js';

const IdParams = z.object({ id: UuidParam });

export const transactionDocs: RouteDoc[] = [
  { method: 'post', path: '/v1/transactions', scope: 'transactions:write', summary: 'Create a payment', body: CreateTransactionSchema, status: 201, response: CreateTransactionResponseSchema, idempotent: true },
  { method: 'post', path: '/v1/payment-intents', scope: 'transactions:write', summary: 'Alias of POST /v1/transactions', body: CreateTransactionSchema, status: 201, response: CreateTransactionResponseSchema, idempotent: true },
  { method: 'get', path: '/v1/transactions', scope: 'transactions:read', summary: 'List payments, newest first', query: TransactionListQuerySchema, response: TransactionListSchema },
  { method: 'get', path: '/v1/transactions/{id}', scope: 'transactions:read', summary: 'Retrieve a payment by uuid or txn_ reference', params: IdParams, response: dataEnvelope(TransactionSchema) },
  {
    method: 'get',
    path: '/v1/transactions/{id}/receipt',
    scope: 'transactions:read',
    summary: "A paid payment's receipt as structured lines (what its receipt page and a receipt printer show)",
    params: IdParams,
    response: dataEnvelope(ReceiptSchema),
  },
  { method: 'post', path: '/v1/transactions/{id}/capture', scope: 'transactions:write', summary: 'Capture a manual-capture payment', params: IdParams, body: CaptureSchema, response: dataEnvelope(TransactionSchema) },
  { method: 'post', path: '/v1/transactions/{id}/cancel', scope: 'transactions:write', summary: 'Cancel an uncaptured payment (safe to repeat)', params: IdParams, body: CancelSchema, response: CancelResponseSchema },
  { method: 'post', path: '/v1/transactions/{id}/refunds', scope: 'refunds:write', summary: 'Refund a payment, in full or in part', params: IdParams, body: CreateRefundSchema, status: 201, response: dataEnvelope(RefundSchema), idempotent: true },
  { method: 'get', path: '/v1/transactions/{id}/refunds', scope: 'refunds:read', summary: "List a payment's refunds", params: IdParams, query: ListQuerySchema, response: RefundListSchema },
];

export function transactionsRouters(transactions: TransactionService, refunds: RefundService): { transactions: Router; paymentIntents: Router } {
  const create = async (req: Parameters<Parameters<Router['post']>[1]>[0], res: Parameters<Parameters<Router['post']>[1]>[1]) => {
    const input = parseInput(CreateTransactionSchema, req.body ?? {});
    const { idempotency_key: bodyKey, ...rest } = input;
    const clientKey = idempotencyKeyOf(req, bodyKey);
    const result = await transactions.create(scopeOf(req), { input: rest, source: 'api', terminalId: null, response: 'transaction' }, clientKey);
    sendIdempotent(res, result, clientKey);
  };

  const router = Router();
  router.post('/', create);
  router.get('/', async (req, res) => {
    const query = parseInput(TransactionListQuerySchema, req.query);
    res.json(await transactions.list(scopeOf(req), pageRequest(query), { status: query.status, channel: query.channel }));
  });
  router.get('/:id', async (req, res) => {
    sendJson(res, 200, { data: await transactions.get(scopeOf(req), req.params.id) });
  });
  router.get('/:id/receipt', async (req, res) => {
    sendJson(res, 200, { data: await transactions.receipt(scopeOf(req), req.params.id) });
  });
  router.post('/:id/capture', async (req, res) => {
    const input = parseInput(CaptureSchema, req.body ?? {});
    res.json({ data: transactions.present(await transactions.capture(scopeOf(req), req.params.id, input.amount_to_capture)) });
  });
  router.post('/:id/cancel', async (req, res) => {
    const input = parseInput(CancelSchema, req.body ?? {});
    const { row, readerReset } = await transactions.cancel(scopeOf(req), req.params.id, input.reason);
    res.json({
      data: transactions.present(row),
      ...(readerReset ? { reader_reset: readerReset.reset, ...(readerReset.warning ? { warning: readerReset.warning } : {}) } : {}),
    });
  });
  router.post('/:id/refunds', async (req, res) => {
    const input = parseInput(CreateRefundSchema, req.body ?? {});
    const clientKey = idempotencyKeyOf(req);
    sendIdempotent(res, await refunds.create(scopeOf(req), req.params.id, input, clientKey), clientKey);
  });
  router.get('/:id/refunds', async (req, res) => {
    const query = parseInput(ListQuerySchema, req.query);
    res.json(await refunds.list(scopeOf(req), req.params.id, pageRequest(query)));
  });

  const paymentIntents = Router();
  paymentIntents.post('/', create);
  return { transactions: router, paymentIntents };
}
