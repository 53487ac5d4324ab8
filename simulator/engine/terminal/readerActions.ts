import { randomUUID } from 'node:crypto';
import type Stripe from 'stripe';
import { newId, newSecret } from '../../ids.js';
import { SimError, invalidRequest, missingParam, resourceMissing, unexpectedState } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getAny, getScoped, systemOrigin } from '../kernel.js';
import { emptyAddress, list, type ListEnvelope, type Metadata, mergeMetadata } from '../shapes.js';
import { type CardOutcome, DECLINES, type Decline, type DeclineName, cardPresentAmountOutcome, luhnValid, testCard } from '../payments/instruments.js';
import type { PaymentIntentRow, Payments } from '../payments/paymentIntents.js';
import type { PaymentMethodBody, PaymentMethodInternal, PaymentMethods } from '../payments/paymentMethods.js';
import { MAX_TIP_OPTIONS, MAX_TIP_PERCENTAGE, type TipSuggestions, tipSuggestions } from '../../../shared/tipping.js';
import { formatAmount } from '../../../shared/money.js';

/**
 * Terminal: locations, readers and the server-driven `process_payment_intent` flow.
 *
 *   process_payment_intent → action in_progress, intent waits for a card (requires_payment_method)
 *   present_payment_method → intent `processing` for the authorisation window (a persisted timer);
 *                            `payment_intent.processing` and `terminal.reader.action_updated`
 *   window ends            → approved: intent succeeded/requires_capture, action succeeded
 *                            declined: intent requires_payment_method, action failed
 *                            (`terminal.reader.action_succeeded` / `…action_failed`, with the reader)
 *
 * During the window the reader is busy: cancel_action and canceling the intent are refused.
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

const IDLE_DISPLAY: ReaderDisplay = {
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

/** The display as lines of text, top to bottom, for a person reading the control API. */
export function displayLines(d: ReaderDisplay): string[] {
  const money = (amount: number | null, currency: string | null) => (amount === null || currency === null ? '' : formatAmount(amount, currency));
  const lines: string[] = [];
  if (d.cart) {
    for (const item of d.cart.line_items) lines.push(`${item.quantity} x ${item.description}  ${money(item.amount * item.quantity, d.cart.currency)}`);
    if (d.cart.tax !== null) lines.push(`Tax  ${money(d.cart.tax, d.cart.currency)}`);
    lines.push(`Total  ${money(d.cart.total, d.cart.currency)}`);
  }
  switch (d.screen) {
    case 'idle':
      if (!d.cart) lines.push('Welcome');
      break;
    case 'cart':
      break;
    case 'tip_selection':
      lines.push(`Add a tip? ${money(d.amount, d.currency)}`);
      for (const o of d.tipping?.options ?? []) lines.push(`[${o.option}] ${o.label}`);
      lines.push('[custom] Custom amount', '[none] No tip');
      break;
    case 'collect_payment':
      if (d.tip !== null && d.tip > 0) lines.push(`Tip  ${money(d.tip, d.currency)}`);
      lines.push(`Tap, insert or swipe  ${money(d.total, d.currency)}`);
      break;
    case 'processing':
      lines.push(`Processing  ${money(d.total, d.currency)}`);
      break;
    case 'approved':
      lines.push(`Approved  ${money(d.total, d.currency)}`);
      break;
    case 'declined':
      lines.push(`Declined: ${d.message ?? ''}`);
      break;
    case 'canceled':
      lines.push(`Canceled: ${d.message ?? ''}`);
      break;
  }
  if (d.customer_cancellation && (d.screen === 'tip_selection' || d.screen === 'collect_payment')) lines.push('[cancel] Cancel');
  return lines;
}

export type ReaderRow = StoredObject<Stripe.Terminal.Reader, ReaderInternal>;
export type LocationRow = StoredObject<Stripe.Terminal.Location, Record<string, never>>;

/**
 * Deleted readers and locations stay retrievable as Stripe's deleted stubs (`{ id, object,
 * deleted: true }`), which is why the SDK types their retrieve as `Reader | DeletedReader`; they
 * leave every list and refuse every other operation.
 */
function isDeleted(body: object): boolean {
  return (body as { deleted?: unknown }).deleted === true;
}

const SIMULATED_CODES: Record<string, Stripe.Terminal.Reader.DeviceType> = {
  'simulated-wpe': 'simulated_wisepos_e',
  'simulated-s700': 'simulated_stripe_s700',
  'simulated-s710': 'simulated_stripe_s710',
};

const DEFAULT_CARD_PRESENT_NUMBER = '4242424242424242';

