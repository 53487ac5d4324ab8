import { ListQuerySchema, listEnvelope, TimestampSchema } from './common.js';
import { z } from './zod.js';

/** Unix seconds (Stripe's way), or an ISO 8601 date or date-time (the way every timestamp here is written). */
const TIME = /^(\d{1,12}|\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?)$/;

export const TimeBoundSchema = z
  .string()
  .max(40)
  .regex(TIME, 'must be unix seconds or an ISO 8601 date or date-time')
  .refine((text) => Number.isFinite(timeBound(text)), 'must be a real date')
  .openapi({ description: 'Unix seconds, or an ISO 8601 date or date-time (UTC unless it says otherwise)', example: '2026-11-21T12:00:00Z' });

/**
 * A bound as epoch ms (NaN when it names no real time). An upper bound covers the whole of the unit
 * it is written in: `created[lte]=2026-11-21` includes that day, unix seconds include their second.
 */
export function timeBound(text: string, end = false): number {
  if (/^\d+$/.test(text)) return Number(text) * 1000 + (end ? 999 : 0);
  const dateOnly = !/[T ]/.test(text);
  // A date alone or a time without an offset is UTC, not the server's local time.
  const iso = dateOnly ? `${text}T00:00:00Z` : /(Z|[+-]\d{2}:?\d{2})$/.test(text) ? text.replace(' ', 'T') : `${text.replace(' ', 'T')}Z`;
  const at = Date.parse(iso);
  if (!end) return at;
  if (dateOnly) return at + 86_400_000 - 1;
  const time = /T(\d{2}:\d{2})(:\d{2})?(\.\d+)?/.exec(iso);
  if (time?.[3]) return at;
  return at + (time?.[2] ? 999 : 59_999);
}

export const AuditLogQuerySchema = ListQuerySchema.extend({
  object_id: z.string().min(1).max(255).optional().openapi({ description: 'Only entries about this object: the one a request made or changed, or the one its path named (uuid or reference, as written)' }),
  key_id: z.string().min(1).max(100).optional().openapi({ description: 'Only entries made with this API key (its id, from GET /v1/api-keys)' }),
  created: z
    .object({ gte: TimeBoundSchema.optional(), lte: TimeBoundSchema.optional() })
    .strict()
    .optional()
    .openapi({ description: '`created[gte]` and `created[lte]`: only entries made at or after, at or before these times' }),
}).strict();

export const AuditEntrySchema = z
  .object({
    id: z.string().openapi({ example: 'aud_4hQk2n0aZ1bC3dE4fG5h' }),
    object: z.literal('audit_entry'),
    seq: z.number().int().openapi({ description: "Its place in the merchant's and mode's chain, from 1 with no gaps" }),
    mode: z.enum(['test', 'live']),
    created_at: TimestampSchema,
    key: z
      .object({
        id: z.string(),
        type: z.enum(['secret', 'publishable', 'restricted']),
        last4: z.string(),
      })
      .nullable()
      .openapi({ description: 'The API key that acted: its id, type and last four characters (never the key)' }),
    request: z
      .object({ id: z.string().nullable(), idempotency_key: z.string().nullable() })
      .openapi({ description: 'The request (its Request-Id) and the Idempotency-Key it carried' }),
    operation: z.string().openapi({ description: 'Method and route, or what an agent reported', example: 'POST /v1/transactions/{id}/refunds' }),
    target_id: z.string().nullable().openapi({ description: 'The id in the request’s path, as the client wrote it' }),
    object_id: z.string().nullable().openapi({ description: 'The object the answer returned (what was made or changed), else the one the path named' }),
    status: z.number().int().openapi({ description: 'The HTTP status answered' }),
    details: z.record(z.string(), z.unknown()).nullable().openapi({ description: 'What else the entry records (a drawer opening: reason, staff, agent)' }),
    prev_hash: z.string().openapi({ description: 'The hash of the entry before it (64 zeros for the first)' }),
    hash: z.string().openapi({ description: 'SHA-256 over the entry and prev_hash (shared/audit-chain.ts)' }),
  })
  .openapi('AuditEntry');

export const AuditLogSchema = listEnvelope(AuditEntrySchema, 'AuditLog');

export type AuditLogQuery = z.infer<typeof AuditLogQuerySchema>;
export type AuditEntryView = z.infer<typeof AuditEntrySchema>;
