import { ListQuerySchema, listEnvelope, MetadataSchema, TimestampSchema } from './common.js';
import { CurrencySchema, MAX_AMOUNT } from './transactions.js';
import { z } from './zod.js';

/** Stripe's payout statuses. */
export const PAYOUT_STATUSES = ['pending', 'in_transit', 'paid', 'failed', 'canceled'] as const;

/**
 * Stripe's payout `description` is at most 1,000 characters on the API, but banks show 22 of the
 * statement descriptor; we keep Stripe's own bound.
 */
const DESCRIPTION_MAX = 1000;

export const CreatePayoutSchema = z
  .object({
    amount: z.number().int().min(1).max(MAX_AMOUNT).optional().openapi({ description: 'Minor units; default all of the available balance in the currency' }),
    currency: CurrencySchema.optional(),
    description: z.string().max(DESCRIPTION_MAX).optional(),
    metadata: MetadataSchema.optional(),
  })
  .strict()
  .openapi('CreatePayout');

export const PayoutSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('payout'),
    reference: z.string().openapi({ example: 'po_8fQk2n0aZ1bC3dE4fG5h' }),
    amount: z.number().int(),
    currency: z.string(),
    status: z.enum(PAYOUT_STATUSES),
    automatic: z.boolean().openapi({ description: "true for a payout the processor made on the account's schedule, false for one asked for with POST /v1/payouts" }),
    description: z.string().nullable(),
    arrival_date: TimestampSchema.nullable().openapi({ description: 'When the money is expected in the bank account' }),
    failure_code: z.string().nullable().openapi({ description: "On failed payouts, Stripe's code: no_account, account_closed, insufficient_funds, …" }),
    failure_message: z.string().nullable(),
    is_test: z.boolean(),
    metadata: z.record(z.string(), z.string()),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
  })
  .openapi('Payout');

export const PayoutListQuerySchema = ListQuerySchema.extend({ status: z.enum(PAYOUT_STATUSES).optional() }).strict();
export const PayoutListSchema = listEnvelope(PayoutSchema, 'PayoutList');

const MoneySchema = z.object({ amount: z.number().int(), currency: z.string() });

export const BalanceSchema = z
  .object({
    object: z.literal('balance'),
    available: z.array(MoneySchema).openapi({ description: 'Can be paid out now, per currency' }),
    pending: z.array(MoneySchema).openapi({ description: 'Not yet available (charges settle after a delay), per currency' }),
    is_test: z.boolean(),
  })
  .openapi('Balance');

export const SetBankAccountSchema = z
  .object({
    account_number: z
      .string()
      .regex(/^[A-Za-z0-9]{4,34}$/, 'must be 4 to 34 letters and digits (an account number, or an IBAN)')
      .openapi({ description: "The account number (an IBAN where the country uses them). Test mode: Stripe's test numbers, e.g. 000123456789 pays, 000111111116 fails no_account", example: '000123456789' }),
    routing_number: z
      .string()
      .regex(/^[0-9-]{4,12}$/, 'must be 4 to 12 digits')
      .optional()
      .openapi({ description: 'Routing number (US), sort code (GB), BSB (AU), transit and institution (CA); none with an IBAN', example: '110000000' }),
    account_holder_name: z.string().max(256).optional(),
    currency: CurrencySchema.optional(),
  })
  .strict()
  .openapi('SetBankAccount');

export const BankAccountSchema = z
  .object({
    object: z.literal('bank_account'),
    bank_name: z.string().nullable(),
    last4: z.string(),
    routing_number: z.string().nullable(),
    country: z.string(),
    currency: z.string(),
    account_holder_name: z.string().nullable(),
    status: z.string().openapi({ description: "Stripe's status: new, validated, verified, verification_failed or errored (a payout to it failed)" }),
    is_test: z.boolean(),
  })
  .openapi('BankAccount');

export type SetBankAccountInput = z.infer<typeof SetBankAccountSchema>;
export type BankAccount = z.infer<typeof BankAccountSchema>;
export type CreatePayoutInput = z.infer<typeof CreatePayoutSchema>;
export type Payout = z.infer<typeof PayoutSchema>;
export type Balance = z.infer<typeof BalanceSchema>;
