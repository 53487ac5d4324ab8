import { z } from './zod.js';

export const ReaderActionStateSchema = z
  .object({
    type: z.string(),
    status: z.enum(['in_progress', 'succeeded', 'failed']),
    failure_code: z.string().nullable(),
    /** The processor's words for the failure, e.g. "This action was canceled by the customer on the reader." */
    failure_message: z.string().nullable(),
    payment_intent_id: z.string().nullable(),
    /** Our transaction for that payment intent, when there is one. */
    transaction_id: z.string().nullable(),
    /** The intent's processor status: `processing` means a card was presented and is being authorised. */
    payment_intent_status: z.string().nullable(),
  })
  .openapi('ReaderActionState');

export const ReaderLiveStateSchema = z
  .object({
    id: z.uuid(),
    processor_terminal_id: z.string(),
    name: z.string(),
    serial_number: z.string(),
    /** Presence as the processor sees it (not the agent's heartbeat presence). */
    processor_status: z.enum(['online', 'offline']),
    action: ReaderActionStateSchema.nullable(),
  })
  .openapi('ReaderLiveState');