/** Stripe's limit on a cart line's description (`cart[line_items][][description]`, maxLength 5000). */
const MAX_LINE_DESCRIPTION = 5000;
/** A custom tip typed on the reader: Stripe's largest amount (99,999,999 minor units). */
const MAX_CUSTOM_TIP = 99_999_999;

interface AuthorizationPayload {
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

function offline(): SimError {
  return new SimError(400, 'invalid_request_error', 'Reader is currently offline, please ensure the reader is powered on and connected to the internet.', {
    code: 'terminal_reader_offline',
  });
}

function busy(message = 'Reader is currently busy processing another request, please reference the integration guide for more information.'): SimError {
  return new SimError(400, 'invalid_request_error', message, { code: 'terminal_reader_busy' });
}

/**
 * Stripe's checks on a configuration's tipping: at most three percentages (whole numbers 1–100) and
 * three fixed amounts (positive minor units) per currency, a non-negative smart-tip threshold, and a
 * currency code for each entry.
 */
function validTipping(tipping: Record<string, TippingInput>): Stripe.Terminal.Configuration.Tipping {
  const out: Record<string, TippingInput> = {};
  for (const [currency, config] of Object.entries(tipping)) {
    const at = `tipping[${currency}]`;
    if (!/^[a-z]{3}$/.test(currency)) throw invalidRequest(`Invalid currency: ${currency}.`, 'tipping', 'parameter_invalid');
    const percentages = config.percentages ?? [];
    const fixed = config.fixed_amounts ?? [];
    if (percentages.length > MAX_TIP_OPTIONS) throw invalidRequest(`You can specify at most ${MAX_TIP_OPTIONS} tip percentages.`, `${at}[percentages]`);
    if (fixed.length > MAX_TIP_OPTIONS) throw invalidRequest(`You can specify at most ${MAX_TIP_OPTIONS} fixed tip amounts.`, `${at}[fixed_amounts]`);
    if (percentages.some((p) => !Number.isInteger(p) || p < 1 || p > MAX_TIP_PERCENTAGE)) {
      throw invalidRequest(`Tip percentages must be integers in the range 1% to ${MAX_TIP_PERCENTAGE}%.`, `${at}[percentages]`);
    }
    if (fixed.some((a) => !Number.isInteger(a) || a < 1)) throw invalidRequest('Fixed tip amounts must be positive integers.', `${at}[fixed_amounts]`);
    if (config.smart_tip_threshold !== undefined && (!Number.isInteger(config.smart_tip_threshold) || config.smart_tip_threshold < 0)) {
      throw invalidRequest('The smart tip threshold must be a non-negative integer.', `${at}[smart_tip_threshold]`);
    }
    out[currency] = {
      ...(config.fixed_amounts ? { fixed_amounts: [...fixed] } : {}),
      ...(config.percentages ? { percentages: [...percentages] } : {}),
      ...(config.smart_tip_threshold !== undefined ? { smart_tip_threshold: config.smart_tip_threshold } : {}),
    };
  }
  return out as Stripe.Terminal.Configuration.Tipping;
}

export class Terminal {
  constructor(
    private readonly kernel: Kernel,
    private readonly payments: Payments,
    private readonly paymentMethods: PaymentMethods,
  ) {}

  // Locations

  createLocation(scope: Scope, input: LocationInput): Stripe.Terminal.Location {
    if (!input.display_name) throw missingParam('display_name');
    if (!input.address) throw missingParam('address');
    if (!input.address.country) throw missingParam('address[country]');
    const address = emptyAddress();
    for (const key of ['city', 'country', 'line1', 'line2', 'postal_code', 'state'] as const) address[key] = input.address[key] ?? null;
    const location: Stripe.Terminal.Location = {
      id: newId('tml'),
      object: 'terminal.location',
      address,
      display_name: input.display_name,
      livemode: scope.livemode,
      metadata: mergeMetadata({}, input.metadata),
    };
    if (input.configuration_overrides) location.configuration_overrides = this.configuration(scope, input.configuration_overrides, 'configuration_overrides').id;
    return this.kernel.store.insert<Stripe.Terminal.Location, Record<string, never>>('terminal.location', scope, location, {}).body;
  }

  private location(scope: Scope, id: string, allowDeleted = false): LocationRow {
    const row = getScoped<Stripe.Terminal.Location, Record<string, never>>(this.kernel, 'terminal.location', scope, id, 'terminal.location', 'location');
    if (!allowDeleted && isDeleted(row.body)) throw resourceMissing('terminal.location', id, 'location');
    return row;
  }

  retrieveLocation(scope: Scope, id: string): Stripe.Terminal.Location | Stripe.Terminal.DeletedLocation {
    return this.location(scope, id, true).body;
  }

