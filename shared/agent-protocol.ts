import { z } from 'zod';

/**
 * The agent's local websocket protocol: what the counter (the TUI, or any POS front-end) and the
 * on-premise agent say to each other. One JSON object per message; every message is validated
 * with these schemas on receipt. Written down for integrators in docs/agent-protocol.md.
 */

export const PROTOCOL_VERSION = 1;

/** What a reader is doing, as the agent follows it (the /v1 API deliberately does not report this). */
export const READER_ACTIVITIES = ['idle', 'waiting_for_card', 'processing', 'approved', 'declined', 'canceled_on_reader'] as const;
export type ReaderActivity = (typeof READER_ACTIVITIES)[number];

export const ReaderStateSchema = z.object({
  id: z.string(),
  processor_terminal_id: z.string(),
  name: z.string(),
  status: z.enum(['online', 'offline']),
  last_seen_at: z.string().nullable(),
  activity: z.enum(READER_ACTIVITIES),
  /** The payment the activity is about, when there is one. */
  transaction_id: z.string().nullable(),
  amount: z.number().int().nullable(),
  currency: z.string().nullable(),
  failure_code: z.string().nullable(),
  updated_at: z.string(),
});
export type ReaderState = z.infer<typeof ReaderStateSchema>;

/** The subset of a /v1 transaction the counter shows. */
export const TransactionSummarySchema = z
  .object({
    id: z.string(),
    reference: z.string(),
    status: z.string(),
    amount: z.number().int(),
    currency: z.string(),
    tip_amount: z.number().int(),
    card_brand: z.string().nullable(),
    card_last_four: z.string().nullable(),
    failure_code: z.string().nullable(),
    receipt_url: z.string().nullable(),
    reader_id: z.string().nullable(),
    created_at: z.string(),
  })
  .passthrough();
export type TransactionSummary = z.infer<typeof TransactionSummarySchema>;

const RequestId = z.string().min(1).max(100);

export const ClientMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('hello'), protocol: z.literal(PROTOCOL_VERSION), token: z.string().optional() }).strict(),
  z.object({ type: z.literal('subscribe'), topics: z.array(z.enum(['readers', 'transactions'])).min(1) }).strict(),
  z
    .object({
      type: z.literal('start_payment'),
      request_id: RequestId,
      /** The reader's processor_terminal_id (tmr_…) or uuid. */
      reader: z.string().min(1),
      amount: z.number().int().min(50),
      currency: z.string().length(3).optional(),
      description: z.string().max(1000).optional(),
      metadata: z.record(z.string(), z.string()).optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('cancel_payment'),
      request_id: RequestId,
      transaction_id: z.string().min(1),
      /** Kept as the payment's cancellation_reason; default `requested_by_customer` (staff cancel for the customer). */
      reason: z.string().min(1).max(500).optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('simulate_tap'),
      request_id: RequestId,
      reader: z.string().min(1),
      amount_tip: z.number().int().min(0).optional(),
      card_number: z.string().regex(/^\d{12,19}$/).optional(),
    })
    .strict(),
  z.object({ type: z.literal('ping') }).strict(),
]);
export type ClientMessage = z.infer<typeof ClientMessageSchema>;

export const ErrorInfoSchema = z.object({ type: z.string(), code: z.string().optional(), message: z.string() });
export type ErrorInfo = z.infer<typeof ErrorInfoSchema>;

export const AgentMessageSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('welcome'),
    protocol: z.literal(PROTOCOL_VERSION),
    agent_id: z.string(),
    mode: z.enum(['test', 'live']),
    merchant: z.object({ id: z.string(), business_name: z.string() }),
    upstream: z.enum(['connected', 'disconnected']),
  }),
  /** The full reader list: sent on subscribe and whenever the set of readers changes. */
  z.object({ type: z.literal('readers'), readers: z.array(ReaderStateSchema) }),
  /** One reader changed (presence or activity). */
  z.object({ type: z.literal('reader'), reader: ReaderStateSchema }),
  /** A transaction of this shop changed (pushed, never polled for by the counter). */
  z.object({ type: z.literal('transaction'), transaction: TransactionSummarySchema }),
  /** The answer to a command: `ok` with its `data`, or not `ok` with the API's error. */
  z.object({ type: z.literal('result'), request_id: z.string(), ok: z.boolean(), data: z.unknown().optional(), error: ErrorInfoSchema.optional() }),
  /** The agent's link to the server went down or came back. */
  z.object({ type: z.literal('upstream'), status: z.enum(['connected', 'disconnected']) }),
  z.object({ type: z.literal('error'), error: ErrorInfoSchema }),
  z.object({ type: z.literal('pong') }),
]);
export type AgentMessage = z.infer<typeof AgentMessageSchema>;
