import { createHash } from 'node:crypto';
import type { Mode } from '../db/schema.js';
import type { ProcessorFailure } from './errors.js';
import type {
  ProcessorAccount,
  ProcessorBalance,
  ProcessorBankAccount,
  ProcessorCancellationReason,
  ProcessorCustomer,
  ProcessorDispute,
  ProcessorEvent,
  ProcessorPaymentIntent,
  ProcessorPayout,
  ProcessorReader,
  ProcessorRefund,
  ProcessorRefundReason,
} from './types.js';

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
  intent: ProcessorPaymentIntent;
  decline?: ProcessorFailure;
}

export interface RefundRequest {
  paymentIntent: string;
  amount: number;
  reason?: ProcessorRefundReason;
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
 * The payment processor as the domain uses it. Every call either answers or throws a
 * `ProcessorFailure`, whatever the implementation: the domain never sees a processor's own error
 * classes. Mutating calls take an idempotency key derived from ours (`processorIdempotencyKey`),
 * so that a retry after a crash lands on what the first attempt made.
 *
 * Implementations: `StripeProcessor` (the `stripe` package, against Stripe or the simulator) in
 * production, `InMemoryProcessor` in unit tests.
 */
export interface PaymentProcessor {
  /** Shown to merchants (`GET /v1/merchant`): `stripe` or `stripe-simulator`. */
  readonly name: string;
  readonly kind: 'simulator' | 'stripe';
  publishableKey(mode: Mode): string | null;
  /** Where a browser reaches the processor's client-side API; null means Stripe.js's default. */
  browserUrl(): string | null;

  /** The merchant's connected account in this mode, created on first need. */
  connectedAccount(merchantId: string, mode: Mode): Promise<string>;
  /** The merchant whose connected account this is, in this mode; null for an account not ours. */
  merchantOfAccount(mode: Mode, account: string): Promise<string | null>;
  /** Creates connected accounts for merchants that have none yet; answers how many were made. */
  provisionMissingAccounts(): Promise<number>;
  /** A capability's status on a connected account; `inactive` when the account does not have it. */
  capabilityStatus(mode: Mode, account: string, capability: string): Promise<string>;
  /** The connected account as the processor has it now: whether it may charge and pay out, what it still needs. */
  retrieveAccount(mode: Mode, account: string): Promise<ProcessorAccount>;
  /**
   * A single-use link to the processor's hosted onboarding for a connected account (Stripe's
   * Account Link, `account_onboarding`). Not idempotent by nature: every call makes a new link.
   */
  createAccountLink(mode: Mode, request: AccountLinkRequest): Promise<AccountLink>;

  createIntent(mode: Mode, request: IntentRequest, idempotencyKey: string): Promise<IntentCreation>;
  /** The intent with its latest charge expanded. */
  retrieveIntent(mode: Mode, id: string): Promise<ProcessorPaymentIntent>;
  captureIntent(mode: Mode, id: string, amount: number | undefined, idempotencyKey: string): Promise<ProcessorPaymentIntent>;
  cancelIntent(mode: Mode, id: string, reason: ProcessorCancellationReason | undefined, idempotencyKey: string): Promise<ProcessorPaymentIntent>;

  /** Refunds give back the merchant's transfer and the platform fee with the money (destination charges). */
  createRefund(mode: Mode, request: RefundRequest, idempotencyKey: string): Promise<ProcessorRefund>;
  retrieveRefund(mode: Mode, id: string): Promise<ProcessorRefund>;
  listRefunds(mode: Mode, paymentIntent: string): Promise<ProcessorRefund[]>;

