import { Router } from 'express';
import { parseInput } from '../http/validate.js';
import { scopeOf } from '../http/middleware.js';
import type { RouteDoc } from '../openapi.js';
import { dataEnvelope, UuidParam } from '../../shared/contract/common.js';
import { CreateCustomerSchema, CustomerListQuerySchema, CustomerListSchema, CustomerSchema, DeletedCustomerSchema, UpdateCustomerSchema } from '../../shared/contract/customers.js';
import { z } from '../../shared/contract/zod.js';
import type { CustomerService } from '../accounts/customers.js';
import { pageRequest } from '../pagination.js';

const IdParams = z.object({ id: UuidParam });

export const customerDocs: RouteDoc[] = [
  { method: 'post', path: '/v1/customers', scope: 'customers:write', summary: 'Create a customer', body: CreateCustomerSchema, status: 201, response: dataEnvelope(CustomerSchema) },
  { method: 'get', path: '/v1/customers', scope: 'customers:read', summary: 'List customers, newest first', query: CustomerListQuerySchema, response: CustomerListSchema },
  { method: 'get', path: '/v1/customers/{id}', scope: 'customers:read', summary: 'Retrieve a customer by uuid or cus_ reference', params: IdParams, response: dataEnvelope(CustomerSchema) },
  { method: 'post', path: '/v1/customers/{id}', scope: 'customers:write', summary: 'Update a customer', params: IdParams, body: UpdateCustomerSchema, response: dataEnvelope(CustomerSchema) },
  { method: 'delete', path: '/v1/customers/{id}', scope: 'customers:write', summary: 'Delete a customer: 404 afterwards, and no new payment may name it', params: IdParams, response: dataEnvelope(DeletedCustomerSchema) },
];

export function customersRouter(customers: CustomerService): Router {
  const router = Router();
  router.post('/', async (req, res) => {
    const input = parseInput(CreateCustomerSchema, req.body ?? {});
    res.status(201).json({ data: await customers.create(scopeOf(req), input) });
  });
  router.get('/', async (req, res) => {
    const query = parseInput(CustomerListQuerySchema, req.query);
    res.json(await customers.list(scopeOf(req), pageRequest(query)));
  });
  router.get('/:id', async (req, res) => {
    res.json({ data: await customers.get(scopeOf(req), req.params.id) });
  });
  router.post('/:id', async (req, res) => {
    const input = parseInput(UpdateCustomerSchema, req.body ?? {});
    res.json({ data: await customers.update(scopeOf(req), req.params.id, input) });
  });
  router.delete('/:id', async (req, res) => {
    res.json({ data: await customers.delete(scopeOf(req), req.params.id) });
  });
  return router;
}
