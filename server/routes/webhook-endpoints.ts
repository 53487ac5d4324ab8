import { scopeOf } from '../http/middleware.js';
import { route } from '../http/route-table.js';
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

const IdParams = z.object({ id: UuidParam });

export const webhookEndpointRoutes = [
  route({
    operationId: 'createWebhookEndpoint',
    method: 'post',
    path: '/v1/webhook-endpoints',
    scope: 'webhooks:write',
    summary: 'Register a webhook endpoint for the key’s mode; the signing secret is returned once',
    body: CreateWebhookEndpointSchema,
    responses: { 201: dataEnvelope(WebhookEndpointSchema) },
    async handle({ webhookEndpoints }, { req, res, body }) {
      res.status(201).json({ data: await webhookEndpoints.create(scopeOf(req), body) });
    },
  }),
  route({
    operationId: 'listWebhookEndpoints',
    method: 'get',
    path: '/v1/webhook-endpoints',
    scope: 'webhooks:read',
    summary: 'List webhook endpoints, newest first',
    query: ListQuerySchema,
    responses: { 200: WebhookEndpointListSchema },
    async handle({ webhookEndpoints }, { req, res, query }) {
      res.json(await webhookEndpoints.list(scopeOf(req), pageRequest(query)));
    },
  }),
  route({
    operationId: 'retrieveWebhookEndpoint',
    method: 'get',
    path: '/v1/webhook-endpoints/{id}',
    scope: 'webhooks:read',
    summary: 'Retrieve a webhook endpoint by uuid or we_ reference',
    params: IdParams,
    responses: { 200: dataEnvelope(WebhookEndpointSchema) },
    async handle({ webhookEndpoints }, { req, res, params }) {
      res.json({ data: await webhookEndpoints.get(scopeOf(req), params.id) });
    },
  }),
  route({
    operationId: 'updateWebhookEndpoint',
    method: 'post',
    path: '/v1/webhook-endpoints/{id}',
    scope: 'webhooks:write',
    summary: 'Update a webhook endpoint: url, events, description, status enabled or disabled',
    params: IdParams,
    body: UpdateWebhookEndpointSchema,
    responses: { 200: dataEnvelope(WebhookEndpointSchema) },
    async handle({ webhookEndpoints }, { req, res, params, body }) {
      res.json({ data: await webhookEndpoints.update(scopeOf(req), params.id, body) });
    },
  }),
  route({
    operationId: 'deleteWebhookEndpoint',
    method: 'delete',
    path: '/v1/webhook-endpoints/{id}',
    scope: 'webhooks:write',
    summary: 'Delete a webhook endpoint',
    params: IdParams,
    responses: { 200: DeletedWebhookEndpointSchema },
    async handle({ webhookEndpoints }, { req, res, params }) {
      res.json({ data: await webhookEndpoints.delete(scopeOf(req), params.id) });
    },
  }),
  route({
    operationId: 'rollWebhookEndpointSecret',
    method: 'post',
    path: '/v1/webhook-endpoints/{id}/roll-secret',
    scope: 'webhooks:write',
    summary: 'Issue a new signing secret (returned once); the old one also signs for 24 hours',
    params: IdParams,
    body: RollSecretSchema,
    responses: { 200: dataEnvelope(WebhookEndpointSchema) },
    async handle({ webhookEndpoints }, { req, res, params }) {
      res.json({ data: await webhookEndpoints.rollSecret(scopeOf(req), params.id) });
    },
  }),
];
