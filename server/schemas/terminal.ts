import { MetadataSchema, TimestampSchema } from './common.js';
import { AmountSchema, CurrencySchema, IdempotencyKeySchema } from './transactions.js';
import { z } from './zod.js';

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

export const CreateLocationSchema = z
  .object({ display_name: z.string().min(1).max(100), address: AddressSchema })
  .strict()
  .openapi('CreateTerminalLocation');

export const LocationSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('terminal.location'),
    display_name: z.string(),
    address: z.record(z.string(), z.string()),
    processor_location_id: z.string().openapi({ example: 'tml_FvB2aQx…' }),
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
  })
  .openapi('TerminalReader');

export const CreateTerminalPaymentSchema = z
  .object({
    amount: AmountSchema,
    terminal_id: z.uuid().optional(),
    currency: CurrencySchema.optional(),
    description: z.string().max(1000).optional(),
    customer_id: z.uuid().optional(),
    metadata: MetadataSchema.optional(),
    idempotency_key: IdempotencyKeySchema.optional(),
  })
  .strict()
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
