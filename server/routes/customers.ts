import { scopeOf } from '../http/middleware.js';
import { route } from '../http/route-table.js';
import { dataEnvelope, UuidParam } from '../../shared/contract/common.js';
import { CreateCustomerSchema, CustomerListQuerySchema, CustomerListSchema, CustomerSchema, DeletedCustomerSchema, UpdateCustomerSchema } from '../../shared/contract/customers.js';
import { z } from '../../shared/contract/zod.js';
import { pageRequest } from '../pagination.js';

const IdParams = z.object({ id: UuidParam });

export const customerRoutes = [
  route({
    operationId: 'createCustomer',
    method: 'post',
    path: '/v1/customers',
    scope: 'customers:write',
    summary: 'Create a customer',
    body: CreateCustomerSchema,
    responses: { 201: dataEnvelope(CustomerSchema) },
    errors: [502, 503],
    async handle({ customers }, { req, res, body }) {
      res.status(201).json({ data: await customers.create(scopeOf(req), body) });
    },
  }),
  route({
    operationId: 'listCustomers',
    method: 'get',
    path: '/v1/customers',
    scope: 'customers:read',
    summary: 'List customers, newest first',
    query: CustomerListQuerySchema,
    responses: { 200: CustomerListSchema },
    async handle({ customers }, { req, res, query }) {
      res.json(await customers.list(scopeOf(req), pageRequest(query)));
    },
  }),
  route({
    operationId: 'retrieveCustomer',
    method: 'get',
    path: '/v1/customers/{id}',
    scope: 'customers:read',
    summary: 'Retrieve a customer by uuid or cus_ reference',
    params: IdParams,
    responses: { 200: dataEnvelope(CustomerSchema) },
    async handle({ customers }, { req, res, params }) {
      res.json({ data: await customers.get(scopeOf(req), params.id) });
    },
  }),
  route({
    operationId: 'updateCustomer',
    method: 'post',
    path: '/v1/customers/{id}',
    scope: 'customers:write',
    summary: 'Update a customer',
    params: IdParams,
    body: UpdateCustomerSchema,
    responses: { 200: dataEnvelope(CustomerSchema) },
    errors: [502, 503],
    async handle({ customers }, { req, res, params, body }) {
      res.json({ data: await customers.update(scopeOf(req), params.id, body) });
    },
  }),
  route({
    operationId: 'deleteCustomer',
    method: 'delete',
    path: '/v1/customers/{id}',
    scope: 'customers:write',
    summary: 'Delete a customer: 404 afterwards, and no new payment may name it',
    params: IdParams,
    responses: { 200: dataEnvelope(DeletedCustomerSchema) },
    errors: [502, 503],
    async handle({ customers }, { req, res, params }) {
      res.json({ data: await customers.delete(scopeOf(req), params.id) });
    },
  }),
];