  updateLocation(scope: Scope, id: string, input: LocationInput): Stripe.Terminal.Location {
    const row = this.location(scope, id);
    if (input.display_name !== undefined) row.body.display_name = input.display_name;
    if (input.address) {
      for (const key of ['city', 'country', 'line1', 'line2', 'postal_code', 'state'] as const) {
        const value = input.address[key];
        if (value !== undefined) row.body.address[key] = value === '' ? null : value;
      }
    }
    if (input.configuration_overrides !== undefined) {
      if (input.configuration_overrides === '') delete row.body.configuration_overrides;
      else row.body.configuration_overrides = this.configuration(scope, input.configuration_overrides, 'configuration_overrides').id;
    }
    row.body.metadata = mergeMetadata(row.body.metadata, input.metadata);
    this.kernel.store.save(row);
    return row.body;
  }

  deleteLocation(scope: Scope, id: string): Stripe.Terminal.DeletedLocation {
    const row = this.location(scope, id);
    const stub: Stripe.Terminal.DeletedLocation = { id: row.id, object: 'terminal.location', deleted: true };
    (row as StoredObject<unknown, unknown>).body = stub;
    this.kernel.store.save(row);
    return stub;
  }

  listLocations(scope: Scope, page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined }): ListEnvelope<Stripe.Terminal.Location> {
    const result = this.kernel.store.list<Stripe.Terminal.Location, Record<string, never>>('terminal.location', scope, { deleted: null }, page);
    return list('/v1/terminal/locations', result.data.map((row) => row.body), result.hasMore);
  }

  connectionToken(scope: Scope, location: string | undefined): Stripe.Terminal.ConnectionToken {
    if (location !== undefined) this.location(scope, location);
    const token: Stripe.Terminal.ConnectionToken = { object: 'terminal.connection_token', secret: newSecret(scope.livemode ? 'pst_live_' : 'pst_test_') };
    if (location !== undefined) token.location = location;
    return token;
  }

  // Configurations (only what a reader's screen uses: tipping)

  createConfiguration(scope: Scope, input: ConfigurationInput): Stripe.Terminal.Configuration {
    const configuration = {
      id: newId('tmc'),
      object: 'terminal.configuration',
      is_account_default: false,
      livemode: scope.livemode,
      name: input.name ?? null,
    } as Stripe.Terminal.Configuration;
    if (input.tipping) configuration.tipping = validTipping(input.tipping);
    return this.kernel.store.insert<Stripe.Terminal.Configuration, Record<string, never>>('terminal.configuration', scope, configuration, {}).body;
  }

  private configuration(scope: Scope, id: string, param = 'configuration', allowDeleted = false): ConfigurationRow {
    const found = this.kernel.store.find<Stripe.Terminal.Configuration, Record<string, never>>(id);
    if (!found || found.type !== 'terminal.configuration' || found.livemode !== scope.livemode || found.account !== scope.account || (!allowDeleted && isDeleted(found.body))) {
      throw new SimError(400, 'invalid_request_error', `No such terminal configuration: '${id}'`, { code: 'resource_missing', param });
    }
    return found;
  }

  retrieveConfiguration(scope: Scope, id: string): Stripe.Terminal.Configuration | Stripe.Terminal.DeletedConfiguration {
    return getScoped<Stripe.Terminal.Configuration, Record<string, never>>(this.kernel, 'terminal.configuration', scope, id, 'terminal.configuration', 'configuration').body;
  }

  updateConfiguration(scope: Scope, id: string, input: ConfigurationInput): Stripe.Terminal.Configuration {
    const row = this.configuration(scope, id);
    if (input.name !== undefined) row.body.name = input.name;
    if (input.tipping === '') delete row.body.tipping;
    else if (input.tipping) row.body.tipping = validTipping(input.tipping);
    this.kernel.store.save(row);
    return row.body;
  }

  deleteConfiguration(scope: Scope, id: string): Stripe.Terminal.DeletedConfiguration {
    const row = this.configuration(scope, id);
    const stub: Stripe.Terminal.DeletedConfiguration = { id: row.id, object: 'terminal.configuration', deleted: true };
    (row as StoredObject<unknown, unknown>).body = stub;
    this.kernel.store.save(row);
    return stub;
  }

