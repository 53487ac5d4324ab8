import { MetadataSchema, TimestampSchema } from './common.js';
import { AmountSchema, CurrencySchema, IdempotencyKeySchema, MAX_AMOUNT } from './transactions.js';
import { z } from './zod.js';
import { MAX_TIP_OPTIONS, MAX_TIP_PERCENTAGE } from '../tipping.js';
import { MAX_LINE_DESCRIPTION, MAX_LINE_ITEMS, MAX_LINE_QUANTITY } from '../cart.js';
import { DAY_END_PATTERN, isTimeZone } from '../time-zone.js';
import { RECEIPT_POLICIES } from '../receipt-policy.js';

export { MAX_LINE_DESCRIPTION, MAX_LINE_ITEMS, MAX_LINE_QUANTITY };

/** A tip amount or threshold: minor units, positive, no larger than any payment can be. */
const TipAmountSchema = z.number().int().min(1).max(MAX_AMOUNT);

/**
 * On-reader tipping at a location (Stripe's Terminal Configuration `tipping[<currency>]`): up to
 * three percentages (whole numbers 1–100) or up to three fixed amounts, or both with a smart-tip
 * threshold below which the fixed amounts show. In the merchant's default currency unless given.
 */
export const TippingSchema = z
  .object({
    currency: CurrencySchema.optional(),
    percentages: z.array(z.number().int().min(1).max(MAX_TIP_PERCENTAGE)).min(1).max(MAX_TIP_OPTIONS).optional(),
    fixed_amounts: z.array(TipAmountSchema).min(1).max(MAX_TIP_OPTIONS).optional(),
    smart_tip_threshold: TipAmountSchema.optional().openapi({ description: 'Below this amount the fixed amounts show, at or above it the percentages' }),
  })
  .strict()
  .superRefine((t, ctx) => {
    if (!t.percentages && !t.fixed_amounts) ctx.addIssue({ code: 'custom', path: ['percentages'], message: 'give percentages or fixed_amounts (or null to turn tipping off)' });
    const both = t.percentages !== undefined && t.fixed_amounts !== undefined;
    if (both && t.smart_tip_threshold === undefined) ctx.addIssue({ code: 'custom', path: ['smart_tip_threshold'], message: 'is required with both percentages and fixed_amounts (it decides which show)' });
    if (!both && t.smart_tip_threshold !== undefined) ctx.addIssue({ code: 'custom', path: ['smart_tip_threshold'], message: 'needs both percentages and fixed_amounts' });
  })
  .openapi('TerminalTipping');

export const TippingOutSchema = z
  .object({
    currency: z.string(),
    percentages: z.array(z.number().int()).nullable(),
    fixed_amounts: z.array(z.number().int()).nullable(),
    smart_tip_threshold: z.number().int().nullable(),
  })
  .openapi('TerminalTippingConfig');

const AddressSchema = z
  .object({
    line1: z.string().min(1).max(200),
    line2: z.string().max(200).optional(),
    city: z.string().min(1).max(100),
    state: z.string().max(100).optional(),
    postal_code: z.string().min(1).max(20),
    country: z.string().regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code').transform((c) => c.toUpperCase()),
  })
  .strict();

export const ReceiptPolicySchema = z.enum(RECEIPT_POLICIES).openapi({
  description: "When the location's counter prints the customer's receipt by itself: `always` on every approved payment and cash sale, `ask` when staff say yes, `never` (reprints from the history still print)",
});

const TimeZoneSchema = z
  .string()
  .max(64)
  .refine(isTimeZone, { message: 'must be an IANA time zone such as America/Los_Angeles or Europe/Paris' })
  .openapi({ description: "IANA time zone of the location's receipts, Day view and close-out; default the server machine's", example: 'America/Los_Angeles' });

const DayEndsAtSchema = z
  .string()
  .regex(DAY_END_PATTERN, 'must be a time of day HH:MM, 00:00 to 23:59')
  .openapi({ description: 'When the business day ends for the close-out, local time: a bar open past midnight counts its night with the day it began (04:00). Default 00:00', example: '04:00' });

export const CreateLocationSchema = z
  .object({
    display_name: z.string().min(1).max(100),
    address: AddressSchema,
    tipping: TippingSchema.nullable().optional(),
    receipt_policy: ReceiptPolicySchema.optional().openapi({ description: 'Default `always`' }),
    time_zone: TimeZoneSchema.optional(),
    day_ends_at: DayEndsAtSchema.optional(),
  })
  .strict()
  .openapi('CreateTerminalLocation');

