import { scopeOf } from '../http/middleware.js';
import { route } from '../http/route-table.js';
import { dataEnvelope } from '../../shared/contract/common.js';
import { MerchantSchema, OnboardingLinkRequestSchema, OnboardingLinkSchema } from '../../shared/contract/merchant.js';

export const merchantRoutes = [
  route({
    operationId: 'retrieveMerchant',
    method: 'get',
    path: '/v1/merchant',
    scope: 'merchant:read',
    summary: "The key's merchant, with the processor details a front-end needs and its connected account's standing (charges and payouts enabled, requirements, onboarding status)",
    responses: { 200: dataEnvelope(MerchantSchema) },
    errors: [502, 503],
    async handle({ merchants }, { req, res }) {
      res.json({ data: await merchants.describe(scopeOf(req)) });
    },
  }),
  route({
    operationId: 'createOnboardingLink',
    method: 'post',
    path: '/v1/merchant/onboarding-link',
    scope: 'merchant:write',
    summary: "A single-use link to the processor's hosted onboarding for the merchant's connected account in the key's mode",
    body: OnboardingLinkRequestSchema,
    responses: { 201: dataEnvelope(OnboardingLinkSchema) },
    errors: [502, 503],
    async handle({ onboarding }, { req, res, body }) {
      res.status(201).json({ data: await onboarding.onboardingLink(scopeOf(req), body) });
    },
  }),
];
