import type { Mode } from '../db/schema.js';
import { ApiError } from '../errors.js';
import { ProcessorFailure } from './errors.js';
import type { IntentCreation, IntentRequest, LocationRequest, PaymentProcessor, PresentedCard, ReaderRequest, RefundRequest } from './port.js';
import type { ProcessorCancellationReason, ProcessorEvent, ProcessorPaymentIntent, ProcessorReader, ProcessorRefund } from './types.js';

/** The processor's methods, by name, for scripting failures and reading the call log. */
export type ProcessorCall = Exclude<keyof PaymentProcessor, 'name' | 'kind' | 'publishableKey' | 'browserUrl'>;

/** The test payment methods the fake knows, with what confirming with each does. */
const DECLINES: Record<string, { code: string; declineCode?: string; message: string }> = {
  pm_card_chargeDeclined: { code: 'card_declined', declineCode: 'generic_decline', message: 'Your card was declined.' },
  pm_card_chargeDeclinedInsufficientFunds: { code: 'card_declined', declineCode: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  pm_card_chargeDeclinedExpiredCard: { code: 'expired_card', message: 'Your card has expired.' },
};

/** Stripe's statuses from which a PaymentIntent can still be canceled. */
const CANCELABLE = new Set(['requires_payment_method', 'requires_capture', 'requires_confirmation', 'requires_action']);

interface IntentRecord {
  id: string;
  mode: Mode;
  status: ProcessorPaymentIntent['status'];
  amount: number;
  amountReceived: number;
  currency: string;
  captureMethod: 'automatic' | 'manual';
  clientSecret: string;
  metadata: Record<string, string>;
  error: { code: string; decline_code?: string; message: string } | null;
  card: { brand: string; last4: string; kind: 'card' | 'card_present' } | null;
  cancellationReason: ProcessorCancellationReason | null;
  tip: number;
  refunded: number;
}

interface ReaderRecord {
  id: string;
  mode: Mode;
  location: string;
  label: string;
  action: { intent: string; status: 'in_progress' | 'succeeded' | 'failed'; failureCode: string | null } | null;
}

/**
 * An in-memory `PaymentProcessor` for unit tests of the domain: stateful like Stripe's test mode
 * for the calls the domain makes (idempotency keys honoured, state checks refused with Stripe's
 * codes), with failures scripted per call. Not a simulator: no events, no timing, no wire format.
 */
export class InMemoryProcessor implements PaymentProcessor {
  readonly name = 'in-memory';
  readonly kind = 'simulator' as const;
  /** Every call made, in order, with its mode. */
  readonly calls: { call: ProcessorCall; mode: Mode | null }[] = [];
  /** Capability statuses by `account:capability`; anything unlisted is active. */
  readonly capabilities = new Map<string, string>();
  /** The status new refunds take (Stripe settles most card refunds at once). */
  refundStatus: 'succeeded' | 'pending' | 'failed' = 'succeeded';

  readonly #accounts = new Map<string, string>();
  readonly #intents = new Map<string, IntentRecord>();
  readonly #refunds = new Map<string, ProcessorRefund>();
  readonly #readers = new Map<string, ReaderRecord>();
  readonly #byKey = new Map<string, unknown>();
  readonly #failures = new Map<ProcessorCall, unknown[]>();
  #next = 0;

  /** The next call of `call` throws `error` (a `ProcessorFailure`, or anything else) instead of running. */
  failNext(call: ProcessorCall, error: unknown, times = 1): void {
    const queue = this.#failures.get(call) ?? [];
    for (let i = 0; i < times; i += 1) queue.push(error);
    this.#failures.set(call, queue);
  }

  /** How many times `call` was made. */
  count(call: ProcessorCall): number {
    return this.calls.filter((c) => c.call === call).length;
  }

  /** The processor's side of a payment moving on its own (a card presented, an ACH debit clearing). */
  settle(intentId: string, status: 'succeeded' | 'processing' | 'canceled'): void {
    const intent = this.#intent(intentId);
    intent.status = status;
    if (status === 'succeeded') intent.amountReceived = intent.amount;
  }

  publishableKey(mode: Mode): string | null {
    return `pk_${mode}_in_memory`;
  }

  browserUrl(): string | null {
    return null;
  }

  async connectedAccount(merchantId: string, mode: Mode): Promise<string> {
    this.#enter('connectedAccount', mode);
    const key = `${merchantId}:${mode}`;
    let account = this.#accounts.get(key);
    if (!account) this.#accounts.set(key, (account = this.#id('acct')));
    return account;
  }

  async provisionMissingAccounts(): Promise<number> {
    this.#enter('provisionMissingAccounts', null);
    return 0;
  }

  async capabilityStatus(mode: Mode, account: string, capability: string): Promise<string> {
    this.#enter('capabilityStatus', mode);
    return this.capabilities.get(`${account}:${capability}`) ?? 'active';
  }

  async createIntent(mode: Mode, request: IntentRequest, idempotencyKey: string): Promise<IntentCreation> {
    this.#enter('createIntent', mode);
    return this.#once(idempotencyKey, () => {
      const id = this.#id('pi');
      const intent: IntentRecord = {
        id,
        mode,
        status: 'requires_payment_method',
        amount: request.amount,
        amountReceived: 0,
        currency: request.currency,
        captureMethod: request.captureMethod,
        clientSecret: `${id}_secret_${this.#next}`,
        metadata: request.metadata,
        error: null,
        card: null,
        cancellationReason: null,
        tip: 0,
        refunded: 0,
      };
      this.#intents.set(id, intent);
      if (!request.confirm || !request.paymentMethod) return { intent: this.#present(intent) };
      if (request.methods.includes('us_bank_account')) {
        intent.status = 'processing';
        return { intent: this.#present(intent) };
      }
      const decline = DECLINES[request.paymentMethod];
      if (decline) {
        intent.error = { code: decline.code, ...(decline.declineCode ? { decline_code: decline.declineCode } : {}), message: decline.message };
        const failure = new ProcessorFailure('card', decline.message, { status: 402, code: decline.code, ...(decline.declineCode ? { declineCode: decline.declineCode } : {}), paymentIntent: id });
        return { intent: this.#present(intent), decline: failure };
      }
      intent.card = { brand: 'visa', last4: '4242', kind: 'card' };
      intent.status = request.captureMethod === 'manual' ? 'requires_capture' : 'succeeded';
      if (intent.status === 'succeeded') intent.amountReceived = intent.amount;
      return { intent: this.#present(intent) };
    });
  }

  async retrieveIntent(mode: Mode, id: string): Promise<ProcessorPaymentIntent> {
    this.#enter('retrieveIntent', mode);
    return this.#present(this.#intent(id));
  }

  async captureIntent(mode: Mode, id: string, amount: number | undefined, idempotencyKey: string): Promise<ProcessorPaymentIntent> {
    this.#enter('captureIntent', mode);
    return this.#once(idempotencyKey, () => {
      const intent = this.#intent(id);
      if (intent.status !== 'requires_capture') throw unexpectedState(intent);
      intent.status = 'succeeded';
      intent.amountReceived = amount ?? intent.amount;
      return this.#present(intent);
    });
  }

  async cancelIntent(mode: Mode, id: string, reason: ProcessorCancellationReason | undefined, idempotencyKey: string): Promise<ProcessorPaymentIntent> {
    this.#enter('cancelIntent', mode);
    return this.#once(idempotencyKey, () => {
      const intent = this.#intent(id);
      if (!CANCELABLE.has(intent.status)) throw unexpectedState(intent);
      intent.status = 'canceled';
      intent.cancellationReason = reason ?? null;
      return this.#present(intent);
    });
  }

  async createRefund(mode: Mode, request: RefundRequest, idempotencyKey: string): Promise<ProcessorRefund> {
    this.#enter('createRefund', mode);
    return this.#once(idempotencyKey, () => {
      const intent = this.#intent(request.paymentIntent);
      if (intent.status !== 'succeeded') throw invalidRequest('charge_not_refundable', 'This PaymentIntent has no successful charge to refund.');
      if (request.amount > intent.amountReceived - intent.refunded) {
        throw invalidRequest('amount_too_large', `Refund amount (${request.amount}) is greater than unrefunded amount on charge (${intent.amountReceived - intent.refunded})`, 'amount');
      }
      if (this.refundStatus !== 'failed') intent.refunded += request.amount;
      const refund = {
        id: this.#id('re'),
        object: 'refund',
        amount: request.amount,
        currency: intent.currency,
        payment_intent: intent.id,
        status: this.refundStatus,
        failure_reason: this.refundStatus === 'failed' ? 'unknown' : null,
        reason: request.reason ?? null,
        metadata: request.metadata,
      } as unknown as ProcessorRefund;
      this.#refunds.set(refund.id, refund);
      return refund;
    });
  }

  async retrieveRefund(mode: Mode, id: string): Promise<ProcessorRefund> {
    this.#enter('retrieveRefund', mode);
    const refund = this.#refunds.get(id);
    if (!refund) throw missing('refund', id);
    return refund;
  }

  async listRefunds(mode: Mode, paymentIntent: string): Promise<ProcessorRefund[]> {
    this.#enter('listRefunds', mode);
    return [...this.#refunds.values()].filter((r) => r.payment_intent === paymentIntent);
  }

  async createLocation(mode: Mode, _request: LocationRequest, idempotencyKey: string): Promise<{ id: string }> {
    this.#enter('createLocation', mode);
    return this.#once(idempotencyKey, () => ({ id: this.#id('tml') }));
  }

  async registerReader(mode: Mode, request: ReaderRequest, idempotencyKey: string): Promise<ProcessorReader> {
    this.#enter('registerReader', mode);
    return this.#once(idempotencyKey, () => {
      if (request.registrationCode !== 'simulated-wpe') throw invalidRequest('invalid_registration_code', 'The registration code is not valid', 'registration_code');
      const reader: ReaderRecord = { id: this.#id('tmr'), mode, location: request.location, label: request.label, action: null };
      this.#readers.set(reader.id, reader);
      return this.#presentReader(reader);
    });
  }

  async listReaders(mode: Mode, location?: string): Promise<ProcessorReader[]> {
    this.#enter('listReaders', mode);
    return [...this.#readers.values()].filter((r) => r.mode === mode && (!location || r.location === location)).map((r) => this.#presentReader(r));
  }

  async retrieveReader(mode: Mode, id: string): Promise<ProcessorReader | null> {
    this.#enter('retrieveReader', mode);
    const reader = this.#readers.get(id);
    return reader ? this.#presentReader(reader) : null;
  }

  async deleteReader(mode: Mode, id: string): Promise<void> {
    this.#enter('deleteReader', mode);
    if (!this.#readers.delete(id)) throw missing('terminal.reader', id);
  }

  async processPaymentIntent(mode: Mode, readerId: string, paymentIntent: string): Promise<ProcessorReader> {
    this.#enter('processPaymentIntent', mode);
    const reader = this.#reader(readerId);
    if (reader.action?.status === 'in_progress') throw invalidRequest('terminal_reader_busy', 'The reader is busy with another action');
    this.#intent(paymentIntent);
    reader.action = { intent: paymentIntent, status: 'in_progress', failureCode: null };
    return this.#presentReader(reader);
  }

  async cancelReaderAction(mode: Mode, readerId: string): Promise<void> {
    this.#enter('cancelReaderAction', mode);
    const reader = this.#reader(readerId);
    if (reader.action?.status === 'in_progress' && this.#intent(reader.action.intent).status === 'processing') {
      throw invalidRequest('terminal_reader_busy', 'The reader is authorising a card');
    }
    reader.action = null;
  }

  async presentPaymentMethod(mode: Mode, readerId: string, card: PresentedCard): Promise<ProcessorReader> {
    this.#enter('presentPaymentMethod', mode);
    const reader = this.#reader(readerId);
    if (reader.action?.status !== 'in_progress') throw invalidRequest('terminal_reader_invalid_state', 'The reader has no action in progress');
    const intent = this.#intent(reader.action.intent);
    intent.tip = card.amountTip ?? 0;
    intent.amount += intent.tip;
    intent.card = { brand: 'visa', last4: (card.cardNumber ?? '4242424242424242').slice(-4), kind: 'card_present' };
    intent.status = 'succeeded';
    intent.amountReceived = intent.amount;
    reader.action = { ...reader.action, status: 'succeeded' };
    return this.#presentReader(reader);
  }

  async registerWebhookEndpoint(): Promise<void> {
    this.#enter('registerWebhookEndpoint', null);
  }

  /** Accepts a body signed `valid`; anything else is refused as a forged event would be. */
  verifyEvent(rawBody: Buffer, signature: string | undefined): ProcessorEvent {
    if (signature !== 'valid') throw new ApiError(400, 'invalid_request_error', 'Processor event signature verification failed', { code: 'signature_invalid' });
    return JSON.parse(rawBody.toString('utf8')) as ProcessorEvent;
  }

  #enter(call: ProcessorCall, mode: Mode | null): void {
    this.calls.push({ call, mode });
    const queue = this.#failures.get(call);
    if (queue?.length) throw queue.shift();
  }

  /** Stripe's idempotency: a key already used answers what it answered the first time. */
  #once<T>(key: string, work: () => T): T {
    if (this.#byKey.has(key)) return this.#byKey.get(key) as T;
    const result = work();
    this.#byKey.set(key, result);
    return result;
  }

  #id(prefix: string): string {
    this.#next += 1;
    return `${prefix}_fake${String(this.#next).padStart(6, '0')}`;
  }

  #intent(id: string): IntentRecord {
    const intent = this.#intents.get(id);
    if (!intent) throw missing('payment_intent', id);
    return intent;
  }

  #reader(id: string): ReaderRecord {
    const reader = this.#readers.get(id);
    if (!reader) throw missing('terminal.reader', id);
    return reader;
  }

  /** The fields of a PaymentIntent the domain reads, in Stripe's shape. */
  #present(intent: IntentRecord): ProcessorPaymentIntent {
    const charge = intent.card
      ? { id: `ch_${intent.id}`, object: 'charge', payment_method_details: { type: intent.card.kind, [intent.card.kind]: { brand: intent.card.brand, last4: intent.card.last4 } } }
      : null;
    return {
      id: intent.id,
      object: 'payment_intent',
      livemode: intent.mode === 'live',
      status: intent.status,
      amount: intent.amount,
      amount_received: intent.amountReceived,
      amount_details: { tip: intent.tip ? { amount: intent.tip } : {} },
      currency: intent.currency,
      capture_method: intent.captureMethod,
      client_secret: intent.clientSecret,
      metadata: intent.metadata,
      last_payment_error: intent.error,
      latest_charge: charge,
      cancellation_reason: intent.cancellationReason,
    } as unknown as ProcessorPaymentIntent;
  }

  #presentReader(reader: ReaderRecord): ProcessorReader {
    return {
      id: reader.id,
      object: 'terminal.reader',
      livemode: reader.mode === 'live',
      label: reader.label,
      location: reader.location,
      serial_number: `SN-${reader.id}`,
      device_type: 'simulated_wisepos_e',
      status: 'online',
      last_seen_at: null,
      action: reader.action
        ? { type: 'process_payment_intent', status: reader.action.status, failure_code: reader.action.failureCode, process_payment_intent: { payment_intent: reader.action.intent } }
        : null,
    } as unknown as ProcessorReader;
  }
}

function invalidRequest(code: string, message: string, param?: string): ProcessorFailure {
  return new ProcessorFailure('invalid_request', message, { status: 400, code, ...(param ? { param } : {}) });
}

function missing(object: string, id: string): ProcessorFailure {
  return new ProcessorFailure('invalid_request', `No such ${object}: '${id}'`, { status: 404, code: 'resource_missing', param: 'id' });
}

function unexpectedState(intent: IntentRecord): ProcessorFailure {
  return invalidRequest('payment_intent_unexpected_state', `This PaymentIntent's status is ${intent.status}.`);
}
