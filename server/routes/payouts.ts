import { Router } from 'express';
import { scopeOf } from '../http/middleware.js';
import { idempotencyKeyOf, sendIdempotent } from '../http/idempotency.js';
import { parseInput } from '../http/validate.js';
import type { RouteDoc } from '../openapi.js';
import { dataEnvelope, UuidParam } from '../../shared/contract/common.js';
import { BalanceSchema, BankAccountSchema, CreatePayoutSchema, PayoutListQuerySchema, PayoutListSchema, PayoutSchema, SetBankAccountSchema } from '../../shared/contract/payouts.js';
import { z } from '../../shared/contract/zod.js';
import { pageRequest } from '../pagination.js';
import type { PayoutService } from '../payouts/payouts.js';

const IdParams = z.object({ id: UuidParam });

export const payoutDocs: RouteDoc[] = [
  { method: 'get', path: '/v1/balance', scope: 'payouts:read', summary: "The merchant's balance on its account: available to pay out, and pending", response: dataEnvelope(BalanceSchema) },
  {
    method: 'post',
    path: '/v1/payouts',
    scope: 'payouts:write',
    summary: 'Pay out to the bank account: an amount, or all that is available',
    body: CreatePayoutSchema,
    status: 201,
    response: dataEnvelope(PayoutSchema),
    idempotent: true,
  },
  { method: 'get', path: '/v1/payouts', scope: 'payouts:read', summary: 'List payouts, newest first', query: PayoutListQuerySchema, response: PayoutListSchema },
  { method: 'get', path: '/v1/payouts/{id}', scope: 'payouts:read', summary: 'Retrieve a payout by uuid or po_ reference', params: IdParams, response: dataEnvelope(PayoutSchema) },
  { method: 'get', path: '/v1/merchant/bank-account', scope: 'merchant:read', summary: "The bank account payouts in the merchant's currency go to", response: dataEnvelope(BankAccountSchema) },
  { method: 'post', path: '/v1/merchant/bank-account', scope: 'merchant:write', summary: 'Set the bank account payouts go to', body: SetBankAccountSchema, response: dataEnvelope(BankAccountSchema) },
];

export function bankAccountRouter(payouts: PayoutService): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    res.json({ data: await payouts.bankAccount(scopeOf(req)) });
  });
  router.post('/', async (req, res) => {
    const input = parseInput(SetBankAccountSchema, req.body ?? {});
    res.json({ data: await payouts.setBankAccount(scopeOf(req), input) });
  });
  return router;
}

export function balanceRouter(payouts: PayoutService): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    res.json({ data: await payouts.balance(scopeOf(req)) });
  });
  return router;
}

export function payoutsRouter(payouts: PayoutService): Router {
  const router = Router();
  router.post('/', async (req, res) => {
    const input = parseInput(CreatePayoutSchema, req.body ?? {});
    const clientKey = idempotencyKeyOf(req);
    sendIdempotent(res, await payouts.create(scopeOf(req), input, clientKey), clientKey);
  });
  router.get('/', async (req, res) => {
    const query = parseInput(PayoutListQuerySchema, req.query);
    res.json(await payouts.list(scopeOf(req), pageRequest(query), query.status));
  });
  router.get('/:id', async (req, res) => {
    res.json({ data: await payouts.get(scopeOf(req), req.params.id) });
  });
  return router;
}
