import { MetadataSchema, TimestampSchema } from './common.js';
import { AmountSchema, CurrencySchema } from './transactions.js';
import { z } from './zod.js';

/** Spec §8: a checkout session lives 5 minutes to 24 hours; Stripe's default (and ours) is 24 hours. */
export const SESSION_MIN_EXPIRES_IN = 5 * 60;
export const SESSION_MAX_EXPIRES_IN = 24 * 60 * 60;
/** Spec §8: a payment link lives 5 minutes to 90 days; without expires_in it gets the maximum. */
export const LINK_MIN_EXPIRES_IN = 5 * 60;
export const LINK_MAX_EXPIRES_IN = 90 * 24 * 60 * 60;
/** The payment-link list: at most 100 a page (Stripe's list maximum), 10 by default. */
export const LINK_LIST_MAX = 100;
export const LINK_LIST_DEFAULT = 10;

export const CHECKOUT_PAYMENT_METHOD_TYPES = ['card', 'apple_pay', 'google_pay'] as const;
export const CHECKOUT_SESSION_STATUSES = ['open', 'complete', 'expired'] as const;
export const PAYMENT_LINK_STATUSES = ['open', 'deactivated', 'expired'] as const;

/** Where the customer is sent back to: http(s) only, so no `javascript:` or `data:` ever reaches a redirect. */
const RedirectUrlSchema = z.url({ protocol: /^https?$/ }).max(2048);

const optionalText = (max: number) => z.string().min(1).max(max).optional();

export const CreateCheckoutSessionSchema = z
  .object({
    amount: AmountSchema,
    currency: CurrencySchema.optional(),
    description: optionalText(1000),
    customer_email: z.email().max(512).optional().openapi({ description: 'Prefills the email field' }),
    customer_name: optionalText(200).openapi({ description: 'Prefills the name field' }),
    success_url: RedirectUrlSchema.optional().openapi({ description: 'Where the page sends the customer after payment; `{CHECKOUT_SESSION_ID}` is replaced by the cs_ reference' }),
    cancel_url: RedirectUrlSchema.optional().openapi({ description: 'Where the page’s cancel link goes' }),
    payment_method_types: z
      .array(z.enum(CHECKOUT_PAYMENT_METHOD_TYPES))
      .min(1)
      .max(CHECKOUT_PAYMENT_METHOD_TYPES.length)
      .refine((types) => new Set(types).size === types.length, { message: 'must not repeat a type' })
      .default(['card']),
    collect_email: z.boolean().default(false),
    collect_name: z.boolean().default(false),
    collect_phone: z.boolean().default(false),
    collect_address: z.boolean().default(false),
    expires_in: z.number().int().min(SESSION_MIN_EXPIRES_IN).max(SESSION_MAX_EXPIRES_IN).default(SESSION_MAX_EXPIRES_IN).openapi({ description: 'Seconds, 300 to 86400; default 86400' }),
    metadata: MetadataSchema.optional(),
  })
  .strict()
  .openapi('CreateCheckoutSession');

export type CreateCheckoutSessionInput = z.infer<typeof CreateCheckoutSessionSchema>;

const CustomerDetailsSchema = z
  .object({
    email: z.string().nullable(),
    name: z.string().nullable(),
    phone: z.string().nullable(),
    address: z.record(z.string(), z.string()).nullable(),
  })
  .openapi('CheckoutCustomerDetails');

export const CheckoutSessionSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('checkout.session'),
    reference: z.string().openapi({ example: 'cs_3kq9Zb1c2D3e4F5g6H7i' }),
    url: z.string().openapi({ description: 'The hosted page; send the customer there' }),
    amount: z.number().int(),
    currency: z.string(),
    status: z.enum(CHECKOUT_SESSION_STATUSES).openapi({ description: 'open → complete when its payment succeeds; open → expired at expires_at' }),
    expires_at: TimestampSchema,
    transaction_id: z.uuid(),
    description: z.string().nullable(),
    customer_email: z.string().nullable(),
    customer_name: z.string().nullable(),
    success_url: z.string().nullable(),
    cancel_url: z.string().nullable(),
    payment_method_types: z.array(z.enum(CHECKOUT_PAYMENT_METHOD_TYPES)),
    collect_email: z.boolean(),
    collect_name: z.boolean(),
    collect_phone: z.boolean(),
    collect_address: z.boolean(),
    customer_details: CustomerDetailsSchema.nullable(),
    metadata: z.record(z.string(), z.string()),
    is_test: z.boolean(),
    created_at: TimestampSchema,
    completed_at: TimestampSchema.nullable(),
    expired_at: TimestampSchema.nullable(),
  })
  .openapi('CheckoutSession');

