import { scopeOf } from '../http/middleware.js';
import { idempotencyKeyOf, sendIdempotent } from '../http/idempotency.js';
import { route } from '../http/route-table.js';
import { dataEnvelope, UuidParam } from '../../shared/contract/common.js';
import { BalanceSchema, BankAccountSchema, CreatePayoutSchema, PayoutListQuerySchema, PayoutListSchema, PayoutSchema, SetBankAccountSchema } from '../../shared/contract/payouts.js';
import { z } from '../../shared/contract/zod.js';
import { pageRequest } from '../pagination.js';

const IdParams = z.object({ id: UuidParam });

export const payoutRoutes = [
  route({
    operationId: 'retrieveBalance',
    method: 'get',
    path: '/v1/balance',
    scope: 'payouts:read',
    summary: "The merchant's balance on its account: available to pay out, and pending",
    responses: { 200: dataEnvelope(BalanceSchema) },
    errors: [502, 503],
    async handle({ payouts }, { req, res }) {
      res.json({ data: await payouts.balance(scopeOf(req)) });
    },
  }),
  route({
    operationId: 'createPayout',
    method: 'post',
    path: '/v1/payouts',
    scope: 'payouts:write',
    summary: 'Pay out to the bank account: an amount, or all that is available',
    body: CreatePayoutSchema,
    responses: { 201: dataEnvelope(PayoutSchema), 200: dataEnvelope(PayoutSchema) },
    errors: [502, 503],
    idempotent: true,
    async handle({ payouts }, { req, res, body }) {
      const clientKey = idempotencyKeyOf(req);
      sendIdempotent(res, await payouts.create(scopeOf(req), body, clientKey), clientKey);
    },
  }),
  route({
    operationId: 'listPayouts',
    method: 'get',
    path: '/v1/payouts',
    scope: 'payouts:read',
    summary: 'List payouts, newest first',
    query: PayoutListQuerySchema,
    responses: { 200: PayoutListSchema },
    async handle({ payouts }, { req, res, query }) {
      res.json(await payouts.list(scopeOf(req), pageRequest(query), query.status));
    },
  }),
  route({
    operationId: 'retrievePayout',
    method: 'get',
    path: '/v1/payouts/{id}',
    scope: 'payouts:read',
    summary: 'Retrieve a payout by uuid or po_ reference',
    params: IdParams,
    responses: { 200: dataEnvelope(PayoutSchema) },
    async handle({ payouts }, { req, res, params }) {
      res.json({ data: await payouts.get(scopeOf(req), params.id) });
    },
  }),
  route({
    operationId: 'retrieveBankAccount',
    method: 'get',
    path: '/v1/merchant/bank-account',
    scope: 'merchant:read',
    summary: "The bank account payouts in the merchant's currency go to",
    responses: { 200: dataEnvelope(BankAccountSchema) },
    errors: [502, 503],
    async handle({ payouts }, { req, res }) {
      res.json({ data: await payouts.bankAccount(scopeOf(req)) });
    },
  }),
  route({
    operationId: 'setBankAccount',
    method: 'post',
    path: '/v1/merchant/bank-account',
    scope: 'merchant:write',
    summary: 'Set the bank account payouts go to',
    body: SetBankAccountSchema,
    responses: { 200: dataEnvelope(BankAccountSchema) },
    errors: [502, 503],
    async handle({ payouts }, { req, res, body }) {
      res.json({ data: await payouts.setBankAccount(scopeOf(req), body) });
    },
  }),
];
