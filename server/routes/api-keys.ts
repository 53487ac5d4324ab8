import { Router } from 'express';
import { scopeOf } from '../http/middleware.js';
import { parseInput } from '../http/validate.js';
import type { RouteDoc } from '../openapi.js';
import { ApiKeySchema, CreateApiKeySchema, RollApiKeySchema } from '../../shared/contract/api-keys.js';
import { dataEnvelope } from '../../shared/contract/common.js';
import { z } from '../../shared/contract/zod.js';
import type { ApiKeyService } from '../accounts/restricted-keys.js';

const IdParams = z.object({ id: z.string().openapi({ description: "The key's id (a uuid, from the list); never the key itself" }) });

const HOUR_MS = 60 * 60 * 1000;

/** Managing the merchant's keys is the secret key's job alone: a restricted key never mints or sees keys. */
export const apiKeyDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/v1/api-keys',
    summary: 'Create a restricted key (rk_) of this mode with the permissions given; the key is in this answer only',
    body: CreateApiKeySchema,
    status: 201,
    response: dataEnvelope(ApiKeySchema),
    scope: 'secret',
  },
  { method: 'get', path: '/v1/api-keys', summary: "This mode's keys, newest first, by their last four characters", response: dataEnvelope(z.array(ApiKeySchema)), scope: 'secret' },
  {
    method: 'post',
    path: '/v1/api-keys/{id}/roll',
    summary: 'A new key with the same permissions; the old one works for grace_hours more (default 24)',
    params: IdParams,
    body: RollApiKeySchema,
    status: 201,
    response: dataEnvelope(ApiKeySchema),
    scope: 'secret',
  },
  { method: 'post', path: '/v1/api-keys/{id}/revoke', summary: 'Stop a restricted key at once (401 from then on)', params: IdParams, response: dataEnvelope(ApiKeySchema), scope: 'secret' },
];

export function apiKeysRouter(keys: ApiKeyService): Router {
  const router = Router();
  router.post('/', async (req, res) => {
    const input = parseInput(CreateApiKeySchema, req.body ?? {});
    res.status(201).json({ data: await keys.create(scopeOf(req), input) });
  });
  router.get('/', async (req, res) => {
    res.json({ data: await keys.list(scopeOf(req)) });
  });
  router.post('/:id/roll', async (req, res) => {
    const input = parseInput(RollApiKeySchema, req.body ?? {});
    res.status(201).json({ data: await keys.roll(scopeOf(req), String(req.params.id), input.grace_hours === undefined ? undefined : input.grace_hours * HOUR_MS) });
  });
  router.post('/:id/revoke', async (req, res) => {
    res.json({ data: await keys.revoke(scopeOf(req), String(req.params.id)) });
  });
  return router;
}
