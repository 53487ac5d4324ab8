import { CURRENCIES } from '../money.js';
import { ListQuerySchema, listEnvelope, MetadataSchema, TimestampSchema } from './common.js';
import { z } from './zod.js';
import { COUNTER_PAYMENT_METHODS } from '../channels.js';

export const PAYMENT_METHOD_TYPES = ['card', 'wallet', 'bank_transfer', 'ach', 'terminal', 'cash'] as const;
export const TRANSACTION_STATUSES = ['pending', 'requires_capture', 'succeeded', 'failed', 'canceled', 'refunded', 'partially_refunded'] as const;

/** Stripe's ceiling for a single charge (99,999,999 minor units); larger amounts are typos. */
export const MAX_AMOUNT = 99_999_999;
/** Spec §8: the smallest payment anywhere is 50 minor units. */
export const MIN_AMOUNT = 50;

export const AmountSchema = z.number().int().min(MIN_AMOUNT).max(MAX_AMOUNT).openapi({ description: 'Minor units (cents), at least 50', example: 4750 });

export const CurrencySchema = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'must be a three-letter ISO 4217 code')
  .transform((c) => c.toLowerCase())
  .refine((c) => Object.hasOwn(CURRENCIES, c), { message: 'is not a supported currency' })
  .openapi({ description: 'Three-letter ISO code; default the account currency', example: 'usd' });

/** Idempotency keys: 1–255 printable ASCII characters (Stripe allows 255). */
export const IdempotencyKeySchema = z
  .string()
  .min(1)
  .max(255)
  .regex(/^[\x20-\x7e]+$/, 'must be printable ASCII');

const urlSchema = z.url({ protocol: /^https?$/ }).max(2048);

export const CreateTransactionSchema = z
  .object({
    amount: AmountSchema,
    currency: CurrencySchema.optional(),
    payment_method: z.string().min(1).max(255).optional(),
    payment_method_type: z.enum(PAYMENT_METHOD_TYPES).default('card'),
    confirm: z.boolean().default(false),
    capture_method: z.enum(['automatic', 'manual']).default('automatic'),
    customer_id: z.uuid().optional(),
    description: z.string().max(1000).optional(),
    receipt_email: z.email().max(512).optional(),
    return_url: urlSchema.optional(),
    metadata: MetadataSchema.optional(),
    amount_tendered: z
      .number()
      .int()
      .min(1)
      .max(MAX_AMOUNT)
      .optional()
      .openapi({ description: 'Cash sales only (our extension, docs/api-choices.md): the cash the customer handed over, in minor units; at least `amount`, default `amount`', example: 5000 }),
    terminal_id: z
      .uuid()
      .optional()
      .openapi({ description: 'Cash sales only (our extension): the reader (uuid, GET /v1/terminal/readers) of the till that took it; its location is the sale\'s' }),
    location_id: z
      .uuid()
      .optional()
      .openapi({ description: 'Cash sales only (our extension): the terminal location of the till that took it, for a till without a card reader' }),
    taken_at: z.iso
      .datetime({ offset: true })
      .optional()
      .openapi({ description: 'Cash sales only (our extension, docs/agent.md): when a sale the counter took offline was taken; it is the payment\'s created_at. At most 5 minutes ahead of the server and 30 days back' }),
    offline_reference: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, 'must be 1-64 letters, digits and dashes')
      .optional()
      .openapi({ description: 'Cash sales only (our extension): the local reference the offline receipt printed', example: 'OFF-3F2A-0007' }),
    idempotency_key: IdempotencyKeySchema.optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.payment_method_type !== 'cash') {
      // Card payments at a till are attributed when sent to a reader (POST /v1/terminal/create-payment).
      for (const field of ['terminal_id', 'location_id', 'taken_at', 'offline_reference'] as const) {
        if (v[field] !== undefined) ctx.addIssue({ code: 'custom', path: [field], message: 'is only for payment_method_type cash' });
      }
    }
    if (v.payment_method_type === 'cash') {
      // A cash sale is settled across the counter: nothing is sent to the processor, so nothing
      // about a card, a redirect or a later capture can apply to it.
      if (v.payment_method !== undefined) ctx.addIssue({ code: 'custom', path: ['payment_method'], message: 'is not used by cash payments' });
      if (v.confirm) ctx.addIssue({ code: 'custom', path: ['confirm'], message: 'is not used by cash payments (they succeed at once)' });
      if (v.capture_method === 'manual') ctx.addIssue({ code: 'custom', path: ['capture_method'], message: 'must be automatic for cash payments' });
      if (v.return_url !== undefined) ctx.addIssue({ code: 'custom', path: ['return_url'], message: 'is not used by cash payments' });
      if (v.amount_tendered !== undefined && v.amount_tendered < v.amount) {
        ctx.addIssue({ code: 'custom', path: ['amount_tendered'], message: `must be at least amount (${v.amount}): the customer has not paid enough` });
      }
    } else if (v.amount_tendered !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['amount_tendered'], message: 'is only for payment_method_type cash' });
    }
    if (v.confirm && !v.payment_method) {
      ctx.addIssue({ code: 'custom', path: ['payment_method'], message: 'is required when confirm is true' });
    }
    if ((v.payment_method_type === 'ach' || v.payment_method_type === 'bank_transfer') && v.currency !== undefined && v.currency !== 'usd') {
      ctx.addIssue({ code: 'custom', path: ['currency'], message: 'ACH payments are in usd only' });
    }
  })
  .openapi('CreateTransaction');

