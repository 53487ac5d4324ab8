import { z } from './zod.js';

/** One finished /v1 request of a merchant and mode, as `GET /v1/request-log/stream` sends it (pos logs tail). */
export const RequestLogEntrySchema = z
  .object({
    request_id: z.string().openapi({ description: 'The Request-Id the answer carried' }),
    method: z.string(),
    path: z.string().openapi({ description: 'The path, without the query' }),
    status: z.number().int(),
    duration_ms: z.number().openapi({ description: 'From the request arriving to the answer sent, in milliseconds' }),
    idempotency_key: z.string().nullable(),
    key_type: z.enum(['secret', 'publishable', 'restricted']).openapi({ description: 'The kind of key the request was made with' }),
    key_last4: z.string().openapi({ description: "The key's last four characters" }),
    created_at: z.string().openapi({ description: 'When the answer was sent (ISO 8601)' }),
  })
  .openapi('RequestLogEntry');

export type RequestLogEntry = z.output<typeof RequestLogEntrySchema>;

/** The stream takes no parameters (`pos logs tail` filters what it receives): anything else is a 400, not a stream that never ends. */
export const RequestLogStreamQuerySchema = z.object({}).strict();
