import type Stripe from 'stripe';
import type { SimError } from '../../errors.js';
import type { StoredObject } from '../../store.js';
import type { Metadata } from '../shapes.js';
import type { PaymentMethodDataInput } from './paymentMethods.js';
import type { AccountRow } from '../connect/accountTypes.js';

/**
 * The rows and inputs of PaymentIntents and charges, apart from the classes that act on them, so
 * charges, disputes, refunds and the terminal can name an intent or a charge without importing
 * the services that name them back.
 */

export interface PaymentIntentInternal {
  /** 3DS was completed for the current payment method: the next attempt goes straight to the issuer. */
  authenticated?: boolean;
  /** The reader collecting a card for this intent, while a `process_payment_intent` action runs. */
  readerId?: string | null;
  /** An authorisation (card-present) or ACH settlement in flight; the intent cannot be canceled. */
  timerId?: string | null;
  /** The bank account is to be verified by microdeposits before it is debited (`verification_method: microdeposits`), or was. */
  microdeposits?: 'required' | 'verified';
  /** Paid from the customer's cash balance so far, while it waits for the rest (cashBalancePayments.ts). */
  cashApplied?: number;
}

export type PaymentIntentRow = StoredObject<Stripe.PaymentIntent, PaymentIntentInternal>;

export interface IntentResult {
  intent: Stripe.PaymentIntent;
  error?: SimError;
}

export interface PaymentIntentCreateInput {
  amount: number;
  currency: string;
  payment_method?: string | undefined;
  payment_method_data?: PaymentMethodDataInput | undefined;
  payment_method_types?: string[] | undefined;
  confirm?: boolean | undefined;
  capture_method?: 'automatic' | 'automatic_async' | 'manual' | undefined;
  application_fee_amount?: number | undefined;
  transfer_data?: { destination?: string | undefined; amount?: number | undefined } | undefined;
  on_behalf_of?: string | undefined;
  metadata?: Metadata | '' | undefined;
  description?: string | null | undefined;
  receipt_email?: string | null | undefined;
  customer?: string | undefined;
  return_url?: string | undefined;
  setup_future_usage?: 'off_session' | 'on_session' | null | undefined;
  statement_descriptor?: string | null | undefined;
  statement_descriptor_suffix?: string | null | undefined;
  transfer_group?: string | undefined;
  /** The US bank account's verification method (`microdeposits` makes it wait for them) and how a customer balance collects what it lacks. */
  payment_method_options?: PaymentMethodOptionsInput | undefined;
}

/** How a PaymentIntent paid from a cash balance collects what the balance lacks: a bank transfer. */
export interface CustomerBalanceOptions {
  funding_type?: 'bank_transfer' | undefined;
  bank_transfer?: { type?: string | undefined; requested_address_types?: string[] | undefined } | undefined;
}

export interface PaymentMethodOptionsInput {
  us_bank_account?: { verification_method?: 'automatic' | 'instant' | 'microdeposits' | undefined } | undefined;
  customer_balance?: CustomerBalanceOptions | undefined;
}

/** What an update may change: the create fields that stay editable until the intent settles, and clearing the fee. */
export type PaymentIntentUpdateInput = Partial<
  Pick<
    PaymentIntentCreateInput,
    | 'amount'
    | 'currency'
    | 'payment_method'
    | 'payment_method_types'
    | 'capture_method'
    | 'metadata'
    | 'description'
    | 'receipt_email'
    | 'setup_future_usage'
    | 'statement_descriptor'
    | 'statement_descriptor_suffix'
    | 'transfer_group'
  >
> & { application_fee_amount?: number | null | undefined };

export interface PaymentIntentConfirmInput {
  payment_method?: string | undefined;
  payment_method_data?: PaymentMethodDataInput | undefined;
  return_url?: string | undefined;
  receipt_email?: string | null | undefined;
  capture_method?: 'automatic' | 'automatic_async' | 'manual' | undefined;
  setup_future_usage?: 'off_session' | 'on_session' | null | undefined;
  payment_method_options?: PaymentMethodOptionsInput | undefined;
}

export interface CaptureInput {
  amount_to_capture?: number | undefined;
  application_fee_amount?: number | undefined;
  metadata?: Metadata | '' | undefined;
}

export type ChargeRow = StoredObject<Stripe.Charge, Record<string, never>>;

/**
 * What a payment asks of Connect: the account it charges for or transfers to (a `Stripe-Account`
 * header, a destination, `on_behalf_of`), if it exists in that mode. Its capabilities are read off
 * the row (connect/capabilityState.ts).
 */
export interface AccountChecks {
  findConnected(livemode: boolean, id: string): AccountRow | undefined;
}

/** What the simulator's 3DS challenge page shows of an intent, whatever its scope. */
export interface ChallengeView {
  id: string;
  amount: number;
  currency: string;
  status: Stripe.PaymentIntent.Status;
  /** Where the browser goes once the challenge is answered, if the intent was confirmed with one. */
  returnUrl: string | null;
}

/** What the simulator's receipt page shows of a charge, whatever its scope. */
export interface ReceiptView {
  id: string;
  amount: number;
  amountRefunded: number;
  currency: string;
  status: Stripe.Charge.Status;
}
