import { Router } from 'express';
import { scopeOf } from '../http/middleware.js';
import { parseInput } from '../http/validate.js';
import type { RouteDoc } from '../openapi.js';
import { dataEnvelope, ListQuerySchema, UuidParam } from '../../shared/contract/common.js';
import {
  CreateWebhookEndpointSchema,
  DeletedWebhookEndpointSchema,
  RollSecretSchema,
  UpdateWebhookEndpointSchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
} from '../../shared/contract/webhooks.js';
import { z } from '../../shared/contract/zod.js';
import { pageRequest } from '../pagination.js';
import type { WebhookEndpointService } from '../webhooks/endpoints.js';

const IdParams = z.object({ id: UuidParam });

export const webhookEndpointDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/webhook-endpoints',
    scope: 'webhooks:write',
    summary: 'Register a webhook endpoint for the key’s mode; the signing secret is returned once',
    body: CreateWebhookEndpointSchema,
    status: 201,
    response: dataEnvelope(WebhookEndpointSchema),
  },
  { method: 'get', path: '/v1/webhook-endpoints', scope: 'webhooks:read', summary: 'List webhook endpoints, newest first', query: ListQuerySchema, response: WebhookEndpointListSchema },
  { method: 'get', path: '/v1/webhook-endpoints/{id}', scope: 'webhooks:read', summary: 'Retrieve a webhook endpoint by uuid or we_ reference', params: IdParams, response: dataEnvelope(WebhookEndpointSchema) },
  {
    method: 'post',
    path: '/v1/webhook-endpoints/{id}',
    scope: 'webhooks:write',
    summary: 'Update a webhook endpoint: url, events, description, status enabled or disabled',
    params: IdParams,
    body: UpdateWebhookEndpointSchema,
    response: dataEnvelope(WebhookEndpointSchema),
  },
  { method: 'delete', path: '/v1/webhook-endpoints/{id}', scope: 'webhooks:write', summary: 'Delete a webhook endpoint', params: IdParams, response: DeletedWebhookEndpointSchema },
  {
    method: 'post',
    path: '/v1/webhook-endpoints/{id}/roll-secret',
    scope: 'webhooks:write',
    summary: 'Issue a new signing secret (returned once); the old one also signs for 24 hours',
    params: IdParams,
    body: RollSecretSchema,
    response: dataEnvelope(WebhookEndpointSchema),
  },
];

export function webhookEndpointsRouter(endpoints: WebhookEndpointService): Router {
  const router = Router();
  router.post('/', async (req, res) => {
    const input = parseInput(CreateWebhookEndpointSchema, req.body ?? {});
    res.status(201).json({ data: await endpoints.create(scopeOf(req), input) });
  });
  router.get('/', async (req, res) => {
    const query = parseInput(ListQuerySchema, req.query);
    res.json(await endpoints.list(scopeOf(req), pageRequest(query)));
  });
  router.get('/:id', async (req, res) => {
    res.json({ data: await endpoints.get(scopeOf(req), req.params.id) });
  });
  router.post('/:id', async (req, res) => {
    const input = parseInput(UpdateWebhookEndpointSchema, req.body ?? {});
    res.json({ data: await endpoints.update(scopeOf(req), req.params.id, input) });
  });
  router.delete('/:id', async (req, res) => {
    res.json({ data: await endpoints.delete(scopeOf(req), req.params.id) });
  });
  router.post('/:id/roll-secret', async (req, res) => {
    parseInput(RollSecretSchema, req.body ?? {});
    res.json({ data: await endpoints.rollSecret(scopeOf(req), req.params.id) });
  });
  return router;
}
