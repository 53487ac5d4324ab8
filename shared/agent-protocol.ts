import { z } from 'zod';
import { MAX_LINE_DESCRIPTION, MAX_LINE_ITEMS, MAX_LINE_QUANTITY } from './cart.js';
import { RECEIPT_POLICIES } from './receipt-policy.js';

/**
 * The agent's local websocket protocol: what the counter (the TUI, or any POS front-end) and the
 * on-premise agent say to each other. One JSON object per message; every message is validated
 * with these schemas on receipt. Written down for integrators in docs/agent-protocol.md.
 */

export const PROTOCOL_VERSION = 1;

/** What a reader is doing, as the agent follows it (the /v1 API deliberately does not report this). */
export const READER_ACTIVITIES = ['idle', 'waiting_for_card', 'processing', 'approved', 'declined', 'canceled_on_reader'] as const;
export type ReaderActivity = (typeof READER_ACTIVITIES)[number];

/** How a payment on a reader ended. */
export const READER_PAYMENT_OUTCOMES = ['approved', 'declined', 'canceled'] as const;
export type ReaderPaymentOutcome = (typeof READER_PAYMENT_OUTCOMES)[number];

/**
 * The payment a reader's action is about, as the server has it now: pushed with the reader, so no
 * one downstream looks the payment up to tell what the reader's screen means.
 */
export const ReaderPaymentSchema = z.object({
  /** Our transaction. */
  id: z.string(),
  amount: z.number().int(),
  currency: z.string(),
  /** The transaction's status (`pending`, `succeeded`, `failed`, `canceled`, …). */
  status: z.string(),
  /** Why it failed, when it did: Stripe's error code, the issuer's reason and the processor's words. */
  failure_code: z.string().nullable(),
  decline_code: z.string().nullable(),
  failure_message: z.string().nullable(),
  cancellation_reason: z.string().nullable(),
  /** How it ended, null while it has not (pending): `approved` covers captured, refunded and disputed payments. */
  outcome: z.enum(READER_PAYMENT_OUTCOMES).nullable(),
});
export type ReaderPayment = z.infer<typeof ReaderPaymentSchema>;

export const ReaderStateSchema = z.object({
  id: z.string(),
  processor_terminal_id: z.string(),
  name: z.string(),
  status: z.enum(['online', 'offline']),
  last_seen_at: z.string().nullable(),
  activity: z.enum(READER_ACTIVITIES),
  /** The payment the activity is about, when there is one: `payment.id`, `.amount`, `.currency`, repeated here for counters written before `payment`. */
  transaction_id: z.string().nullable(),
  amount: z.number().int().nullable(),
  currency: z.string().nullable(),
  /** Why the reader's action failed (a decline code, `customer_canceled`); the payment's own reasons are in `payment`. */
  failure_code: z.string().nullable(),
  updated_at: z.string(),
  /** The payment on the reader as the server has it now (its status and how it ended), null when there is none. */
  payment: ReaderPaymentSchema.nullable().default(null),
  /**
   * What an approval on this reader prints by itself (its location's policy, or the agent's
   * `--receipts`): with `ask` the counter asks staff and sends `print_receipt` on yes.
   */
  receipt_policy: z.enum(RECEIPT_POLICIES).optional(),
});
export type ReaderState = z.infer<typeof ReaderStateSchema>;

/**
 * A counter device the agent drives (docs/counter-hardware.md): a receipt printer (its cash drawer
 * hangs off it) or a customer display. `online` means connected and answering; the printer's own
 * status (paper, cover, drawer) comes from its real-time status replies.
 */
export const DeviceStateSchema = z.object({
  id: z.enum(['printer', 'display']),
  kind: z.enum(['receipt_printer', 'customer_display']),
  /** How it is reached: a device path, usb:VID:PID or tcp:HOST:PORT. */
  target: z.string(),
  status: z.enum(['online', 'offline']),
  last_seen_at: z.string().nullable(),
  /** What is wrong, in words for the counter ("Printer out of paper"); null when all is well. */
  last_error: z.string().nullable(),
  paper: z.enum(['ok', 'near_end', 'out']).nullable(),
  cover_open: z.boolean().nullable(),
  drawer_open: z.boolean().nullable(),
  /** Receipts waiting for the printer (kept on disk until printed). */
  queued: z.number().int().nullable(),
});
export type DeviceState = z.infer<typeof DeviceStateSchema>;

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

