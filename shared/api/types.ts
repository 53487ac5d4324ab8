import type { z } from 'zod';
import type { CheckoutSessionSchema, CreateCheckoutSessionSchema, CreatePaymentLinkSchema, PaymentLinkListSchema, PaymentLinkSchema } from '../contract/checkout.js';
import type { ErrorBodySchema } from '../contract/common.js';
import type { CreateCustomerSchema, CustomerListSchema, CustomerSchema, DeletedCustomerSchema, UpdateCustomerSchema } from '../contract/customers.js';
import type { DisputeListSchema, DisputeSchema, SubmitEvidenceSchema } from '../contract/disputes.js';
import type { BalanceSchema, BankAccountSchema, CreatePayoutSchema, PayoutListSchema, PayoutSchema, SetBankAccountSchema } from '../contract/payouts.js';
import type { MerchantSchema, OnboardingLinkRequestSchema, OnboardingLinkSchema } from '../contract/merchant.js';
import type { ApiKeySchema, CreateApiKeySchema, RollApiKeySchema } from '../contract/api-keys.js';
import type { AuditEntrySchema, AuditLogSchema } from '../contract/audit.js';
import type {
  CancelActionResultSchema,
  CreateLocationSchema,
  UpdateLocationSchema,
  CreateTerminalPaymentSchema,
  LocationSchema,
  ReaderActionSchema,
  ReaderSchema,
  DeviceSchema,
  RegisterReaderSchema,
  SimulatePaymentSchema,
  SimulateResultSchema,
  TerminalPaymentSchema,
} from '../contract/terminal.js';
import type {
  CancelResponseSchema,
  CancelSchema,
  CaptureSchema,
  CreateRefundSchema,
  CreateTransactionResponseSchema,
  CreateTransactionSchema,
  RefundSchema,
  TransactionListSchema,
  ReceiptSchema,
  TransactionSchema,
} from '../contract/transactions.js';
import type {
  CreateWebhookEndpointSchema,
  DeletedWebhookEndpointSchema,
  EventDetailSchema,
  EventListSchema,
  EventSchema,
  ResendEventSchema,
  WebhookEndpointListSchema,
  WebhookEndpointSchema,
  UpdateWebhookEndpointSchema,
} from '../contract/webhooks.js';

/**
 * The /v1 wire types, inferred from the server's zod schemas (the same ones that generate
 * /v1/openapi.json). Type-only imports: nothing of the server loads with the client. Responses are
 * the schemas' output; request bodies their input, so fields with a server default stay optional.
 */

export type Merchant = z.output<typeof MerchantSchema>;
export type OnboardingLink = z.output<typeof OnboardingLinkSchema>;
export type OnboardingLinkParams = z.input<typeof OnboardingLinkRequestSchema>;

export type ApiKey = z.output<typeof ApiKeySchema>;
export type CreateApiKeyParams = z.input<typeof CreateApiKeySchema>;
export type RollApiKeyParams = z.input<typeof RollApiKeySchema>;

/** One change in the audit trail (GET /v1/audit-log), hash-chained to the one before (shared/audit-chain.ts). */
export type AuditEntry = z.output<typeof AuditEntrySchema>;
export type AuditLog = z.output<typeof AuditLogSchema>;

export type Transaction = z.output<typeof TransactionSchema>;
export type TransactionList = z.output<typeof TransactionListSchema>;
export type CreateTransactionResponse = z.output<typeof CreateTransactionResponseSchema>;
export type CancelTransactionResponse = z.output<typeof CancelResponseSchema>;
export type Refund = z.output<typeof RefundSchema>;
/** What a paid payment's receipt prints (shared/receipt.ts computes it; the agent prints it). */
export type Receipt = z.output<typeof ReceiptSchema>;
export type CreateTransactionParams = z.input<typeof CreateTransactionSchema>;
export type CaptureParams = z.input<typeof CaptureSchema>;
export type CancelParams = z.input<typeof CancelSchema>;
export type CreateRefundParams = z.input<typeof CreateRefundSchema>;

export type Dispute = z.output<typeof DisputeSchema>;
export type DisputeList = z.output<typeof DisputeListSchema>;
export type SubmitEvidenceParams = z.input<typeof SubmitEvidenceSchema>;

export type Balance = z.output<typeof BalanceSchema>;
export type Payout = z.output<typeof PayoutSchema>;
export type PayoutList = z.output<typeof PayoutListSchema>;
export type CreatePayoutParams = z.input<typeof CreatePayoutSchema>;
export type BankAccount = z.output<typeof BankAccountSchema>;
export type SetBankAccountParams = z.input<typeof SetBankAccountSchema>;

export type Customer = z.output<typeof CustomerSchema>;
export type CustomerList = z.output<typeof CustomerListSchema>;
export type DeletedCustomer = z.output<typeof DeletedCustomerSchema>;
export type CreateCustomerParams = z.input<typeof CreateCustomerSchema>;
export type UpdateCustomerParams = z.input<typeof UpdateCustomerSchema>;

export type Reader = z.output<typeof ReaderSchema>;
/** A receipt printer or customer display an agent drives (GET /v1/terminal/devices). */
export type Device = z.output<typeof DeviceSchema>;
export type Location = z.output<typeof LocationSchema>;
export type TerminalPayment = z.output<typeof TerminalPaymentSchema>;
export type ReaderAction = z.output<typeof ReaderActionSchema>;
export type SimulateResult = z.output<typeof SimulateResultSchema>;
export type CancelActionResult = z.output<typeof CancelActionResultSchema>;
export type RegisterReaderParams = z.input<typeof RegisterReaderSchema>;
export type CreateLocationParams = z.input<typeof CreateLocationSchema>;
export type UpdateLocationParams = z.input<typeof UpdateLocationSchema>;
export type CreateTerminalPaymentParams = z.input<typeof CreateTerminalPaymentSchema>;
export type SimulatePaymentParams = z.input<typeof SimulatePaymentSchema>;

export type PaymentLink = z.output<typeof PaymentLinkSchema>;
export type PaymentLinkList = z.output<typeof PaymentLinkListSchema>;
export type CheckoutSession = z.output<typeof CheckoutSessionSchema>;
export type CreatePaymentLinkParams = z.input<typeof CreatePaymentLinkSchema>;
export type CreateCheckoutSessionParams = z.input<typeof CreateCheckoutSessionSchema>;

export type WebhookEndpoint = z.output<typeof WebhookEndpointSchema>;
export type WebhookEndpointList = z.output<typeof WebhookEndpointListSchema>;
export type DeletedWebhookEndpoint = z.output<typeof DeletedWebhookEndpointSchema>;
export type UpdateWebhookEndpointParams = z.input<typeof UpdateWebhookEndpointSchema>;
export type CreateWebhookEndpointParams = z.input<typeof CreateWebhookEndpointSchema>;
export type WebhookEvent = z.output<typeof EventSchema>;
export type EventDetail = z.output<typeof EventDetailSchema>;
export type EventList = z.output<typeof EventListSchema>;
export type ResendEventParams = z.input<typeof ResendEventSchema>;

/** Most answers are one object under `data`. */
export interface Data<T> {
  data: T;
}

type WireError = z.output<typeof ErrorBodySchema>['error'];

/**
 * The `error` object of a non-2xx answer. `type` is open: a proxy in front of the server, or a
 * newer server, may say something this client does not know; extra fields are kept as they came.
 */
export type ApiErrorBody = Omit<WireError, 'type'> & { type: WireError['type'] | (string & {}); [field: string]: unknown };
