import { randomUUID } from 'node:crypto';
import type Stripe from 'stripe';
import { newId, newSecret } from '../ids.js';
import { SimError, invalidRequest, missingParam, resourceMissing, unexpectedState } from '../errors.js';
import type { Scope, StoredObject } from '../store.js';
import { type Kernel, type Origin, getAny, getScoped, systemOrigin } from './kernel.js';
import { emptyAddress, list, type ListEnvelope, type Metadata, mergeMetadata } from './shapes.js';
import { type CardOutcome, DECLINES, type Decline, type DeclineName, cardPresentAmountOutcome, luhnValid, testCard } from './instruments.js';
import type { PaymentIntentRow, Payments } from './payments.js';
import type { PaymentMethodBody, PaymentMethodInternal, PaymentMethods } from './paymentMethods.js';

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

export interface ReaderInternal {
  online: boolean;
  /** Outcomes to use for the next presented cards, before numbers and amounts are looked at. */
  script: ScriptedOutcome[];
  /** The authorisation timer while a presented card is being authorised. */
  timerId: string | null;
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
    if (input.configuration_overrides) location.configuration_overrides = input.configuration_overrides;
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

  processPaymentIntent(origin: Origin, readerId: string, paymentIntentId: string, processConfig: Record<string, unknown> | undefined): Stripe.Terminal.Reader {
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
    const action: Stripe.Terminal.Reader.Action = {
      api_error: null,
      failure_code: null,
      failure_message: null,
      process_payment_intent: { payment_intent: pi.id, ...(processConfig ? { process_config: processConfig as Stripe.Terminal.Reader.Action.ProcessPaymentIntent.ProcessConfig } : {}) },
      status: 'in_progress',
      type: 'process_payment_intent',
    };
    reader.body.action = action;
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
    const tip = input.amount_tip ?? 0;
    if (tip < 0) throw invalidRequest('amount_tip must be a non-negative integer.', 'amount_tip');
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