/** Why a cash drawer was opened: a "no sale", a cash sale's change, or a cash refund. */
export const DRAWER_REASONS = ['no_sale', 'cash_sale', 'refund'] as const;
export type DrawerReason = (typeof DRAWER_REASONS)[number];

export const ClientMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('hello'), protocol: z.literal(PROTOCOL_VERSION), token: z.string().optional() }).strict(),
  z.object({ type: z.literal('subscribe'), topics: z.array(z.enum(['readers', 'transactions', 'devices'])).min(1) }).strict(),
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
      /** A cart shown on the reader before the tap: Σ quantity × amount (+ tax) must equal amount. */
      line_items: z
        .array(
          z
            .object({
              description: z.string().min(1).max(MAX_LINE_DESCRIPTION),
              quantity: z.number().int().min(1).max(MAX_LINE_QUANTITY),
              amount: z.number().int().min(0),
            })
            .strict(),
        )
        .min(1)
        .max(MAX_LINE_ITEMS)
        .optional(),
      /** Tax included in amount, shown on the cart; only with line_items. */
      tax: z.number().int().min(0).optional(),
    })
    .strict()
    .refine((m) => m.tax === undefined || m.line_items !== undefined, { path: ['tax'], message: 'is shown on a cart: give line_items with it' })
    .refine((m) => !m.line_items || m.line_items.reduce((sum, l) => sum + l.quantity * l.amount, m.tax ?? 0) === m.amount, {
      path: ['line_items'],
      message: 'must add up to amount (Σ quantity × amount + tax)',
    }),
  z
    .object({
      type: z.literal('process_payment'),
      request_id: RequestId,
      /** A payment already made (start_payment) that is still open or was declined: sent to the reader again, no new payment. */
      transaction_id: z.string().min(1).max(100),
      /** The reader's processor_terminal_id (tmr_…) or uuid. */
      reader: z.string().min(1),
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
  z
    .object({
      type: z.literal('cash_sale'),
      request_id: RequestId,
      amount: z.number().int().min(50),
      /** The cash handed over; default the amount (exact cash). */
      amount_tendered: z.number().int().min(1).optional(),
      currency: z.string().length(3).optional(),
      description: z.string().max(1000).optional(),
      /** Who took it, for the log. */
      staff: z.string().min(1).max(100).optional(),
      /** The till's reader (tmr_… or uuid): its location's receipt policy applies to the sale. */
      reader: z.string().min(1).max(255).optional(),
      /** Kept on the sale, as on start_payment (a split sale's `order` reference links its parts). */
      metadata: z.record(z.string(), z.string()).optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('print_receipt'),
      request_id: RequestId,
      transaction_id: z.string().min(1).max(100),
      /** `customer` (default) or the merchant's copy; a reprint of either is always printed. */
      copy: z.enum(['customer', 'merchant']).optional(),
    })
    .strict(),
  z
    .object({
      type: z.literal('open_drawer'),
      request_id: RequestId,
      /** Why, for the log and the audit trail: `no_sale` is the counter's "no sale" key. */
      reason: z.enum(DRAWER_REASONS).default('no_sale'),
      staff: z.string().min(1).max(100).optional(),
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
  /** Every counter device: sent on subscribe to `devices`. */
  z.object({ type: z.literal('devices'), devices: z.array(DeviceStateSchema) }),
  /** One device changed (presence, paper, cover, drawer, queue). */
  z.object({ type: z.literal('device'), device: DeviceStateSchema }),
  /** A transaction of this shop changed (pushed, never polled for by the counter). */
  z.object({ type: z.literal('transaction'), transaction: TransactionSummarySchema }),
  /** The answer to a command: `ok` with its `data`, or not `ok` with the API's error. */
  z.object({ type: z.literal('result'), request_id: z.string(), ok: z.boolean(), data: z.unknown().optional(), error: ErrorInfoSchema.optional() }),
  /** The agent's link to the server went down or came back. */
  z.object({ type: z.literal('upstream'), status: z.enum(['connected', 'disconnected']) }),
  /**
   * Cash sales taken while the server was out of reach (docs/agent.md, "Offline"): sent after
   * welcome and whenever the queue changes. `limit` is the refusal, in words, once the bound is reached.
   */
  z.object({
    type: z.literal('offline'),
    waiting: z.number().int().min(0),
    oldest_taken_at: z.string().nullable(),
    refused: z.number().int().min(0),
    limit: z.string().nullable(),
  }),
  z.object({ type: z.literal('error'), error: ErrorInfoSchema }),
  z.object({ type: z.literal('pong') }),
]);
export type AgentMessage = z.infer<typeof AgentMessageSchema>;