export type CheckoutSession = z.infer<typeof CheckoutSessionSchema>;

export const CreatePaymentLinkSchema = z
  .object({
    amount: AmountSchema,
    currency: CurrencySchema.optional(),
    description: optionalText(1000),
    customer_email: z.email().max(512).optional().openapi({ description: 'Prefills the email field' }),
    success_url: RedirectUrlSchema.optional(),
    cancel_url: RedirectUrlSchema.optional(),
    expires_in: z.number().int().min(LINK_MIN_EXPIRES_IN).max(LINK_MAX_EXPIRES_IN).default(LINK_MAX_EXPIRES_IN).openapi({ description: 'Seconds, 300 to 7776000 (90 days); default 90 days' }),
    metadata: MetadataSchema.optional(),
  })
  .strict()
  .openapi('CreatePaymentLink');

export type CreatePaymentLinkInput = z.infer<typeof CreatePaymentLinkSchema>;

export const PaymentLinkSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('payment_link'),
    reference: z.string().openapi({ example: 'pl_3kq9Zb1c2D3e4F5g6H7i' }),
    url: z.string().openapi({ description: 'The shareable page' }),
    amount: z.number().int(),
    currency: z.string().openapi({ description: 'Uppercase (spec §2.3)', example: 'USD' }),
    status: z.enum(PAYMENT_LINK_STATUSES).openapi({ description: 'open; deactivated after DELETE; expired after expires_at' }),
    is_test: z.boolean(),
    description: z.string().nullable(),
    customer_email: z.string().nullable(),
    success_url: z.string().nullable(),
    cancel_url: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    expires_at: TimestampSchema,
    created_at: TimestampSchema,
    deactivated_at: TimestampSchema.nullable(),
  })
  .openapi('PaymentLink');

export type PaymentLink = z.infer<typeof PaymentLinkSchema>;

export const PaymentLinkListQuerySchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(LINK_LIST_MAX).default(LINK_LIST_DEFAULT).openapi({ description: `1 to ${LINK_LIST_MAX}, default ${LINK_LIST_DEFAULT}` }),
    starting_after: z.string().min(1).max(64).optional().openapi({ description: 'The id or reference of the last link of the previous page' }),
  })
  .strict();

export const PaymentLinkListSchema = z
  .object({ object: z.literal('list'), data: z.array(PaymentLinkSchema), has_more: z.boolean() })
  .openapi('PaymentLinkList');

/** What the hosted page posts (same origin) before confirming: the fields the page collected. */
export const PageDetailsSchema = z
  .object({
    email: z.email().max(512).optional(),
    name: z.string().trim().min(1).max(200).optional(),
    phone: z
      .string()
      .trim()
      .regex(/^\+?[0-9 ()-]{6,20}$/, 'must be a phone number')
      .optional(),
    address: z
      .object({
        line1: z.string().trim().min(1).max(200),
        line2: z.string().trim().max(200).optional(),
        city: z.string().trim().min(1).max(100),
        postal_code: z.string().trim().min(1).max(20),
        country: z
          .string()
          .trim()
          .regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code')
          .transform((c) => c.toUpperCase()),
      })
      .strict()
      .optional(),
    /** Payment links: the transaction this page view already started, so a retry reuses it. */
    transaction: z.string().min(1).max(64).optional(),
  })
  .strict();

export type PageDetails = z.infer<typeof PageDetailsSchema>;
