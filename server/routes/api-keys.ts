import { scopeOf } from '../http/middleware.js';
import { route } from '../http/route-table.js';
import { ApiKeySchema, CreateApiKeySchema, RollApiKeySchema } from '../../shared/contract/api-keys.js';
import { dataEnvelope } from '../../shared/contract/common.js';
import { z } from '../../shared/contract/zod.js';

const IdParams = z.object({ id: z.string().openapi({ description: "The key's id (a uuid, from the list); never the key itself" }) });

const HOUR_MS = 60 * 60 * 1000;

/** Managing the merchant's keys is the secret key's job alone: a restricted key never mints or sees keys. */
export const apiKeyRoutes = [
  route({
    operationId: 'createApiKey',
    method: 'post',
    path: '/v1/api-keys',
    scope: 'secret',
    summary: 'Create a restricted key (rk_) of this mode with the permissions given; the key is in this answer only',
    body: CreateApiKeySchema,
    responses: { 201: dataEnvelope(ApiKeySchema) },
    conflicts: ['api_key_limit'],
    async handle({ apiKeys }, { req, res, body }) {
      res.status(201).json({ data: await apiKeys.create(scopeOf(req), body) });
    },
  }),
  route({
    operationId: 'listApiKeys',
    method: 'get',
    path: '/v1/api-keys',
    scope: 'secret',
    summary: "This mode's keys, newest first, by their last four characters",
    responses: { 200: dataEnvelope(z.array(ApiKeySchema)) },
    async handle({ apiKeys }, { req, res }) {
      res.json({ data: await apiKeys.list(scopeOf(req)) });
    },
  }),
  route({
    operationId: 'rollApiKey',
    method: 'post',
    path: '/v1/api-keys/{id}/roll',
    scope: 'secret',
    summary: 'A new key with the same permissions; the old one works for grace_hours more (default 24)',
    params: IdParams,
    body: RollApiKeySchema,
    responses: { 201: dataEnvelope(ApiKeySchema) },
    conflicts: ['api_key_inactive'],
    async handle({ apiKeys }, { req, res, params, body }) {
      res.status(201).json({ data: await apiKeys.roll(scopeOf(req), params.id, body.grace_hours === undefined ? undefined : body.grace_hours * HOUR_MS) });
    },
  }),
  route({
    operationId: 'revokeApiKey',
    method: 'post',
    path: '/v1/api-keys/{id}/revoke',
    scope: 'secret',
    summary: 'Stop a restricted key at once (401 from then on)',
    params: IdParams,
    responses: { 200: dataEnvelope(ApiKeySchema) },
    async handle({ apiKeys }, { req, res, params }) {
      res.json({ data: await apiKeys.revoke(scopeOf(req), params.id) });
    },
  }),
];
