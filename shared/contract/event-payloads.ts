import { CustomerSchema } from './customers.js';
import { DisputeSchema } from './disputes.js';
import { AccountStateSchema } from './merchant.js';
import { PayoutSchema } from './payouts.js';
import { ReaderSchema } from './terminal.js';
import { RefundSchema, TransactionSchema } from './transactions.js';
import { EventSchema, WebhookEndpointSchema } from './webhooks.js';
import { EVENT_TYPES, type EventType } from './event-types.js';
import { z } from './zod.js';

const withMode = <S extends z.ZodObject>(schema: S) => schema.extend({ is_test: z.boolean() });

const MerchantUpdatedSchema = AccountStateSchema.extend({
  id: z.string(),
  object: z.literal('merchant'),
  business_name: z.string(),
  country: z.string(),
  connected_account_id: z.string(),
  previous_attributes: z.record(z.string(), z.unknown()).openapi({ description: 'The fields that changed, as they were before' }),
});

/** What an event of each family carries as its `data`: the object as it was, with `is_test`. */
function dataOf(type: EventType): z.ZodType {
  const [family] = type.split('.');
  switch (family) {
    case 'payment':
      return withMode(TransactionSchema);
    case 'refund':
      return withMode(RefundSchema);
    case 'dispute':
      return withMode(DisputeSchema);
    case 'payout':
      return withMode(PayoutSchema);
    case 'customer':
      return type === 'customer.deleted' ? withMode(CustomerSchema).extend({ deleted: z.literal(true) }) : withMode(CustomerSchema);
    case 'merchant':
      return withMode(MerchantUpdatedSchema);
    case 'webhook_endpoint':
      // The endpoint as its own API answer shows it, `is_test` included (the secret is never sent).
      return WebhookEndpointSchema;
    default:
      return withMode(ReaderSchema).extend({ agent_id: z.string().nullable().openapi({ description: 'The agent that reported the reader' }) });
  }
}

/** A webhook delivery's body: what `POST` to an endpoint carries for each event type (signed as in docs/webhooks.md). */
export const EVENT_PAYLOADS: Record<EventType, z.ZodType> = Object.fromEntries(
  EVENT_TYPES.map((type) => [type, EventSchema.omit({ mode: true }).extend({ type: z.literal(type), data: dataOf(type) })]),
) as unknown as Record<EventType, z.ZodType>;