export const UpdateLocationSchema = z
  .object({
    tipping: TippingSchema.nullable().optional().openapi({ description: 'null turns on-reader tipping off; left out, it stays as it is' }),
    receipt_policy: ReceiptPolicySchema.optional(),
    time_zone: TimeZoneSchema.optional(),
    day_ends_at: DayEndsAtSchema.optional(),
  })
  .strict()
  .refine((u) => u.tipping !== undefined || u.receipt_policy !== undefined || u.time_zone !== undefined || u.day_ends_at !== undefined, {
    path: ['tipping'],
    message: 'give tipping, receipt_policy, time_zone and/or day_ends_at to change',
  })
  .openapi('UpdateTerminalLocation');

export const LocationSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('terminal.location'),
    display_name: z.string(),
    address: z.record(z.string(), z.string()),
    processor_location_id: z.string().openapi({ example: 'tml_FvB2aQx…' }),
    tipping: TippingOutSchema.nullable().openapi({ description: 'On-reader tipping; null: off' }),
    receipt_policy: ReceiptPolicySchema,
    time_zone: z.string().openapi({ description: "IANA time zone (the server machine's when none was set)" }),
    day_ends_at: z.string().openapi({ description: 'When its business day ends, HH:MM local time' }),
    is_test: z.boolean(),
    created_at: TimestampSchema,
  })
  .openapi('TerminalLocation');

export const RegisterReaderSchema = z
  .object({
    name: z.string().min(1).max(100),
    registration_code: z.string().min(1).max(100),
    location_id: z.uuid().optional().openapi({ description: "Default: the merchant's first location in the key's mode" }),
  })
  .strict()
  .openapi('RegisterReader');

export const ReaderSchema = z
  .object({
    id: z.uuid().openapi({ description: 'Use as terminal_id when creating a terminal payment' }),
    object: z.literal('terminal.reader'),
    name: z.string(),
    serial_number: z.string(),
    model: z.string(),
    status: z.enum(['online', 'offline']),
    processor_terminal_id: z.string().openapi({ description: 'The tmr_… id: reader_id for process-payment, cancel-action and simulate-payment' }),
    location_id: z.uuid(),
    last_seen_at: TimestampSchema.nullable(),
    is_test: z.boolean(),
    action: z
      .object({
        type: z.string(),
        status: z.enum(['in_progress', 'succeeded', 'failed', 'canceled']),
        payment_intent_id: z.string().nullable(),
        transaction_id: z.string().nullable().openapi({ description: 'Our payment for that payment intent' }),
        failure_code: z.string().nullable().openapi({ description: 'customer_canceled: the customer pressed cancel on the reader (the payment stays pending)' }),
        failure_message: z.string().nullable(),
      })
      .nullable()
      .openapi({ description: "The reader's current or last payment action, as the processor's events last reported it" }),
  })
  .openapi('TerminalReader');

export const DeviceSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('terminal.device'),
    kind: z.enum(['receipt_printer', 'customer_display']),
    agent_id: z.uuid().openapi({ description: 'The on-premise agent driving it' }),
    agent_name: z.string(),
    device_id: z.string().openapi({ description: "The agent's name for it (printer, display), unique per agent" }),
    target: z.string().openapi({ description: 'How the agent reaches it: a device path, usb:VID:PID or tcp:HOST:PORT' }),
    connection: z.enum(['serial', 'usb', 'tcp']),
    status: z.enum(['online', 'offline']),
    last_seen_at: TimestampSchema.nullable().openapi({ description: 'When the server last knew it online: a report or a heartbeat of its agent' }),
    last_error: z.string().nullable().openapi({ description: 'What is wrong, in words ("Printer out of paper", "Its agent is offline"); null when all is well' }),
    printer: z
      .object({
        paper: z.enum(['ok', 'near_end', 'out']).nullable(),
        cover_open: z.boolean().nullable(),
        drawer_open: z.boolean().nullable(),
        queued: z.number().int().openapi({ description: 'Receipts waiting in the agent for the printer' }),
      })
      .nullable()
      .openapi({ description: 'Receipt printers: the status the printer last answered (null fields while offline); null for a display' }),
    is_test: z.boolean(),
    created_at: TimestampSchema,
  })
  .openapi('TerminalDevice');