  createLocation(mode: Mode, request: LocationRequest, idempotencyKey: string): Promise<{ id: string }>;
  registerReader(mode: Mode, request: ReaderRequest, idempotencyKey: string): Promise<ProcessorReader>;
  /** Every reader, or every reader at one location, all pages. */
  listReaders(mode: Mode, location?: string): Promise<ProcessorReader[]>;
  /** Null when the processor deleted the reader. */
  retrieveReader(mode: Mode, id: string): Promise<ProcessorReader | null>;
  deleteReader(mode: Mode, id: string): Promise<void>;
  /**
   * Puts a location's tipping on the processor: creates the Terminal Configuration carrying it and
   * assigns it to the location (`configuration_overrides`) when `configuration` is null, else
   * updates that configuration; null tipping turns tipping off. Answers the configuration's id.
   */
  configureLocationTipping(mode: Mode, location: string, configuration: string | null, tipping: TippingRequest | null, idempotencyKey: string): Promise<string>;
  processPaymentIntent(mode: Mode, reader: string, paymentIntent: string, config?: ProcessConfig): Promise<ProcessorReader>;
  /** Shows a cart on the reader; it stays through the payment sent next. */
  setReaderDisplay(mode: Mode, reader: string, cart: CartRequest): Promise<ProcessorReader>;
  cancelReaderAction(mode: Mode, reader: string): Promise<void>;
  /** Test mode only: a customer presents a test card on a simulated reader. */
  presentPaymentMethod(mode: Mode, reader: string, card: PresentedCard): Promise<ProcessorReader>;

  /**
   * Disputes of payments made on the platform (destination charges are disputed there): those of
   * one PaymentIntent, or those created at or after `createdSince` (epoch ms), all pages.
   */
  listDisputes(mode: Mode, filter: { paymentIntent?: string; createdSince?: number }): Promise<ProcessorDispute[]>;
  retrieveDispute(mode: Mode, id: string): Promise<ProcessorDispute>;
  /** Stages evidence, or submits it with `submit`. */
  updateDispute(mode: Mode, id: string, update: DisputeEvidence, idempotencyKey: string): Promise<ProcessorDispute>;
  /** Accepts the dispute: it is lost (an inquiry is closed). */
  closeDispute(mode: Mode, id: string, idempotencyKey: string): Promise<ProcessorDispute>;

  /** A connected account's balance: available and pending, per currency. */
  retrieveBalance(mode: Mode, account: string): Promise<ProcessorBalance>;
  createPayout(mode: Mode, request: PayoutRequest, idempotencyKey: string): Promise<ProcessorPayout>;
  retrievePayout(mode: Mode, account: string, id: string): Promise<ProcessorPayout>;
  /** Adds a bank account to a connected account as its default for the currency: payouts go there from now on. */
  addBankAccount(mode: Mode, request: BankAccountRequest, idempotencyKey: string): Promise<ProcessorBankAccount>;
  /** The connected account's bank accounts, the default for each currency marked. */
  listBankAccounts(mode: Mode, account: string): Promise<ProcessorBankAccount[]>;

  /** Customers live on the platform, where the payments are made. */
  createCustomer(mode: Mode, fields: CustomerFields, idempotencyKey: string): Promise<ProcessorCustomer>;
  updateCustomer(mode: Mode, id: string, fields: CustomerFields, idempotencyKey: string): Promise<ProcessorCustomer>;
  /**
   * Deleting a customer the processor no longer has is not an error. No idempotency key: a DELETE
   * is idempotent by nature, and Stripe ignores keys on it.
   */
  deleteCustomer(mode: Mode, id: string): Promise<void>;

  /** Points the processor's event deliveries at this server (the simulator; Stripe's are set in its dashboard). */
  registerWebhookEndpoint(url: string): Promise<void>;
  /** A signed event's payload, verified; throws a 400 `ApiError` when no configured secret signed it. */
  verifyEvent(rawBody: Buffer, signature: string | undefined): ProcessorEvent;
}

/**
 * Idempotency keys sent to the processor are derived, never random: the same (merchant, mode,
 * client key, step) always yields the same key, so a retry after a crash between the processor call
 * and our commit lands on the object the first attempt created.
 */
export function processorIdempotencyKey(...parts: string[]): string {
  return `pos_${createHash('sha256').update(parts.join('\u001f')).digest('hex').slice(0, 48)}`;
}