export type CreateTransactionInput = z.infer<typeof CreateTransactionSchema>;

export const TransactionSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('transaction'),
    reference: z.string().openapi({ example: 'txn_3kq9Zb1c2D3e4F5g6H7i' }),
    type: z.literal('payment'),
    status: z.enum(TRANSACTION_STATUSES),
    status_badge: z.string().openapi({ example: 'Succeeded' }),
    amount: z.number().int(),
    amount_captured: z.number().int(),
    amount_refunded: z.number().int(),
    currency: z.string(),
    payment_method_type: z.enum(PAYMENT_METHOD_TYPES),
    capture_method: z.enum(['automatic', 'manual']),
    description: z.string().nullable(),
    receipt_email: z.string().nullable(),
    source: z.string().openapi({ example: 'api' }),
    customer_id: z.string().nullable(),
    is_test: z.boolean(),
    metadata: z.record(z.string(), z.string()),
    payment_intent_id: z.string().nullable(),
    card_brand: z.string().nullable(),
    card_last_four: z.string().nullable(),
    platform_fee_cents: z.number().int(),
    tip_amount: z.number().int(),
    amount_tendered: z.number().int().nullable().openapi({ description: 'Cash sales: the cash handed over (minor units); null otherwise' }),
    change_due: z.number().int().nullable().openapi({ description: 'Cash sales: the change given back, amount_tendered − amount; null otherwise' }),
    failure_code: z.string().nullable(),
    decline_code: z.string().nullable().openapi({ description: 'With failure_code card_declined: the issuer’s reason, e.g. insufficient_funds' }),
    failure_message: z.string().nullable(),
    cancellation_reason: z.string().nullable(),
    receipt_url: z.string().nullable(),
    terminal_id: z.string().nullable(),
    reader_id: z.string().nullable(),
    location_id: z.string().nullable().openapi({ description: 'The terminal location of the till that took a counter sale; null for online payments and counter sales recorded before tills were named (shown as unassigned)' }),
    created_by_key_id: z.string().nullable().openapi({ description: 'The API key that recorded the payment (a till\'s counter key names the till); null before keys were recorded' }),
    offline_reference: z.string().nullable().openapi({ description: 'A cash sale taken while the counter was offline: the local reference on its receipt' }),
    checkout_session_id: z.string().nullable().openapi({ description: 'The hosted checkout session that took this payment' }),
    payment_link_id: z.string().nullable().openapi({ description: 'The payment link this payment was made through' }),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
    captured_at: TimestampSchema.nullable(),
    failed_at: TimestampSchema.nullable(),
    canceled_at: TimestampSchema.nullable(),
    refunded_at: TimestampSchema.nullable(),
    disputed_at: TimestampSchema.nullable().openapi({ description: 'When the cardholder disputed the payment' }),
    dispute_id: z.uuid().nullable().openapi({ description: "The payment's dispute (GET /v1/disputes/{id}), once it is disputed" }),
    dispute_status: z.string().nullable().openapi({ description: "The dispute's status (Stripe's values); while it is open, or once lost, the payment cannot be refunded" }),
    cart: z
      .object({
        line_items: z.array(z.object({ description: z.string(), quantity: z.number().int(), amount: z.number().int() })),
        tax: z.number().int().nullable(),
      })
      .nullable()
      .openapi({ description: 'The cart a terminal payment showed on the reader (line_items at create-payment); null otherwise' }),
  })
  .openapi('Transaction');

