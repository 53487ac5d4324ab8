import { ListQuerySchema, listEnvelope, TimestampSchema } from './common.js';
import { isEventFilter } from './event-types.js';
import { z } from './zod.js';

/** Stripe's own ceiling is 2,048 characters per endpoint URL. */
const UrlSchema = z.string().min(1).max(2048).openapi({ description: 'http(s) URL the events are POSTed to', example: 'https://shop.example.com/hooks' });

/**
 * An event type (`payment.succeeded`), a family (`payment.*`) or `*`: only what pos sends, so an
 * endpoint cannot be registered for something that never fires (a typo), and the 400 names it.
 */
const EventFilterSchema = z
  .array(z.string().max(100).refine(isEventFilter, { error: (issue) => `unknown event type ${JSON.stringify(issue.input)}: give an event type pos sends (docs/webhooks.md), a family such as payment.*, or *` }))
  .min(1)
  .max(64)
  .openapi({ description: 'Event types to send; `*` (the default) for all', example: ['payment.succeeded', 'payment.failed'] });

export const CreateWebhookEndpointSchema = z
  .object({
    url: UrlSchema,
    events: EventFilterSchema.optional(),
    description: z.string().max(1000).optional(),
  })
  .strict()
  .openapi('CreateWebhookEndpoint');

export const UpdateWebhookEndpointSchema = z
  .object({
    url: UrlSchema.optional(),
    events: EventFilterSchema.optional(),
    description: z.string().max(1000).nullable().optional(),
    status: z.enum(['enabled', 'disabled']).optional().openapi({ description: '`enabled` makes a disabled endpoint active again' }),
  })
  .strict()
  .openapi('UpdateWebhookEndpoint');

export const RollSecretSchema = z.object({}).strict().openapi('RollWebhookSecret');

export const WebhookEndpointSchema = z
  .object({
    id: z.uuid(),
    reference: z.string().openapi({ example: 'we_8fQk2n0aZ1bC3dE4fG5h' }),
    object: z.literal('webhook_endpoint'),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(z.string()),
    status: z.enum(['active', 'disabled']),
    is_test: z.boolean(),
    disabled_reason: z.string().nullable().openapi({ description: 'Why the endpoint was disabled: by the merchant, a 410 answer, or 3 days of failures' }),
    disabled_at: TimestampSchema.nullable(),
    failing_since: TimestampSchema.nullable().openapi({ description: 'Start of the current run of failed deliveries' }),
    previous_secret_expires_at: TimestampSchema.nullable().openapi({ description: 'After a roll, until when the old secret still signs' }),
    secret: z.string().optional().openapi({ description: 'The signing secret (whsec_…): only on create and roll', example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .openapi('WebhookEndpoint');

export const WebhookEndpointListSchema = listEnvelope(WebhookEndpointSchema, 'WebhookEndpointList');
export const DeletedWebhookEndpointSchema = z.object({ data: z.object({ id: z.uuid(), object: z.literal('webhook_endpoint'), deleted: z.literal(true) }) });

export const EventSchema = z
  .object({
    id: z.string().openapi({ example: 'evt_1hQk2n0aZ1bC3dE4fG5h' }),
    type: z.string().openapi({ example: 'payment.succeeded' }),
    mode: z.enum(['test', 'live', 'unknown']).openapi({ description: "From data.is_test (spec §6.6); `unknown` for an event stored without it, which is never sent to live endpoints" }),
    created_at: TimestampSchema,
    request: z
      .object({
        id: z.string().nullable().openapi({ description: 'The Request-Id of the /v1 request that caused the event' }),
        idempotency_key: z.string().nullable().openapi({ description: 'The Idempotency-Key that request carried' }),
      })
      .openapi({ description: "The request behind the event, as on Stripe's events; both null for what the processor's news or background work caused" }),
    data: z.record(z.string(), z.unknown()).openapi({ description: 'The object as it was, with is_test' }),
  })
  .openapi('Event');

export const WebhookAttemptSchema = z
  .object({
    attempted_at: TimestampSchema,
    status_code: z.number().int().nullable().openapi({ description: 'HTTP status answered; null when none came' }),
    latency_ms: z.number().int(),
    error: z.string().nullable(),
  })
  .openapi('WebhookAttempt');

export const WebhookDeliverySchema = z
  .object({
    id: z.uuid(),
    endpoint_id: z.uuid(),
    endpoint_url: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    manual: z.boolean().openapi({ description: 'A resend asked for by the merchant' }),
    attempt_count: z.number().int(),
    next_attempt_at: TimestampSchema.nullable(),
    attempts: z.array(WebhookAttemptSchema),
  })
  .openapi('WebhookDelivery');

export const EventDetailSchema = EventSchema.extend({ deliveries: z.array(WebhookDeliverySchema) }).openapi('EventWithDeliveries');

export const EventListQuerySchema = ListQuerySchema.extend({
  type: z.string().max(100).optional().openapi({ description: 'Only events of this type' }),
}).strict();
export const EventListSchema = listEnvelope(EventSchema, 'EventList', {
  /** How many days events are kept (the server's --retain-events-days, 30 by default, as Stripe). */
  retention_days: z.number().int().openapi({ description: 'How many days events are kept before they are deleted' }),
  /** The list reaches back to this moment: older events may have been deleted. */
  available_since: z.string().openapi({ description: 'ISO time: events older than this may have been deleted (retention)' }),
});

export const ResendEventSchema = z
  .object({ endpoint_id: z.string().min(1).max(100).openapi({ description: 'Endpoint uuid or we_ reference' }) })
  .strict()
  .openapi('ResendEvent');

export const EventStreamQuerySchema = z
  .object({ types: z.string().max(2000).optional().openapi({ description: 'Comma-separated event types to stream; all when absent' }) })
  .strict();

export type CreateWebhookEndpointInput = z.infer<typeof CreateWebhookEndpointSchema>;
export type UpdateWebhookEndpointInput = z.infer<typeof UpdateWebhookEndpointSchema>;
export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;
export type WebhookEvent = z.infer<typeof EventSchema>;
export type EventDetail = z.infer<typeof EventDetailSchema>;
export type WebhookDelivery = z.infer<typeof WebhookDeliverySchema>;
