import { z } from './zod.js';

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
  })
  .openapi('Merchant');

export type MerchantView = z.infer<typeof MerchantSchema>;
