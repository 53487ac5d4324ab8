import { createHash } from 'node:crypto';
import type { Context } from '@opentelemetry/api';
import type { Mode } from '../db/schema.js';
import type { ProcessorFailure } from './errors.js';
import type {
  AccountSnapshot,
  BalanceSnapshot,
  BankAccountSnapshot,
  CustomerSnapshot,
  DisputeSnapshot,
  PaymentCancellationReason,
  PaymentSnapshot,
  PayoutSnapshot,
  ProcessorEvent,
  ReaderSnapshot,
  RefundReason,
  RefundSnapshot,
} from './snapshots.js';

/** The payment-method families a PaymentIntent may be paid with (Stripe's names). */
export type ProcessorMethod = 'card' | 'us_bank_account' | 'card_present';

/** A PaymentIntent to create as a destination charge settled to the merchant's connected account. */
export interface IntentRequest {
  amount: number;
  currency: string;
  methods: ProcessorMethod[];
  captureMethod: 'automatic' | 'manual';
  applicationFee: number;
  destination: string;
  confirm: boolean;
  paymentMethod?: string;
  returnUrl?: string;
  /** ACH confirmed on the server: the mandate was accepted offline (by the merchant's own terms). */
  offlineMandate?: boolean;
  description?: string;
  receiptEmail?: string;
  /** The processor's customer the payment is for (a customer of ours mirrored on the processor). */
  customer?: string;
  metadata: Record<string, string>;
}

/**
 * A created PaymentIntent. `decline` is set when the processor declined it on creation: the intent
 * exists and carries the failure, as Stripe's card errors carry their `payment_intent`.
 */
export interface IntentCreation {
  intent: PaymentSnapshot;
  decline?: ProcessorFailure;
}

export interface RefundRequest {
  paymentIntent: string;
  amount: number;
  reason?: RefundReason;
  metadata: Record<string, string>;
}

export interface LocationRequest {
  displayName: string;
  address: Record<string, string>;
  metadata: Record<string, string>;
}

export interface ReaderRequest {
  registrationCode: string;
  location: string;
  label: string;
  metadata: Record<string, string>;
}

/**
 * A location's on-reader tipping in one currency (Stripe's `tipping[<currency>]` of a Terminal
 * Configuration): up to three percentages or fixed amounts, fixed amounts below the smart-tip
 * threshold.
 */
export interface TippingRequest {
  currency: string;
  percentages?: number[];
  fixedAmounts?: number[];
  smartTipThreshold?: number;
}

/** How a reader takes one payment (Stripe's `process_config`). */
export interface ProcessConfig {
  skipTipping: boolean;
  enableCustomerCancellation: boolean;
  /** The amount tip suggestions are computed on (the amount before tax); default the payment's amount. */
  tipEligibleAmount?: number;
}

/** A cart shown on a reader before it asks for the card (Stripe's `set_reader_display` type `cart`). */
export interface CartRequest {
  currency: string;
  /** `amount` is the unit price; the reader shows quantity × amount. */
  lineItems: { description: string; quantity: number; amount: number }[];
  tax?: number;
  total: number;
}

/** What a test card presented on a simulated reader carries. */
export interface PresentedCard {
  amountTip?: number;
  cardNumber?: string;
}

/**
 * Evidence for a dispute, under Stripe's field names: text fields as text, file fields as the
 * processor's file ids. `submit` sends it to the card network; without it the evidence is staged.
 */
export interface DisputeEvidence {
  evidence: Record<string, string>;
  submit: boolean;
}

/** A payout from a connected account's available balance to its bank account. */
export interface PayoutRequest {
  account: string;
  amount: number;
  currency: string;
  description?: string;
  metadata: Record<string, string>;
}

/** A bank account for a connected account's payouts (Stripe's test numbers work in test mode). */
export interface BankAccountRequest {
  account: string;
  accountNumber: string;
  /** Routing number (US), sort code (GB), BSB (AU), …; none where the account number is an IBAN. */
  routingNumber?: string;
  holderName?: string;
  country: string;
  currency: string;
}

export interface AccountLinkRequest {
  account: string;
  /** Where the processor sends the merchant when the link has expired or was already used. */
  refreshUrl: string;
  /** Where the processor sends the merchant when they leave onboarding (finished or not). */
  returnUrl: string;
}

export interface AccountLink {
  url: string;
  /** Epoch ms. */
  expiresAt: number;
}

/**
 * How connected accounts are made. `type`: what live accounts are (`express`: the processor's
 * hosted onboarding collects what it needs; `custom`: the platform collects it and sends it by
 * API). `prefill`: per mode, whether a new account is made ready to charge at once with Stripe's
 * test verification values, which only a test-mode key (or the simulator's simulated live mode)
 * accepts; such accounts are `custom`, since only those take identity and terms acceptance by API.
 */
export interface AccountPolicy {
  type: 'express' | 'custom';
  prefill: Record<Mode, boolean>;
}