export const LineItemSchema = z
  .object({
    description: z.string().min(1).max(MAX_LINE_DESCRIPTION),
    quantity: z.number().int().min(1).max(MAX_LINE_QUANTITY).default(1),
    amount: z.number().int().min(0).max(MAX_AMOUNT).openapi({ description: 'Unit price in minor units; the line is quantity × amount' }),
  })
  .strict()
  .openapi('TerminalLineItem');

export const CreateTerminalPaymentSchema = z
  .object({
    amount: AmountSchema,
    terminal_id: z.uuid().optional(),
    currency: CurrencySchema.optional(),
    description: z.string().max(1000).optional(),
    customer_id: z.uuid().optional(),
    metadata: MetadataSchema.optional(),
    line_items: z
      .array(LineItemSchema)
      .min(1)
      .max(MAX_LINE_ITEMS)
      .optional()
      .openapi({ description: 'A cart shown on the reader before the tap; Σ quantity × amount + tax must equal amount' }),
    tax: z.number().int().min(0).max(MAX_AMOUNT).optional().openapi({ description: 'Tax included in amount, shown on the cart; tips are suggested on amount − tax' }),
    skip_tipping: z.boolean().optional().openapi({ description: "No tip screen for this payment, whatever the location's tipping" }),
    enable_customer_cancellation: z.boolean().optional().openapi({ description: 'A cancel button on the reader (default true)' }),
    idempotency_key: IdempotencyKeySchema.optional(),
  })
  .strict()
  .superRefine((v, ctx) => {
    if (v.tax !== undefined && !v.line_items) ctx.addIssue({ code: 'custom', path: ['tax'], message: 'is shown on a cart: give line_items with it' });
    if (v.tax !== undefined && v.tax >= v.amount) ctx.addIssue({ code: 'custom', path: ['tax'], message: 'must be less than amount' });
    if (v.line_items) {
      const sum = v.line_items.reduce((total, item) => total + item.quantity * item.amount, 0);
      const expected = v.amount - (v.tax ?? 0);
      if (sum !== expected) {
        ctx.addIssue({ code: 'custom', path: ['line_items'], message: `add up to ${sum} (Σ quantity × amount) but amount less tax is ${expected}` });
      }
    }
  })
  .openapi('CreateTerminalPayment');

export const TerminalPaymentSchema = z
  .object({
    id: z.uuid(),
    reference: z.string(),
    payment_intent_id: z.string().nullable(),
    client_secret: z.string().nullable(),
    amount: z.number().int(),
    currency: z.string(),
    status: z.string(),
  })
  .openapi('TerminalPayment');

const ReaderIdSchema = z.string().min(1).max(255).openapi({ description: 'The reader’s processor_terminal_id (tmr_…), not its uuid' });

export const ProcessPaymentSchema = z
  .object({ payment_intent_id: z.string().min(1).max(255), reader_id: ReaderIdSchema })
  .strict()
  .openapi('ProcessTerminalPayment');

export const ReaderActionSchema = z
  .object({
    reader_id: z.string(),
    status: z.enum(['in_progress', 'succeeded', 'failed']),
    action_type: z.literal('process_payment_intent'),
  })
  .openapi('ReaderAction');

export const SimulatePaymentSchema = z
  .object({
    reader_id: ReaderIdSchema,
    amount_tip: z.number().int().min(0).max(99_999_999).optional(),
    card_number: z.string().regex(/^\d{12,19}$/).optional().openapi({ description: 'A card-present test number; default visa 4242' }),
  })
  .strict()
  .openapi('SimulateTerminalPayment');

export const SimulateResultSchema = z
  .object({
    reader_id: z.string(),
    status: z.enum(['succeeded', 'failed', 'in_progress']),
    transaction_id: z.uuid().nullable(),
    failure_code: z.string().nullable(),
  })
  .openapi('SimulatedTap');

export const CancelActionSchema = z.object({ reader_id: ReaderIdSchema }).strict().openapi('CancelReaderAction');

export const CancelActionResultSchema = z
  .object({
    reader_id: z.string(),
    status: z.literal('idle'),
    canceled_payment_intent_id: z.string().nullable().openapi({ description: 'The payment whose prompt was cleared from the screen, if any; the payment itself stays pending' }),
  })
  .openapi('CancelReaderActionResult');

export type CreateTerminalPaymentInput = z.infer<typeof CreateTerminalPaymentSchema>;
