import type { Mode } from '../db/schema.js';

/**
 * The processor's objects as pos reads them: each a snapshot of what the processor said at one
 * moment, holding only the fields the domain acts on, in pos's words. The Stripe adapter maps
 * Stripe's objects to these in one place (stripe/transformers.ts); the in-memory processor makes
 * them directly. Statuses keep the processor's vocabulary where the domain maps them itself.
 */

/** A payment's status at the processor (the states a Stripe PaymentIntent goes through). */
export type PaymentStatus = 'requires_payment_method' | 'requires_confirmation' | 'requires_action' | 'processing' | 'requires_capture' | 'canceled' | 'succeeded';

/** Why a payment was canceled, among the reasons the processor takes from us. */
export type PaymentCancellationReason = 'duplicate' | 'fraudulent' | 'requested_by_customer' | 'abandoned';

/** Why a refund was made, among the reasons the processor takes from us. */
export type RefundReason = 'duplicate' | 'fraudulent' | 'requested_by_customer';

/** What a receipt prints of the card that paid: the reader's EMV details, or an online card's authorisation code. */
export interface CardReceipt {
  readMethod: string | null;
  applicationName: string | null;
  aid: string | null;
  authorizationCode: string | null;
  responseCode: string | null;
  accountType: string | null;
  verificationMethod: string | null;
  /** The processor's location of the reader that read the card. */
  location: string | null;
}

export const NO_RECEIPT: CardReceipt = {
  readMethod: null,
  applicationName: null,
  aid: null,
  authorizationCode: null,
  responseCode: null,
  accountType: null,
  verificationMethod: null,
  location: null,
};

/** A payment at the processor (a PaymentIntent with its latest charge). */
export interface PaymentSnapshot {
  id: string;
  status: PaymentStatus;
  amount: number;
  amountReceived: number;
  /** The tip added on the reader, included in `amount`. */
  tip: number;
  currency: string;
  /** What a browser confirms the payment with; null when the processor did not give it. */
  clientSecret: string | null;
  metadata: Record<string, string>;
  /** Why the last attempt failed: the processor's code, the issuer's reason, its message. */
  failureCode: string | null;
  declineCode: string | null;
  failureMessage: string | null;
  /** The card (or bank account) that paid or was tried last; null before one was presented. */
  card: { brand: string | null; last4: string | null } | null;
  receipt: CardReceipt;
  cancellationReason: string | null;
}

/** A charge as its event carries it: whether it paid, and the card that paid as a receipt prints it. */
export interface ChargeSnapshot {
  succeeded: boolean;
  card: PaymentSnapshot['card'];
  receipt: CardReceipt;
}

export interface RefundSnapshot {
  id: string;
  /** The processor's status: pending, requires_action, succeeded, failed or canceled. */
  status: string | null;
  failureReason: string | null;
  metadata: Record<string, string>;
}

/** What a reader is doing: taking a payment, or showing a cart before one. */
export interface ReaderActionSnapshot {
  type: string;
  status: 'in_progress' | 'succeeded' | 'failed';
  /** The payment a `process_payment_intent` action takes. */
  paymentIntentId: string | null;
  /** The payment came with the action and says a card is being authorised. */
  authorising: boolean;
  failureCode: string | null;
  failureMessage: string | null;
}

export interface ReaderSnapshot {
  id: string;
  serialNumber: string;
  deviceType: string;
  status: 'online' | 'offline';
  /** Epoch ms. */
  lastSeenAt: number | null;
  action: ReaderActionSnapshot | null;
}

export interface DisputeSnapshot {
  id: string;
  paymentIntentId: string | null;
  /** The processor's status, kept as given (server/disputes/status.ts maps it to ours). */
  status: string;
  amount: number;
  currency: string;
  reason: string;
  /** Evidence as staged or submitted: text fields as text, file fields as the processor's file ids. */
  evidence: Record<string, string>;
  submissionCount: number;
  /** Epoch ms. */
  dueBy: number | null;
  /** The disputed amount was taken from the balance, or given back. */
  fundsWithdrawn: boolean;
  fundsReinstated: boolean;
}

export interface PayoutSnapshot {
  id: string;
  amount: number;
  currency: string;
  /** The processor's status: pending, in_transit, paid, failed or canceled. */
  status: string;
  automatic: boolean;
  description: string | null;
  /** Epoch ms. */
  arrivalDate: number | null;
  failureCode: string | null;
  failureMessage: string | null;
  metadata: Record<string, string>;
}

/** A connected account's balance, per currency. */
export interface BalanceSnapshot {
  available: { amount: number; currency: string }[];
  pending: { amount: number; currency: string }[];
}

export interface BankAccountSnapshot {
  id: string;
  bankName: string | null;
  last4: string;
  routingNumber: string | null;
  country: string;
  currency: string;
  holderName: string | null;
  status: string;
  defaultForCurrency: boolean;
}

/** What the processor still needs of a connected account, under Stripe's field names (kept and shown as such). */
export interface AccountRequirements {
  currently_due: string[];
  past_due: string[];
  eventually_due: string[];
  pending_verification: string[];
  /** Epoch seconds, as Stripe gives it. */
  current_deadline: number | null;
  disabled_reason: string | null;
  errors: { requirement: string; code: string; reason: string }[];
}

export const EMPTY_REQUIREMENTS: AccountRequirements = { currently_due: [], past_due: [], eventually_due: [], pending_verification: [], current_deadline: null, disabled_reason: null, errors: [] };

/** A merchant's connected account: whether it may charge and pay out, what it still needs. */
export interface AccountSnapshot {
  id: string;
  type: string | null;
  chargesEnabled: boolean;
  payoutsEnabled: boolean;
  detailsSubmitted: boolean;
  requirements: AccountRequirements;
}

export interface CustomerSnapshot {
  id: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  description: string | null;
  metadata: Record<string, string>;
}

/** What an event is about, told apart by the kind of object it carries. */
export type EventSubject =
  | { kind: 'payment'; payment: PaymentSnapshot }
  | { kind: 'charge'; id: string; paymentIntentId: string | null; charge: ChargeSnapshot }
  | { kind: 'refund'; refund: RefundSnapshot }
  | { kind: 'dispute'; id: string }
  | { kind: 'reader'; reader: ReaderSnapshot }
  | { kind: 'payout'; id: string }
  | { kind: 'account'; id: string }
  | { kind: 'other'; id: string | null };

/** A verified event from the processor. */
export interface ProcessorEvent {
  id: string;
  /** The processor's event type (`payment_intent.succeeded`, `terminal.reader.action_failed`, …). */
  type: string;
  mode: Mode;
  /** Epoch ms (the processor's clock, whole seconds). */
  createdAt: number;
  /** The connected account it happened on (Connect events); null for the platform's own. */
  account: string | null;
  subject: EventSubject;
}