/**
 * A customer's fields as the processor keeps them. On an update, an absent field is left as it is,
 * null clears it, and metadata keys merge (an empty value removes a key), as on Stripe.
 */
export interface CustomerFields {
  name?: string | null;
  email?: string | null;
  phone?: string | null;
  description?: string | null;
  metadata?: Record<string, string>;
}

/**
 * The processor as the domain uses it, one narrow port per domain: each service takes only the
 * port it needs. Every call either answers a snapshot (snapshots.ts) or throws a
 * `ProcessorFailure`, whatever the implementation: the domain never sees a processor's own types
 * or error classes. Mutating calls take an idempotency key derived from ours
 * (`processorIdempotencyKey`), so that a retry after a crash lands on what the first attempt made.
 *
 * Implementations: `StripeProcessor` (stripe/processor.ts: the `stripe` package, against Stripe or
 * the simulator) in production, `InMemoryProcessor` in unit tests. Neither touches a table.
 */

/**
 * Where a processor call is made: the mode whose keys it uses and, when traces are exported, the
 * trace its client span joins. The domain's `Scope` is one; work with no request behind it (a
 * sweep, a webhook) passes `{ mode }`. The trace travels with the mode so that no call can be made
 * without it: nothing else carries a context across an `await` (server/operations/trace-context.ts).
 */
export interface ProcessorScope {
  readonly mode: Mode;
  readonly trace?: Context | undefined;
}

/** Which processor this is and how a browser reaches it. */
export interface ProcessorIdentity {
  /** Shown to merchants (`GET /v1/merchant`): `stripe` or `stripe-simulator`. */
  readonly name: string;
  readonly kind: 'simulator' | 'stripe';
  /** The modes the platform has keys for. */
  readonly modes: readonly Mode[];
  publishableKey(mode: Mode): string | null;
  /** Where a browser reaches the processor's client-side API; null means Stripe.js's default. */
  browserUrl(): string | null;
  /** One cheap read proving the processor answers (readiness, server/operations/readiness.ts); throws a ProcessorFailure otherwise. */
  ping(): Promise<void>;
}

/** What a new connected account is made from (the merchant, as the accounts domain knows it). */
export interface AccountRequest {
  merchantId: string;
  country: string;
  businessName: string;
  /** Epoch ms: when the merchant accepted the terms (its creation), so a retry sends the very same parameters. */
  acceptedAt: number;
}

/** Connected accounts (Stripe Connect): the merchants' accounts money settles to. */
export interface ConnectPort {
  /** Makes a merchant's connected account, as the account policy says (AccountPolicy). */
  createAccount(scope: ProcessorScope, request: AccountRequest, idempotencyKey: string): Promise<AccountSnapshot>;
  /** A capability's status on a connected account; `inactive` when the account does not have it. */
  capabilityStatus(scope: ProcessorScope, account: string, capability: string): Promise<string>;
  /** The connected account as the processor has it now: whether it may charge and pay out, what it still needs. */
  retrieveAccount(scope: ProcessorScope, account: string): Promise<AccountSnapshot>;
  /**
   * A single-use link to the processor's hosted onboarding for a connected account (Stripe's
   * Account Link, `account_onboarding`). Not idempotent by nature: every call makes a new link.
   */
  createAccountLink(scope: ProcessorScope, request: AccountLinkRequest): Promise<AccountLink>;
}

export interface PaymentsPort {
  readonly kind: ProcessorIdentity['kind'];
  /** ACH needs a capability of the connected account. */
  capabilityStatus(scope: ProcessorScope, account: string, capability: string): Promise<string>;
  createIntent(scope: ProcessorScope, request: IntentRequest, idempotencyKey: string): Promise<IntentCreation>;
  /** The payment with its latest charge. */
  retrieveIntent(scope: ProcessorScope, id: string): Promise<PaymentSnapshot>;
  captureIntent(scope: ProcessorScope, id: string, amount: number | undefined, idempotencyKey: string): Promise<PaymentSnapshot>;
  cancelIntent(scope: ProcessorScope, id: string, reason: PaymentCancellationReason | undefined, idempotencyKey: string): Promise<PaymentSnapshot>;
}

export interface RefundsPort {
  /** Refunds give back the merchant's transfer and the platform fee with the money (destination charges). */
  createRefund(scope: ProcessorScope, request: RefundRequest, idempotencyKey: string): Promise<RefundSnapshot>;
  retrieveRefund(scope: ProcessorScope, id: string): Promise<RefundSnapshot>;
  listRefunds(scope: ProcessorScope, paymentIntent: string): Promise<RefundSnapshot[]>;
}

