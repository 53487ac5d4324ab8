import { PERMISSIONS, PRESET_NAMES, type Permission, type Preset } from './permissions.js';
import { TimestampSchema } from './common.js';
import { z } from './zod.js';

const PermissionSchema = z.enum(PERMISSIONS as [Permission, ...Permission[]]).openapi({ description: '`<resource>:read` or `<resource>:write` (write includes read); the list is in docs/api-choices.md' });

/**
 * A restricted key: a name, and its permissions as `scopes`, a `preset`, or both (the union).
 * 32 scopes is more than the table has, so no legitimate list is refused.
 */
export const CreateApiKeySchema = z
  .object({
    name: z.string().trim().min(1).max(100).openapi({ description: 'What the key is for, e.g. "Counter PC"' }),
    scopes: z.array(PermissionSchema).max(32).optional(),
    preset: z.enum(PRESET_NAMES as [Preset, ...Preset[]]).optional().openapi({ description: 'counter, reporting or webhooks: a named set of permissions, expanded when the key is made' }),
  })
  .strict()
  .openapi('CreateApiKey');

/** Stripe lets a rolled key live up to 7 days; 0 stops it at once. */
export const MAX_GRACE_HOURS = 168;

export const RollApiKeySchema = z
  .object({
    grace_hours: z.number().min(0).max(MAX_GRACE_HOURS).optional().openapi({ description: 'How long the old key keeps working (default 24; 0 stops it at once)' }),
  })
  .strict()
  .openapi('RollApiKey');

export const ApiKeySchema = z
  .object({
    id: z.uuid(),
    object: z.literal('api_key'),
    type: z.enum(['secret', 'publishable', 'restricted']),
    name: z.string().nullable(),
    mode: z.enum(['test', 'live']),
    scopes: z.array(z.string()).nullable().openapi({ description: "A restricted key's permissions; null for secret and publishable keys" }),
    last4: z.string().openapi({ description: 'The last four characters: the only part of a key ever shown again' }),
    status: z.enum(['active', 'expiring', 'expired', 'revoked']).openapi({ description: 'expiring: rolled, and working until expires_at' }),
    created_at: TimestampSchema,
    expires_at: TimestampSchema.nullable(),
    revoked_at: TimestampSchema.nullable(),
    secret: z.string().optional().openapi({ description: 'The key itself (rk_…/sk_…): only in the answer of a create or a roll, never again' }),
    replaced: z
      .object({ id: z.uuid(), expires_at: TimestampSchema })
      .optional()
      .openapi({ description: 'On a roll: the key this one replaces and when it stops working' }),
  })
  .openapi('ApiKey');

export type ApiKeyView = z.infer<typeof ApiKeySchema>;
export type CreateApiKeyInput = z.infer<typeof CreateApiKeySchema>;