export type Transaction = z.infer<typeof TransactionSchema>;

export const CreateTransactionResponseSchema = z
  .object({ data: TransactionSchema, client_secret: z.string(), message: z.string().optional() })
  .openapi('CreateTransactionResponse');

export const TRANSACTION_CHANNELS = ['counter', 'online'] as const;
export type TransactionChannel = (typeof TRANSACTION_CHANNELS)[number];
// The counter's methods (shared/channels.ts) are payment method types the API knows.
COUNTER_PAYMENT_METHODS satisfies readonly (typeof PAYMENT_METHOD_TYPES)[number][];
export { COUNTER_PAYMENT_METHODS };
export const TransactionListQuerySchema = ListQuerySchema.extend({
  status: z.enum(TRANSACTION_STATUSES).optional(),
  channel: z
    .enum(TRANSACTION_CHANNELS)
    .optional()
    .openapi({ description: 'counter: payments taken at the till (payment_method_type terminal or cash); online: every other payment (links, hosted pages, the API)' }),
}).strict();
export const TransactionListSchema = listEnvelope(TransactionSchema, 'TransactionList');

export const CaptureSchema = z
  .object({ amount_to_capture: z.number().int().min(1).max(MAX_AMOUNT).optional() })
  .strict()
  .openapi('CaptureTransaction');

export const CancelSchema = z
  .object({ reason: z.string().min(1).max(500).optional() })
  .strict()
  .openapi('CancelTransaction');

export const CancelResponseSchema = z
  .object({
    data: TransactionSchema,
    reader_reset: z.boolean().nullable().optional().openapi({ description: 'Terminal payments: true = reader cleared; false = canceled but reader unreachable; null = no reader attributed' }),
    warning: z.string().optional(),
  })
  .openapi('CancelTransactionResponse');

export const CreateRefundSchema = z
  .object({
    amount: z.number().int().min(1).max(MAX_AMOUNT).optional(),
    reason: z.string().min(1).max(500).optional(),
    metadata: MetadataSchema.optional(),
  })
  .strict()
  .openapi('CreateRefund');

export type CreateRefundInput = z.infer<typeof CreateRefundSchema>;

export const RefundSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('refund'),
    reference: z.string().openapi({ example: 're_3kq9Zb1c2D3e4F5g6H7i' }),
    transaction_id: z.uuid(),
    amount: z.number().int(),
    currency: z.string(),
    reason: z.string().nullable(),
    status: z.enum(['pending', 'succeeded', 'failed', 'canceled']),
    failure_reason: z.string().nullable(),
    metadata: z.record(z.string(), z.string()),
    is_test: z.boolean(),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .openapi('Refund');

export type Refund = z.infer<typeof RefundSchema>;
export const RefundListSchema = listEnvelope(RefundSchema, 'RefundList');

const ReceiptLineSchema = z
  .object({
    key: z.enum(['date', 'time', 'reference', 'order', 'description', 'subtotal', 'tip', 'total', 'refunded', 'card', 'entry_mode', 'account_type', 'application', 'aid', 'authorization_code', 'response_code', 'verification']),
    label: z.string().openapi({ example: 'AID' }),
    value: z.string().openapi({ example: 'A0000000031010' }),
  })
  .openapi('ReceiptLine');

/** What a payment's receipt prints (shared/receipt.ts): the receipt page and the agent's printer use it. */
export const ReceiptSchema = z
  .object({
    object: z.literal('receipt'),
    merchant_name: z.string(),
    address_lines: z.array(z.string()),
    notice: z.string().nullable().openapi({ example: 'TEST MODE: no money moved' }),
    status: z.string().openapi({ example: 'APPROVED' }),
    header: z.array(ReceiptLineSchema),
    amounts: z.array(ReceiptLineSchema),
    card: z.array(ReceiptLineSchema),
    footer: z.array(z.string()),
  })
  .openapi('Receipt');
