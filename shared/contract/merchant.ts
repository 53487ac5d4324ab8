import { TimestampSchema } from './common.js';
import { z } from './zod.js';

const REQUIREMENT_LIST = (description: string) => z.array(z.string()).openapi({ description, example: ['individual.dob.day', 'external_account'] });

export const AccountStateSchema = z.object({
  charges_enabled: z.boolean().openapi({ description: "Whether the merchant's connected account in this mode can take payments; live payments are refused (400 `charges_not_enabled`) until it can" }),
  payouts_enabled: z.boolean().openapi({ description: 'Whether it can pay out to its bank; live payouts are refused (400 `payouts_not_enabled`) until it can' }),
  requirements: z
    .object({
      currently_due: REQUIREMENT_LIST("What the processor needs now (Stripe's requirement keys)"),
      past_due: REQUIREMENT_LIST('What was due and is overdue: the account is disabled until it is given'),
      eventually_due: REQUIREMENT_LIST('What will be needed later (as volume grows)'),
      pending_verification: REQUIREMENT_LIST('What was given and is being verified'),
      current_deadline: TimestampSchema.nullable().openapi({ description: 'When what is currently due must be given by' }),
      disabled_reason: z.string().nullable().openapi({ description: "Stripe's reason the account cannot charge, e.g. `requirements.past_due`" }),
      errors: z.array(z.object({ requirement: z.string(), code: z.string(), reason: z.string() })).openapi({ description: 'Details given that failed verification' }),
    })
    .openapi('AccountRequirements'),
  onboarding: z
    .object({
      status: z.enum(['complete', 'action_required', 'pending_verification', 'rejected']),
      message: z.string().openapi({ description: 'The status in plain words, naming what is missing', example: 'Stripe needs: date of birth, bank account.' }),
      account_type: z.string().nullable().openapi({ description: '`express` (Stripe-hosted onboarding) or `custom`', example: 'express' }),
      details_submitted: z.boolean(),
    })
    .openapi('Onboarding'),
});

export type AccountStateView = z.infer<typeof AccountStateSchema>;

/** Where the processor sends the merchant back to; http(s) only, as Stripe requires. */
const RedirectUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .max(2048)
  .openapi({ example: 'https://platform.example/onboarding/done' });

export const OnboardingLinkRequestSchema = z
  .object({
    return_url: RedirectUrlSchema.optional().openapi({ description: "Where the merchant lands after leaving onboarding, finished or not (default: this server's /onboarding/return page)" }),
    refresh_url: RedirectUrlSchema.optional().openapi({ description: "Where the merchant lands when the link has expired or was already used: make a new link there (default: this server's /onboarding/refresh page)" }),
  })
  .strict()
  .openapi('OnboardingLinkRequest');

export type OnboardingLinkInput = z.infer<typeof OnboardingLinkRequestSchema>;

export const OnboardingLinkSchema = z
  .object({
    object: z.literal('onboarding_link'),
    url: z.string().openapi({ description: "The processor's hosted onboarding for this merchant's account in the key's mode; single use, short-lived" }),
    expires_at: TimestampSchema,
  })
  .openapi('OnboardingLink');

export type OnboardingLinkView = z.infer<typeof OnboardingLinkSchema>;

export const MerchantSchema = z
  .object({
    id: z.uuid(),
    business_name: z.string(),
    default_currency: z.string(),
    country: z.string().openapi({ description: 'ISO 3166-1 alpha-2 country of the merchant and its connected account', example: 'US' }),
    is_test: z.boolean(),
    processor: z.object({
      name: z.string().openapi({ example: 'stripe' }),
      publishable_key: z.string().nullable().openapi({ description: "The platform's processor publishable key for the key's mode: give this to the client-side library" }),
      api_base: z.string().nullable().openapi({ description: "Base URL of the processor's client-side API; null means Stripe's own (use Stripe.js as usual)" }),
      connected_account_id: z.string().nullable().openapi({ description: 'Where payments settle. Never pass it to the client-side library (spec §1)' }),
    }),
    ...AccountStateSchema.shape,
  })
  .openapi('Merchant');

export type MerchantView = z.infer<typeof MerchantSchema>;
