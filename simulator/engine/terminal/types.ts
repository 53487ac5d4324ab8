import type Stripe from 'stripe';
import { SimError, resourceMissing } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, getAny, getScoped } from '../kernel.js';
import type { Metadata } from '../shapes.js';
import type { Decline, DeclineName } from '../payments/instruments.js';
import type { TipSuggestions } from '../../../shared/tipping.js';

/**
 * Terminal's rows, inputs and screens, and the lookups and refusals that locations, readers and
 * reader actions share.
 */

export type ScriptedOutcome = 'approve' | DeclineName;

/** A cart as `set_reader_display` sends it (Stripe's `action.set_reader_display.cart`). */
export interface CartDisplay {
  currency: string;
  line_items: { amount: number; description: string; quantity: number }[];
  tax: number | null;
  total: number;
}

export type ReaderScreen = 'idle' | 'cart' | 'tip_selection' | 'collect_payment' | 'processing' | 'approved' | 'declined' | 'canceled';

/**
 * What the reader's screen shows, as a customer standing at it would read it. Not part of Stripe's
 * API (a reader's screen is not readable there); the control API shows it (`GET
 * /_sim/readers/:id/display`).
 */
export interface ReaderDisplay {
  screen: ReaderScreen;
  /** The cart set by `set_reader_display`, shown until the payment it goes with is over. */
  cart: CartDisplay | null;
  payment_intent: string | null;
  currency: string | null;
  /** The amount before any tip. */
  amount: number | null;
  /** The tip selection screen's suggestions, while it shows or once chosen from. */
  tipping: TipSuggestions | null;
  tip: number | null;
  total: number | null;
  /** Whether a cancel button is shown (`process_config[enable_customer_cancellation]`). */
  customer_cancellation: boolean;
  /** The failure shown on a declined or canceled screen. */
  message: string | null;
}

export interface ReaderInternal {
  online: boolean;
  /** Outcomes to use for the next presented cards, before numbers and amounts are looked at. */
  script: ScriptedOutcome[];
  /** The authorisation timer while a presented card is being authorised. */
  timerId: string | null;
  /** Absent on readers stored before screens were kept: they show the idle screen. */
  display?: ReaderDisplay;
}

export interface ProcessConfigInput {
  skip_tipping?: boolean | undefined;
  enable_customer_cancellation?: boolean | undefined;
  tipping?: { amount_eligible?: number | undefined } | undefined;
  return_url?: string | undefined;
  allow_redisplay?: string | undefined;
}

export interface TippingInput {
  fixed_amounts?: number[] | undefined;
  percentages?: number[] | undefined;
  smart_tip_threshold?: number | undefined;
}

export interface ConfigurationInput {
  name?: string | undefined;
  tipping?: Record<string, TippingInput> | '' | undefined;
}

export interface CartInput {
  currency: string;
  line_items: { amount: number; description: string; quantity: number }[];
  tax?: number | undefined;
  total: number;
}

export type ConfigurationRow = StoredObject<Stripe.Terminal.Configuration, Record<string, never>>;

export const IDLE_DISPLAY: ReaderDisplay = {
  screen: 'idle',
  cart: null,
  payment_intent: null,
  currency: null,
  amount: null,
  tipping: null,
  tip: null,
  total: null,
  customer_cancellation: false,
  message: null,
};

export type ReaderRow = StoredObject<Stripe.Terminal.Reader, ReaderInternal>;
export type LocationRow = StoredObject<Stripe.Terminal.Location, Record<string, never>>;

/**
 * Deleted readers and locations stay retrievable as Stripe's deleted stubs (`{ id, object,
 * deleted: true }`), which is why the SDK types their retrieve as `Reader | DeletedReader`; they
 * leave every list and refuse every other operation.
 */
export function isDeleted(body: object): boolean {
  return (body as { deleted?: unknown }).deleted === true;
}

export interface AuthorizationPayload {
  paymentIntent: string;
  reader: string;
  paymentMethod: string;
  outcome: { approve: true } | { approve: false; decline: Decline };
  tip: number;
  apiVersion: string;
}

export interface LocationInput {
  display_name?: string | undefined;
  address?: Record<string, string | undefined> | undefined;
  metadata?: Metadata | '' | undefined;
  configuration_overrides?: string | undefined;
}

export interface ReaderCreateInput {
  registration_code: string;
  location?: string | undefined;
  label?: string | undefined;
  metadata?: Metadata | '' | undefined;
}

export interface PresentInput {
  amount_tip?: number | undefined;
  card_present?: { number?: string | undefined } | undefined;
  card?: { number?: string | undefined } | undefined;
  interac_present?: { number?: string | undefined } | undefined;
  type?: 'card_present' | 'interac_present' | 'card' | undefined;
}

export function offline(): SimError {
  return new SimError(400, 'invalid_request_error', 'Reader is currently offline, please ensure the reader is powered on and connected to the internet.', {
    code: 'terminal_reader_offline',
  });
}

export function busy(message = 'Reader is currently busy processing another request, please reference the integration guide for more information.'): SimError {
  return new SimError(400, 'invalid_request_error', message, { code: 'terminal_reader_busy' });
}

export function findReader(kernel: Kernel, scope: Scope, id: string, allowDeleted = false): ReaderRow {
  const row = getScoped<Stripe.Terminal.Reader, ReaderInternal>(kernel, 'terminal.reader', scope, id, 'terminal.reader', 'reader');
  if (!allowDeleted && isDeleted(row.body)) throw resourceMissing('terminal.reader', id, 'reader');
  return row;
}

/** A reader by id whatever its scope: the control API and timers act by id. */
export function anyReader(kernel: Kernel, id: string): ReaderRow {
  const row = getAny<Stripe.Terminal.Reader, ReaderInternal>(kernel, 'terminal.reader', id, 'terminal.reader');
  if (isDeleted(row.body)) throw resourceMissing('terminal.reader', id, 'reader');
  return row;
}