  listConfigurations(scope: Scope, page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined }): ListEnvelope<Stripe.Terminal.Configuration> {
    const result = this.kernel.store.list<Stripe.Terminal.Configuration, Record<string, never>>('terminal.configuration', scope, { deleted: null }, page);
    return list('/v1/terminal/configurations', result.data.map((row) => row.body), result.hasMore);
  }

  /** The tipping a reader's location configures for a currency, if any. */
  private tippingFor(reader: ReaderRow, currency: string): TippingInput | undefined {
    const locationId = typeof reader.body.location === 'string' ? reader.body.location : reader.body.location?.id;
    if (!locationId) return undefined;
    const location = this.kernel.store.find<Stripe.Terminal.Location, Record<string, never>>(locationId);
    const configId = location && !isDeleted(location.body) ? location.body.configuration_overrides : undefined;
    if (!configId) return undefined;
    const config = this.kernel.store.find<Stripe.Terminal.Configuration, Record<string, never>>(configId);
    if (!config || isDeleted(config.body)) return undefined;
    const perCurrency = config.body.tipping as Record<string, TippingInput | undefined> | undefined;
    return perCurrency?.[currency];
  }

  // Readers

  registerReader(scope: Scope, input: ReaderCreateInput): Stripe.Terminal.Reader {
    const code = input.registration_code;
    // Own keys only: a code such as `valueOf` or `constructor` must not find Object.prototype.
    const simulated = Object.hasOwn(SIMULATED_CODES, code) ? SIMULATED_CODES[code] : undefined;
    if (simulated && scope.livemode) {
      throw invalidRequest(
        `The registration code '${code}' registers a simulated reader, which is only available in test mode. Use the code displayed on a physical reader to register it in live mode.`,
        'registration_code',
        'parameter_invalid',
      );
    }
    if (!simulated && !scope.livemode) {
      throw invalidRequest(
        `The registration code '${code}' is invalid. In test mode, register a simulated reader with 'simulated-wpe' or 'simulated-s700'.`,
        'registration_code',
        'parameter_invalid',
      );
    }
    let location: string | null = null;
    if (input.location === undefined) {
      if (simulated) throw invalidRequest('A location is required to register a simulated reader: pass `location` (a terminal location in the same mode).', 'location', 'parameter_missing');
    } else {
      const found = this.kernel.store.find<Stripe.Terminal.Location, Record<string, never>>(input.location);
      if (!found || found.type !== 'terminal.location' || found.livemode !== scope.livemode || found.account !== scope.account || isDeleted(found.body)) {
        const hint = found && found.type === 'terminal.location' && found.livemode !== scope.livemode ? ` (it exists in ${found.livemode ? 'live' : 'test'} mode, but a ${scope.livemode ? 'live' : 'test'} mode key was used)` : '';
        throw new SimError(400, 'invalid_request_error', `No such location: '${input.location}'${hint}. A location is required to register a reader: pass a terminal location of the same mode.`, {
          code: 'resource_missing',
          param: 'location',
        });
      }
      location = found.id;
    }
    const serial = simulated ? randomUUID() : code.toUpperCase();
    if (!simulated) {
      const taken = this.kernel.store.list<Stripe.Terminal.Reader, ReaderInternal>('terminal.reader', scope, { serial_number: serial, deleted: null }, { limit: 1 });
      if (taken.data.length > 0) throw invalidRequest('This reader is already registered.', 'registration_code', 'terminal_reader_already_registered');
    }
    const reader: Stripe.Terminal.Reader = {
      id: newId('tmr'),
      object: 'terminal.reader',
      action: null,
      device_sw_version: simulated ? '2.37.2.0' : '2.37.2.0',
      device_type: simulated ?? 'bbpos_wisepos_e',
      ip_address: simulated ? '0.0.0.0' : '192.168.2.2',
      label: input.label ?? (simulated ? 'Simulated reader' : serial),
      last_seen_at: this.kernel.now(),
      livemode: scope.livemode,
      location,
      metadata: mergeMetadata({}, input.metadata),
      serial_number: serial,
      status: 'online',
    };
    return this.kernel.store.insert<Stripe.Terminal.Reader, ReaderInternal>('terminal.reader', scope, reader, { online: true, script: [], timerId: null }).body;
  }

  private reader(scope: Scope, id: string, allowDeleted = false): ReaderRow {
    const row = getScoped<Stripe.Terminal.Reader, ReaderInternal>(this.kernel, 'terminal.reader', scope, id, 'terminal.reader', 'reader');
    if (!allowDeleted && isDeleted(row.body)) throw resourceMissing('terminal.reader', id, 'reader');
    return row;
  }

  private readerAny(id: string): ReaderRow {
    const row = getAny<Stripe.Terminal.Reader, ReaderInternal>(this.kernel, 'terminal.reader', id, 'terminal.reader');
    if (isDeleted(row.body)) throw resourceMissing('terminal.reader', id, 'reader');
    return row;
  }

  retrieveReader(scope: Scope, id: string): Stripe.Terminal.Reader | Stripe.Terminal.DeletedReader {
    return this.reader(scope, id, true).body;
  }

  updateReader(scope: Scope, id: string, input: { label?: string | undefined; metadata?: Metadata | '' | undefined }): Stripe.Terminal.Reader {
    const row = this.reader(scope, id);
    if (input.label !== undefined) row.body.label = input.label;
    row.body.metadata = mergeMetadata(row.body.metadata, input.metadata);
    this.kernel.store.save(row);
    return row.body;
  }

  deleteReader(scope: Scope, id: string): Stripe.Terminal.DeletedReader {
    const row = this.reader(scope, id);
    if (row.internal.timerId) throw busy();
    const stub = { id: row.id, object: 'terminal.reader', deleted: true, device_type: row.body.device_type, serial_number: row.body.serial_number } as Stripe.Terminal.DeletedReader;
    (row as StoredObject<unknown, unknown>).body = stub;
    this.kernel.store.save(row);
    return stub;
  }

  listReaders(
    scope: Scope,
    filters: { location?: string | undefined; status?: string | undefined; device_type?: string | undefined; serial_number?: string | undefined },
    page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined },
  ): ListEnvelope<Stripe.Terminal.Reader> {
    const result = this.kernel.store.list<Stripe.Terminal.Reader, ReaderInternal>('terminal.reader', scope, { ...filters, deleted: null }, page);
    return list('/v1/terminal/readers', result.data.map((row) => row.body), result.hasMore);
  }

  /**
   * Shows a cart on the reader. A simulated reader shows it at once, so the action succeeds at once
   * (`terminal.reader.action_succeeded`); the cart stays on screen through the payment that follows.
   */
  setReaderDisplay(origin: Origin, readerId: string, input: { type: 'cart'; cart?: CartInput | undefined }): Stripe.Terminal.Reader {
    const reader = this.reader(origin.scope, readerId);
    if (!reader.internal.online) throw offline();
    if (reader.body.action?.status === 'in_progress') throw busy();
    if (!input.cart) throw missingParam('cart');
    const { cart } = input;
    if (!/^[a-z]{3}$/.test(cart.currency)) throw invalidRequest(`Invalid currency: ${cart.currency}.`, 'cart[currency]');
    if (cart.line_items.length === 0) throw missingParam('cart[line_items]');
    cart.line_items.forEach((item, i) => {
      if (!item.description) throw missingParam(`cart[line_items][${i}][description]`);
      if (item.description.length > MAX_LINE_DESCRIPTION) throw invalidRequest(`Description must be at most ${MAX_LINE_DESCRIPTION} characters.`, `cart[line_items][${i}][description]`);
      if (!Number.isInteger(item.quantity) || item.quantity < 1) throw invalidRequest('Quantity must be a positive integer.', `cart[line_items][${i}][quantity]`);
      if (!Number.isInteger(item.amount) || item.amount < 0) throw invalidRequest('Amount must be a non-negative integer.', `cart[line_items][${i}][amount]`);
    });
    if (cart.tax !== undefined && (!Number.isInteger(cart.tax) || cart.tax < 0)) throw invalidRequest('Tax must be a non-negative integer.', 'cart[tax]');
    if (!Number.isInteger(cart.total) || cart.total < 0) throw invalidRequest('Total must be a non-negative integer.', 'cart[total]');
    const shown: CartDisplay = {
      currency: cart.currency,
      line_items: cart.line_items.map((item) => ({ amount: item.amount, description: item.description, quantity: item.quantity })),
      tax: cart.tax ?? null,
      total: cart.total,
    };
    reader.body.action = {
      failure_code: null,
      failure_message: null,
      set_reader_display: { cart: shown, type: 'cart' },
      status: 'succeeded',
      type: 'set_reader_display',
    } as Stripe.Terminal.Reader.Action;
    reader.internal.display = { ...IDLE_DISPLAY, screen: 'cart', cart: shown };
    reader.body.last_seen_at = this.kernel.now();
    this.kernel.store.save(reader);
    this.kernel.events.emit({ ...origin, scope: { livemode: reader.livemode, account: reader.account } }, 'terminal.reader.action_succeeded', reader.body);
    return reader.body;
  }

  /** What the reader's screen shows now. */
  display(readerId: string): ReaderDisplay & { reader: string; lines: string[] } {
    const reader = this.readerAny(readerId);
    const d = reader.internal.display ?? IDLE_DISPLAY;
    return { reader: reader.id, ...d, lines: displayLines(d) };
  }

  /**
   * The customer answers the tip selection screen: one of the suggestions (1–3), a custom amount,
   * or no tip. The reader then asks for the card, for the total with the tip.
   */
  chooseTip(readerId: string, choice: { option?: number | undefined; amount?: number | undefined; none?: boolean | undefined }): ReaderDisplay & { reader: string; lines: string[] } {
    const reader = this.readerAny(readerId);
    const d = reader.internal.display;
    if (!d || d.screen !== 'tip_selection' || d.amount === null) {
      throw invalidRequest('The reader is not showing the tip selection screen.', undefined, 'terminal_reader_invalid_state');
    }
    const given = [choice.option !== undefined, choice.amount !== undefined, choice.none === true].filter(Boolean).length;
    if (given !== 1) throw invalidRequest('Choose exactly one of option, amount or none.', 'option');
    let tip = 0;
    if (choice.option !== undefined) {
      const picked = d.tipping?.options.find((o) => o.option === choice.option);
      if (!picked) throw invalidRequest(`The screen shows tip options 1 to ${d.tipping?.options.length ?? 0}.`, 'option');
      tip = picked.amount;
    } else if (choice.amount !== undefined) {
      if (!Number.isInteger(choice.amount) || choice.amount < 0 || choice.amount > MAX_CUSTOM_TIP) throw invalidRequest(`A custom tip is a whole number of minor units from 0 to ${MAX_CUSTOM_TIP}.`, 'amount');
      tip = choice.amount;
    }
    reader.internal.display = { ...d, screen: 'collect_payment', tip, total: d.amount + tip };
    this.kernel.store.save(reader);
    return this.display(readerId);
  }

  processPaymentIntent(origin: Origin, readerId: string, paymentIntentId: string, processConfig: ProcessConfigInput | undefined): Stripe.Terminal.Reader {
    const reader = this.reader(origin.scope, readerId);
    if (!reader.internal.online) throw offline();
    if (reader.body.action?.status === 'in_progress') throw busy();
    const piRow = this.payments.get(origin.scope, paymentIntentId);
    const pi = piRow.body;
    if (!pi.payment_method_types.includes('card_present') && !pi.payment_method_types.includes('interac_present')) {
      throw invalidRequest(
        `The PaymentIntent ${pi.id} cannot be processed by a reader: its payment_method_types must include card_present.`,
        'payment_intent',
        'payment_intent_invalid_parameter',
      );
    }
    if (pi.status !== 'requires_payment_method' && pi.status !== 'requires_confirmation') {
      throw unexpectedState(
        `This PaymentIntent has a status of ${pi.status} and cannot be processed. Only a PaymentIntent with a status of requires_payment_method or requires_confirmation can be processed by a reader.`,
        { payment_intent: pi },
      );
    }
    if (piRow.internal.readerId && piRow.internal.readerId !== reader.id) {
      const other = this.kernel.store.find<Stripe.Terminal.Reader, ReaderInternal>(piRow.internal.readerId);
      if (other?.body.action?.status === 'in_progress') {
        throw unexpectedState(`This PaymentIntent is already being processed by reader ${other.id}.`, { payment_intent: pi });
      }
    }
    const eligible = processConfig?.tipping?.amount_eligible;
    if (eligible !== undefined && (!Number.isInteger(eligible) || eligible < 0)) throw invalidRequest('amount_eligible must be a non-negative integer.', 'process_config[tipping][amount_eligible]');
    const action: Stripe.Terminal.Reader.Action = {
      api_error: null,
      failure_code: null,
      failure_message: null,
      process_payment_intent: { payment_intent: pi.id, ...(processConfig ? { process_config: processConfig as Stripe.Terminal.Reader.Action.ProcessPaymentIntent.ProcessConfig } : {}) },
      status: 'in_progress',
      type: 'process_payment_intent',
    };
    reader.body.action = action;
    // A cart shown by set_reader_display stays on screen with the payment it goes with.
    const cart = reader.internal.display?.screen === 'cart' ? reader.internal.display.cart : null;
    const tipping = processConfig?.skip_tipping ? undefined : this.tippingFor(reader, pi.currency);
    const suggestions = tipping ? tipSuggestions(tipping, eligible ?? pi.amount, pi.currency) : null;
    // An eligible amount of 0 skips the tip screen, as on Stripe's readers.
    const tipScreen = suggestions !== null && eligible !== 0;
    reader.internal.display = {
      screen: tipScreen ? 'tip_selection' : 'collect_payment',
      cart,
      payment_intent: pi.id,
      currency: pi.currency,
      amount: pi.amount,
      tipping: tipScreen ? suggestions : null,
      tip: null,
      total: tipScreen ? null : pi.amount,
      customer_cancellation: processConfig?.enable_customer_cancellation === true,
      message: null,
    };
    reader.body.last_seen_at = this.kernel.now();
    this.kernel.store.save(reader);
    piRow.internal.readerId = reader.id;
    this.payments.store(piRow);
    return reader.body;
  }

  private actionIntent(reader: ReaderRow): PaymentIntentRow | undefined {
    const target = reader.body.action?.process_payment_intent?.payment_intent;
    return typeof target === 'string' ? this.payments.getAny(target) : undefined;
  }

  cancelAction(origin: Origin, readerId: string): Stripe.Terminal.Reader {
    const reader = this.reader(origin.scope, readerId);
    if (!reader.internal.online) throw offline();
    if (reader.internal.timerId) {
      throw busy('Reader is currently busy authorizing a payment and the action cannot be canceled. Wait for the payment to complete.');
    }
    if (reader.body.action?.status !== 'in_progress') return reader.body;
    const piRow = this.actionIntent(reader);
    if (piRow) {
      piRow.internal.readerId = null;
      this.payments.store(piRow);
    }
    reader.body.action = null;
    reader.internal.display = { ...IDLE_DISPLAY };
    this.kernel.store.save(reader);
    return reader.body;
  }

  presentPaymentMethod(origin: Origin, readerId: string, input: PresentInput): Stripe.Terminal.Reader {
    const reader = this.reader(origin.scope, readerId);
    if (!reader.internal.online) throw offline();
    if (reader.internal.timerId) throw busy();
    const action = reader.body.action;
    if (action?.status !== 'in_progress' || action.type !== 'process_payment_intent') {
      throw invalidRequest('The reader has no in-progress process_payment_intent action to present a payment method to.', undefined, 'terminal_reader_invalid_state');
    }
    const piRow = this.actionIntent(reader);
    if (!piRow) throw invalidRequest('The PaymentIntent of this action no longer exists.');
    const pi = piRow.body;
    if (pi.status === 'canceled') {
      this.finishAction(origin, reader, piRow, { status: 'failed', code: 'payment_intent_canceled', message: 'The PaymentIntent was canceled.' });
      return reader.body;
    }
    const interac = input.type === 'interac_present';
    const number = (input.card_present?.number ?? input.interac_present?.number ?? input.card?.number ?? DEFAULT_CARD_PRESENT_NUMBER).replace(/[\s-]/g, '');
    if (!luhnValid(number)) throw invalidRequest('The card number is not a valid test card number.', 'card_present[number]', 'invalid_number');
    if (input.amount_tip !== undefined && input.amount_tip < 0) throw invalidRequest('amount_tip must be a non-negative integer.', 'amount_tip');
    // Stripe's test helper simulates the on-reader tip with amount_tip; without it, the tip is what
    // the customer chose on the tip selection screen (none if they tapped straight away).
    const display = reader.internal.display;
    const chosen = display?.payment_intent === pi.id && display.screen === 'collect_payment' ? (display.tip ?? 0) : 0;
    const tip = input.amount_tip ?? chosen;
    const outcome = this.outcomeFor(reader, number, pi.amount);
    const pm = this.paymentMethods.createCardPresent(origin.scope, number, interac);
    pi.status = 'processing';
    pi.processing = { type: 'card' } as Stripe.PaymentIntent.Processing;
    pi.payment_method = pm.id;
    const payload: AuthorizationPayload = {
      paymentIntent: pi.id,
      reader: reader.id,
      paymentMethod: pm.id,
      outcome: outcome.kind === 'decline' ? { approve: false, decline: outcome.decline } : { approve: true },
      tip,
      apiVersion: origin.apiVersion,
    };
    const timerId = this.kernel.timers.schedule('card_present_authorization', this.kernel.now() + this.kernel.config.authorizationDelayMs, payload);
    piRow.internal.timerId = timerId;
    reader.internal.timerId = timerId;
    if (display?.payment_intent === pi.id) reader.internal.display = { ...display, screen: 'processing', tip, total: (display.amount ?? pi.amount) + tip };
    this.payments.store(piRow);
    this.kernel.store.save(reader);
    this.kernel.events.emit({ ...origin, scope: { livemode: piRow.livemode, account: piRow.account } }, 'payment_intent.processing', pi);
    // The reader read the card and its action moved on (still in progress): Stripe tells of such a
    // change with `terminal.reader.action_updated`, carrying the reader with its action.
    this.kernel.events.emit({ ...origin, scope: { livemode: reader.livemode, account: reader.account } }, 'terminal.reader.action_updated', reader.body);
    return reader.body;
  }

  /** Scripted outcome first, then the card number's documented behaviour, then the amount's. */
  private outcomeFor(reader: ReaderRow, number: string, amount: number): CardOutcome {
    const scripted = reader.internal.script.shift();
    if (scripted !== undefined) return scripted === 'approve' ? { kind: 'approve' } : { kind: 'decline', decline: DECLINES[scripted] };
    const byNumber = testCard(number).outcome;
    if (byNumber.kind === 'decline') return byNumber;
    return cardPresentAmountOutcome(amount);
  }

  /** Timer: the authorisation window is over and the issuer has answered. */
  completeAuthorization(raw: unknown): void {
    const payload = raw as AuthorizationPayload;
    const piRow = this.payments.getAny(payload.paymentIntent);
    const origin = systemOrigin({ livemode: piRow.livemode, account: piRow.account }, payload.apiVersion);
    const pm = this.kernel.store.find<PaymentMethodBody, PaymentMethodInternal>(payload.paymentMethod);
    const reader = this.kernel.store.find<Stripe.Terminal.Reader, ReaderInternal>(payload.reader);
    piRow.internal.timerId = null;
    piRow.internal.readerId = null;
    if (!pm) throw new Error(`payment method ${payload.paymentMethod} vanished`);
    if (reader) reader.internal.timerId = null;
    if (payload.outcome.approve) {
      this.payments.approve(origin, piRow, pm, { tip: payload.tip });
      if (reader) this.finishAction(origin, reader, piRow, { status: 'succeeded' });
      return;
    }
    const decline = payload.outcome.decline;
    this.payments.decline(origin, piRow, pm, decline);
    if (reader) this.finishAction(origin, reader, piRow, { status: 'failed', code: decline.code, message: decline.message });
  }

  private finishAction(origin: Origin, reader: ReaderRow, piRow: PaymentIntentRow, result: { status: 'succeeded' } | { status: 'failed'; code: string; message: string }): void {
    const action = reader.body.action;
    if (!action) return;
    action.status = result.status;
    action.failure_code = result.status === 'failed' ? result.code : null;
    action.failure_message = result.status === 'failed' ? result.message : null;
    if (action.process_payment_intent) action.process_payment_intent.payment_intent = piRow.id;
    // The outcome screen; the cart it was for is done with.
    const shown = reader.internal.display ?? IDLE_DISPLAY;
    reader.internal.display = {
      ...shown,
      screen: result.status === 'succeeded' ? 'approved' : result.code === 'customer_canceled' ? 'canceled' : 'declined',
      cart: null,
      total: result.status === 'succeeded' ? piRow.body.amount : shown.total,
      message: result.status === 'failed' ? result.message : null,
    };
    reader.body.last_seen_at = this.kernel.now();
    this.kernel.store.save(reader);
    const readerOrigin: Origin = { ...origin, scope: { livemode: reader.livemode, account: reader.account } };
    this.kernel.events.emit(readerOrigin, result.status === 'succeeded' ? 'terminal.reader.action_succeeded' : 'terminal.reader.action_failed', reader.body);
  }

  // Control API

  /** The customer presses cancel on the reader while it waits for a card. */
  customerCancel(origin: Origin, readerId: string): Stripe.Terminal.Reader {
    const reader = this.readerAny(readerId);
    if (reader.internal.timerId) throw busy('The reader is authorizing a payment; the customer can no longer cancel.');
    if (reader.body.action?.status !== 'in_progress') {
      throw invalidRequest('The reader has no in-progress action for the customer to cancel.', undefined, 'terminal_reader_invalid_state');
    }
    if (reader.body.action.process_payment_intent?.process_config?.enable_customer_cancellation !== true) {
      throw invalidRequest(
        'The reader shows no cancel button: the payment was sent without process_config[enable_customer_cancellation]=true.',
        undefined,
        'terminal_reader_invalid_state',
      );
    }
    const piRow = this.actionIntent(reader);
    if (piRow) {
      piRow.internal.readerId = null;
      this.payments.store(piRow);
      this.finishAction(origin, reader, piRow, { status: 'failed', code: 'customer_canceled', message: 'This action was canceled by the customer on the reader.' });
    }
    return reader.body;
  }

  setOnline(readerId: string, online: boolean): Stripe.Terminal.Reader {
    const reader = this.readerAny(readerId);
    reader.internal.online = online;
    reader.body.status = online ? 'online' : 'offline';
    if (online) reader.body.last_seen_at = this.kernel.now();
    this.kernel.store.save(reader);
    return reader.body;
  }

  script(readerId: string, outcomes: ScriptedOutcome[]): Stripe.Terminal.Reader {
    const reader = this.readerAny(readerId);
    reader.internal.script = [...outcomes];
    this.kernel.store.save(reader);
    return reader.body;
  }
}
