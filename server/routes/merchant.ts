import { Router } from 'express';
import { scopeOf } from '../http/middleware.js';
import { parseInput } from '../http/validate.js';
import type { RouteDoc } from '../openapi.js';
import { dataEnvelope } from '../../shared/contract/common.js';
import { MerchantSchema, type MerchantView, type OnboardingLinkInput, OnboardingLinkRequestSchema, OnboardingLinkSchema, type OnboardingLinkView } from '../../shared/contract/merchant.js';
import type { Scope } from '../accounts/scope.js';

export const merchantDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/v1/merchant',
    scope: 'merchant:read',
    summary: "The key's merchant, with the processor details a front-end needs and its connected account's standing (charges and payouts enabled, requirements, onboarding status)",
    response: dataEnvelope(MerchantSchema),
  },
  {
    method: 'post',
    path: '/v1/merchant/onboarding-link',
    scope: 'merchant:write',
    summary: "A single-use link to the processor's hosted onboarding for the merchant's connected account in the key's mode",
    body: OnboardingLinkRequestSchema,
    status: 201,
    response: dataEnvelope(OnboardingLinkSchema),
  },
];

export interface MerchantReader {
  describe(scope: Scope): Promise<MerchantView>;
}

export interface OnboardingLinks {
  onboardingLink(scope: Scope, input: OnboardingLinkInput): Promise<OnboardingLinkView>;
}

export function merchantRouter(merchants: MerchantReader, onboarding: OnboardingLinks): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    res.json({ data: await merchants.describe(scopeOf(req)) });
  });
  router.post('/onboarding-link', async (req, res) => {
    const input = parseInput(OnboardingLinkRequestSchema, req.body ?? {});
    res.status(201).json({ data: await onboarding.onboardingLink(scopeOf(req), input) });
  });
  return router;
}
