import { Router } from 'express';
import { scopeOf } from '../http/middleware.js';
import type { RouteDoc } from '../openapi.js';
import { dataEnvelope } from '../schemas/common.js';
import { MerchantSchema, type MerchantView } from '../schemas/merchant.js';
import type { Scope } from '../accounts/scope.js';

export const merchantDocs: RouteDoc[] = [
  { method: 'get', path: '/v1/merchant', scope: 'merchant:read', summary: "The key's merchant, with the processor details a front-end needs", response: dataEnvelope(MerchantSchema) },
];

export interface MerchantReader {
  describe(scope: Scope): Promise<MerchantView>;
}

export function merchantRouter(merchants: MerchantReader): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    res.json({ data: await merchants.describe(scopeOf(req)) });
  });
  return router;
}
