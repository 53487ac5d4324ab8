import { z } from './zod.js';

export const ErrorBodySchema = z
  .object({
    error: z.object({
      type: z.enum([
        'invalid_request_error',
        'authentication_error',
        'card_error',
        'permission_error',
        'rate_limit_error',
        'idempotency_error',
        'api_error',
      ]),
      message: z.string(),
      code: z.string().optional(),
      param: z.string().optional(),
      decline_code: z.string().optional(),
      required_scope: z.string().optional().openapi({ description: 'On a 403 `missing_scope`: the permission the restricted key lacks, e.g. `refunds:write`' }),
      transaction: z.record(z.string(), z.unknown()).optional().openapi({
        description:
          'On a create (POST /v1/transactions, /v1/payment-intents, /v1/terminal/create-payment) that left its payment failed (a 402 decline, a refusal by the processor): the failed transaction, as GET /v1/transactions/{id} returns it; the payment.failed event names the same reference',
      }),
    }),
  })
  .openapi('Error');

/** Stripe's metadata limits: 50 keys, keys up to 40 characters, values up to 500. */
export const MetadataSchema = z
  .record(z.string().min(1).max(40), z.string().max(500))
  .refine((m) => Object.keys(m).length <= 50, { message: 'metadata can have at most 50 keys' })
  .openapi('Metadata', { description: 'Up to 50 string key/value pairs, echoed on the object and in webhooks' });

export const TimestampSchema = z.string().openapi({ description: 'ISO 8601 timestamp with offset', example: '2026-11-21T12:00:00.000+00:00' });

export const UuidParam = z.string().openapi({ description: 'uuid or typed reference' });

/** Lists: `size` is canonical and echoed, `per_page` is accepted as its alias (spec §9). */
export const ListQuerySchema = z
  .object({
    page: z.coerce.number().int().min(1).max(1_000_000_000).default(1),
    size: z.coerce.number().int().min(1).max(100).optional(),
    per_page: z.coerce.number().int().min(1).max(100).optional(),
  })
  .strict();

/** A page of a list, named `name` in the OpenAPI document; `extra`: fields of this list alone, beside the page's. */
export function listEnvelope<T extends z.ZodType, E extends z.ZodRawShape = Record<never, never>>(item: T, name: string, extra?: E) {
  return z
    .object({
      data: z.array(item),
      totalCount: z.number().int(),
      page: z.number().int(),
      size: z.number().int(),
      lastPage: z.number().int(),
      ...(extra ?? ({} as E)),
    })
    .openapi(name);
}

export function dataEnvelope<T extends z.ZodType>(item: T) {
  return z.object({ data: item });
}