export interface TerminalPort {
  createLocation(scope: ProcessorScope, request: LocationRequest, idempotencyKey: string): Promise<{ id: string }>;
  registerReader(scope: ProcessorScope, request: ReaderRequest, idempotencyKey: string): Promise<ReaderSnapshot>;
  /** Every reader, or every reader at one location, all pages. */
  listReaders(scope: ProcessorScope, location?: string): Promise<ReaderSnapshot[]>;
  /** Null when the processor deleted the reader. */
  retrieveReader(scope: ProcessorScope, id: string): Promise<ReaderSnapshot | null>;
  deleteReader(scope: ProcessorScope, id: string): Promise<void>;
  /**
   * Puts a location's tipping on the processor: creates the Terminal Configuration carrying it and
   * assigns it to the location (`configuration_overrides`) when `configuration` is null, else
   * updates that configuration; null tipping turns tipping off. Answers the configuration's id.
   */
  configureLocationTipping(scope: ProcessorScope, location: string, configuration: string | null, tipping: TippingRequest | null, idempotencyKey: string): Promise<string>;
  processPaymentIntent(scope: ProcessorScope, reader: string, paymentIntent: string, config?: ProcessConfig): Promise<ReaderSnapshot>;
  /** Shows a cart on the reader; it stays through the payment sent next. */
  setReaderDisplay(scope: ProcessorScope, reader: string, cart: CartRequest): Promise<ReaderSnapshot>;
  cancelReaderAction(scope: ProcessorScope, reader: string): Promise<void>;
  /** Test mode only: a customer presents a test card on a simulated reader. */
  presentPaymentMethod(scope: ProcessorScope, reader: string, card: PresentedCard): Promise<ReaderSnapshot>;
}

export interface DisputesPort {
  /**
   * Disputes of payments made on the platform (destination charges are disputed there): those of
   * one PaymentIntent, or those created at or after `createdSince` (epoch ms), all pages.
   */
  listDisputes(scope: ProcessorScope, filter: { paymentIntent?: string; createdSince?: number }): Promise<DisputeSnapshot[]>;
  retrieveDispute(scope: ProcessorScope, id: string): Promise<DisputeSnapshot>;
  /** Stages evidence, or submits it with `submit`. */
  updateDispute(scope: ProcessorScope, id: string, update: DisputeEvidence, idempotencyKey: string): Promise<DisputeSnapshot>;
  /** Accepts the dispute: it is lost (an inquiry is closed). */
  closeDispute(scope: ProcessorScope, id: string, idempotencyKey: string): Promise<DisputeSnapshot>;
}

export interface PayoutsPort {
  /** A connected account's balance: available and pending, per currency. */
  retrieveBalance(scope: ProcessorScope, account: string): Promise<BalanceSnapshot>;
  createPayout(scope: ProcessorScope, request: PayoutRequest, idempotencyKey: string): Promise<PayoutSnapshot>;
  retrievePayout(scope: ProcessorScope, account: string, id: string): Promise<PayoutSnapshot>;
  /** Adds a bank account to a connected account as its default for the currency: payouts go there from now on. */
  addBankAccount(scope: ProcessorScope, request: BankAccountRequest, idempotencyKey: string): Promise<BankAccountSnapshot>;
  /** The connected account's bank accounts, the default for each currency marked. */
  listBankAccounts(scope: ProcessorScope, account: string): Promise<BankAccountSnapshot[]>;
}

export interface CustomersPort {
  /** Customers live on the platform, where the payments are made. */
  createCustomer(scope: ProcessorScope, fields: CustomerFields, idempotencyKey: string): Promise<CustomerSnapshot>;
  updateCustomer(scope: ProcessorScope, id: string, fields: CustomerFields, idempotencyKey: string): Promise<CustomerSnapshot>;
  /**
   * Deleting a customer the processor no longer has is not an error. No idempotency key: a DELETE
   * is idempotent by nature, and Stripe ignores keys on it.
   */
  deleteCustomer(scope: ProcessorScope, id: string): Promise<void>;
}

/** The processor's events, as the server receives them. */
export interface EventsPort {
  /** Points the processor's event deliveries at this server (the simulator; Stripe's are set in its dashboard). */
  registerWebhookEndpoint(url: string): Promise<void>;
  /** A signed event, verified and read; throws a 400 `ApiError` when no configured secret signed it. */
  verifyEvent(rawBody: Buffer, signature: string | undefined): ProcessorEvent;
}

/** The whole processor: one object implements every port; the composition root hands each service its own. */
export interface PaymentProcessor extends ProcessorIdentity, ConnectPort, PaymentsPort, RefundsPort, TerminalPort, DisputesPort, PayoutsPort, CustomersPort, EventsPort {}

/**
 * Idempotency keys sent to the processor are derived, never random: the same (merchant, mode,
 * client key, step) always yields the same key, so a retry after a crash between the processor call
 * and our commit lands on the object the first attempt created.
 */
export function processorIdempotencyKey(...parts: string[]): string {
  return `pos_${createHash('sha256').update(parts.join('\u001f')).digest('hex').slice(0, 48)}`;
}
