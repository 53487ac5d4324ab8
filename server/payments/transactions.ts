import { inTrace } from '../operations/observe.js';
import type { ChargeSnapshot, PaymentCancellationReason, PaymentSnapshot } from '../processor/snapshots.js';
import type { Logger } from 'pino';
import { isUuid, newIdentity, randomBase62 } from '../../shared/ids.js';
import { formatAmount, minimumCharge } from '../../shared/money.js';
import { sql } from 'kysely';
import type { Clock } from '../../shared/time.js';
import type { Mode, PaymentMethodType, TransactionsTable } from '../db/schema.js';
import { findScoped, insertRow, Prepared } from '../db/prepared.js';
import type { Executor, Store, Trx } from '../db/store.js';
import { ApiError, cardError, conflict, invalid, missing, notFound } from '../errors.js';
import { EventNotYetApplicable, fromProcessorError, permanentProcessorRefusal, processorErrorCode } from '../processor/errors.js';
import { type IntentCreation, type PaymentsPort, type ProcessorMethod, processorIdempotencyKey } from '../processor/port.js';
import type { ConnectedAccountDirectory } from '../accounts/connected-accounts.js';
import { COUNTER_PAYMENT_METHODS, type CreateTransactionInput, MIN_AMOUNT, type Transaction, type TransactionChannel } from '../../shared/contract/transactions.js';
import { addToCounter, nextSeq, readCount } from '../db/counters.js';
import { platformFee } from './fees.js';
import type { Ending, ExecuteResult, IdempotencyService, Operation, StepContext, StepResult } from '../idempotency/keys.js';
import { presentPaymentCreate } from './presenters.js';
import { recordEvent } from '../webhooks/outbox.js';
import { offsetPage, type Page, type PageRequest, seqPage, toPage } from '../pagination.js';
import { type CardReceiptColumns, NO_CARD_RECEIPT, patchFromSnapshot, type PaymentState, receiptColumns, transactionById } from './payment-state.js';
import { presentTransaction } from './present.js';
import type { FieldCipher } from '../db/encryption.js';
import { findReceipt, hasReceipt } from './receipts.js';
import { type ReceiptContent, receiptContent } from '../../shared/receipt.js';
import type { TerminalOptions } from './terminal-options.js';
import type { Scope } from '../accounts/scope.js';
import { nestedOrigin } from '../audit/origin.js';

/** What a create step needs to (re)do its work after a crash: the request as first validated. */
export interface CreatePaymentState {
  input: Omit<CreateTransactionInput, 'idempotency_key'>;
  source: string;
  terminalId: string | null;
  transactionId?: string;
  /** Set when a hosted checkout session or a payment link takes this payment. */
  checkoutSessionId?: string;
  linkId?: string;
  /** How the processor's answer becomes the HTTP answer. */
  response: 'transaction' | 'terminal';
  /** A terminal payment's cart and reader options, stored with it. */
  terminal?: TerminalOptions;
}

/**
 * What a payment create came to: the payment made (paid, authorised, or waiting for its customer
 * or the processor), or made and failed, with the refusal that failed it: the card's decline, or
 * the processor refusing the payment (or staying unreachable) for good.
 */
export type CreatePaymentOutcome =
  | { kind: 'created'; transaction: TransactionsTable }
  | { kind: 'declined' | 'failed'; transaction: TransactionsTable; error: ApiError };

/** What resetting a terminal payment's reader did before a cancel (spec §4.2 `reader_reset`). */
export interface ReaderReset {
  reset: boolean | null;
  warning?: string;
}

/** The terminal payment a reader reset is for. */
export type ReaderPayment = Pick<TransactionsTable, 'mode' | 'reader_id' | 'processor_payment_intent_id'>;

/** Resets a terminal payment's reader before the payment is canceled (server/terminal/reader-reset.ts). */
export interface ReaderResetter {
  resetFor(payment: ReaderPayment): Promise<ReaderReset>;
}

export interface CancelResult {
  row: TransactionsTable;
  /** Only for terminal payments. */
  readerReset?: ReaderReset;
}

const PROCESSOR_METHODS: Record<PaymentMethodType, ProcessorMethod[]> = {
  card: ['card'],
  wallet: ['card'],
  bank_transfer: ['us_bank_account'],
  ach: ['us_bank_account'],
  terminal: ['card_present'],
  // Never sent: a cash sale makes no processor call.
  cash: [],
};

/** Stripe's own cancellation reasons; any other text is kept on our side only. */
const PROCESSOR_CANCEL_REASONS = new Set(['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned']);

/**
 * How often a payment still waiting for an outcome is re-checked with the processor when no event
 * arrives: never more often than every 10 s, and less often as it ages (a tenth of its age), so a
 * forgotten online payment costs one poll a day after ten days rather than one every few seconds.
 */
export const MIN_POLL_INTERVAL_MS = 10_000;
/** Payments checked per reconciler pass: bounded so a backlog never holds the database long. */
const POLL_BATCH = 50;

/**
 * A transaction by uuid or `txn_` reference inside the scope. `lock` takes the row lock for the
 * rest of the transaction on PostgreSQL (SQLite's write lock already covers the whole unit).
 */
export async function findTransactionRow(db: Executor, scope: Scope, idOrReference: string, lock: 'none' | 'postgres' = 'none'): Promise<TransactionsTable | undefined> {
  return findScoped(db, 'transactions', scope, isUuid(idOrReference) ? 'id' : 'reference', idOrReference, lock === 'postgres');
}

const merchantCurrency = new Prepared<{ id: string }, { default_currency: string; country: string }>((db, arg) => db.selectFrom('merchants').select(['default_currency', 'country']).where('id', '=', arg('id')));

/** A counter PC's clock may run a little ahead of the server's: five minutes is NTP-less drift over weeks. */
const TAKEN_AT_SKEW_MS = 5 * 60_000;
/**
 * How far back an offline sale may be dated: the agent holds sales for at most 72 hours (docs/agent.md),
 * and a queue kept through a long closure still syncs; older than a month is a clock gone wrong.
 */
const TAKEN_AT_MAX_AGE_MS = 30 * 24 * 3_600_000;

/** Receipt tokens: 32 base62 characters (≈190 bits) make a receipt URL unguessable. */
const RECEIPT_TOKEN_LENGTH = 32;

export class TransactionService {
  readonly createOperation: Operation<CreatePaymentState, CreatePaymentOutcome>;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly processor: PaymentsPort,
    private readonly accounts: ConnectedAccountDirectory,
    private readonly payments: PaymentState,
    private readonly readers: ReaderResetter,
    private readonly idempotency: IdempotencyService,
    private readonly logger: Logger,
    /** Public base URL of this server, for receipt links. */
    private readonly publicUrl: () => string,
    private readonly cipher: FieldCipher,
  ) {
    this.createOperation = {
      name: 'create_payment',
      steps: {
        started: (state, ctx) => this.#stepCreateRow(state, ctx.scope, ctx),
        transaction_created: (state, ctx) => this.#stepCreateIntent(state, ctx.scope, ctx.key, ctx),
      },
      present: (outcome, state) => presentPaymentCreate(outcome, state.response, cipher),
      giveUp: (state, trx) => this.#giveUpCreate(state, trx),
      // The request and its answer name the receipt email: kept sealed.
      personal: (state) => state.input.receipt_email !== undefined,
    };
  }

  /** Whether a create under this Idempotency-Key has run or runs (IdempotencyService.known). */
  async createRequested(scope: Scope, clientKey: string): Promise<boolean> {
    return this.idempotency.known(scope, clientKey);
  }

  async create(scope: Scope, state: CreatePaymentState, clientKey: string | undefined): Promise<ExecuteResult<CreatePaymentState, CreatePaymentOutcome>> {
    return this.idempotency.execute(scope, this.createOperation, clientKey, state);
  }

  /**
   * A payment created on behalf of another resource (a checkout session, a payment link) under an
   * internal key: the transaction it made, or its refusal thrown.
   */
  async createFor(scope: Scope, state: CreatePaymentState): Promise<TransactionsTable> {
    // The request's audit entry is the resource's, written when it is made; the payment's events still name the request.
    const origin = nestedOrigin(scope.origin);
    const result = await this.create({ ...scope, ...(origin ? { origin } : {}) }, state, undefined);
    // An internal key is this request's alone: no other request's answer can be replayed to it.
    if (result.replayed) throw new Error('a payment created under an internal key was answered by a replay');
    const { ending } = result;
    if ('refusal' in ending) throw ending.refusal;
    if (ending.outcome.kind !== 'created') throw ending.outcome.error;
    return ending.outcome.transaction;
  }

  async #stepCreateRow(state: CreatePaymentState, scope: Scope, ctx: StepContext<CreatePaymentState, CreatePaymentOutcome>): Promise<StepResult<CreatePaymentState, CreatePaymentOutcome>> {
    const { input } = state;
    if (input.customer_id) {
      const customer = await findScoped(this.store.db, 'customers', scope, 'id', input.customer_id);
      if (!customer) throw invalid('customer_id', 'No such customer', 'resource_missing');
      if (customer.deleted_at !== null) throw invalid('customer_id', 'The customer was deleted: a new payment cannot name it', 'resource_missing');
    }
    const merchant = await merchantCurrency.first(this.store.db, { id: scope.merchantId });
    if (!merchant) throw new Error(`merchant ${scope.merchantId} is missing`);
    const currency = input.currency ?? merchant.default_currency;
    const method = input.payment_method_type;
    // The processor's per-currency minimums are what a card charge costs it; cash costs it nothing,
    // so only the spec's own floor (the schema's 50 minor units) applies.
    const minimum = method === 'cash' ? MIN_AMOUNT : minimumCharge(currency);
    if (input.amount < minimum) throw invalid('amount', `The minimum ${currency.toUpperCase()} payment is ${formatAmount(minimum, currency)} (${minimum} in minor units)`, 'amount_too_small');
    if ((method === 'ach' || method === 'bank_transfer') && merchant.country !== 'US') {
      throw invalid('payment_method_type', `ACH debits are for US merchants only; this merchant is in ${merchant.country}. Take the payment by card`, 'ach_unavailable');
    }
    if ((method === 'ach' || method === 'bank_transfer') && currency !== 'usd') throw invalid('currency', 'ACH payments are in usd only');
    if ((method === 'ach' || method === 'bank_transfer') && scope.mode === 'live') await this.#requireAch(scope);
    const till = await this.#till(scope, state.terminalId ?? input.terminal_id ?? null, input.location_id ?? null);
    const takenAt = input.taken_at === undefined ? undefined : this.#takenAt(input.taken_at);

    return ctx.commit(async (trx) => {
      const now = this.clock.now();
      const { id, reference } = newIdentity('transaction');
      const seq = await nextSeq(trx, scope.merchantId, scope.mode, 'transactions');
      const cash = method === 'cash';
      // A sale the counter took offline belongs to the moment and the day it was taken.
      const createdAt = takenAt ?? now;
      const tendered = cash ? (input.amount_tendered ?? input.amount) : null;
      const row: TransactionsTable = {
        id,
        reference,
        merchant_id: scope.merchantId,
        mode: scope.mode,
        seq,
        type: 'payment',
        status: 'pending',
        amount: input.amount,
        amount_captured: 0,
        amount_refunded: 0,
        amount_refund_pending: 0,
        currency,
        payment_method_type: method,
        capture_method: input.capture_method,
        source: state.source,
        description: input.description ?? null,
        receipt_email: this.cipher.seal('transactions.receipt_email', id, input.receipt_email ?? null),
        return_url: input.return_url ?? null,
        customer_id: input.customer_id ?? null,
        metadata: JSON.stringify(input.metadata ?? {}),
        platform_fee_cents: platformFee(input.amount, method),
        tip_amount: 0,
        processor_payment_intent_id: null,
        client_secret: null,
        card_brand: null,
        card_last_four: null,
        failure_code: null,
        decline_code: null,
        failure_message: null,
        cancellation_reason: null,
        receipt_url: null,
        receipt_token: null,
        terminal_id: till.terminalId,
        reader_id: till.readerId,
        link_id: state.linkId ?? null,
        checkout_session_id: state.checkoutSessionId ?? null,
        created_at: createdAt,
        updated_at: now,
        captured_at: null,
        failed_at: null,
        canceled_at: null,
        refunded_at: null,
        disputed_at: null,
        synced_at: now,
        dispute_id: null,
        dispute_status: null,
        amount_tendered: tendered,
        change_due: tendered === null ? null : tendered - input.amount,
        ...NO_CARD_RECEIPT,
        terminal_options: state.terminal ? JSON.stringify(state.terminal) : null,
        location_id: till.locationId,
        created_by_key_id: scope.origin?.key.id ?? null,
        offline_reference: input.offline_reference ?? null,
      };
      // The shop's address heads a cash receipt as it heads a card one.
      if (cash && till.processorLocationId) row.processor_location_id = till.processorLocationId;
      await insertRow(trx, 'transactions', row);
      await addToCounter(trx, scope.merchantId, scope.mode, 'transactions:pending', 1);
      if ((COUNTER_PAYMENT_METHODS as readonly PaymentMethodType[]).includes(method)) await addToCounter(trx, scope.merchantId, scope.mode, 'transactions:counter', 1);
      await recordEvent(trx, scope, 'payment.created', id, presentTransaction(row, this.cipher), now, { seal: row.receipt_email === null ? undefined : this.cipher });
      if (cash) {
        // The cash is in the drawer: the sale is settled here and now, through the same state
        // machine (and so the same events) as a card payment the processor confirmed.
        const token = randomBase62(RECEIPT_TOKEN_LENGTH);
        const paid = await this.payments.update(trx,
          id,
          (current) => (current.status === 'pending'
            ? { status: 'succeeded', amount_captured: current.amount, captured_at: createdAt, receipt_token: token, receipt_url: `${this.publicUrl()}/receipts/${token}` }
            : null),
          now,
        );
        return { outcome: { kind: 'created', transaction: paid } };
      }
      return { next: 'transaction_created', state: { ...state, transactionId: id } };
    });
  }

  /**
   * The till a counter sale belongs to: its reader and that reader's location, or a location alone
   * (a till with a drawer and no card reader). Both named must agree.
   */
  async #till(scope: Scope, terminalId: string | null, locationId: string | null): Promise<{ terminalId: string | null; readerId: string | null; locationId: string | null; processorLocationId: string | null }> {
    let readerId: string | null = null;
    let readerLocation: string | null = null;
    if (terminalId) {
      const reader = await findScoped(this.store.db, 'terminal_readers', scope, 'id', terminalId);
      if (!reader) throw invalid('terminal_id', 'No such reader in this mode: terminal_id takes a reader id from GET /v1/terminal/readers', 'resource_missing');
      readerId = reader.processor_reader_id;
      readerLocation = reader.location_id;
      if (locationId && locationId !== readerLocation) throw invalid('location_id', `Reader ${reader.name} stands at another location than location_id`);
    }
    const wanted = locationId ?? readerLocation;
    if (!wanted) return { terminalId, readerId, locationId: null, processorLocationId: null };
    const location = await findScoped(this.store.db, 'terminal_locations', scope, 'id', wanted);
    if (!location) throw invalid('location_id', 'No such location in this mode: location_id takes a location id from GET /v1/terminal/locations', 'resource_missing');
    return { terminalId, readerId, locationId: location.id, processorLocationId: location.processor_location_id };
  }

  /** When an offline sale was taken: never ahead of the server's clock beyond skew, never further back than the agent keeps sales. */
  #takenAt(value: string): number {
    const at = Date.parse(value);
    const now = this.clock.now();
    if (at > now + TAKEN_AT_SKEW_MS) throw invalid('taken_at', 'is in the future: check the counter PC\'s clock');
    if (at < now - TAKEN_AT_MAX_AGE_MS) throw invalid('taken_at', 'is more than 30 days ago: record the sale by hand (it is on its paper receipt)');
    return at;
  }

  /** Live-mode ACH needs the connected account's ACH capability (spec §8); test mode never checks. */
  async #requireAch(scope: Scope): Promise<void> {
    const account = await this.accounts.accountOf(scope.merchantId, scope.mode, scope.trace);
    let status: string;
    try {
      status = await this.processor.capabilityStatus(scope, account, 'us_bank_account_ach_payments');
    } catch (err) {
      throw fromProcessorError(err);
    }
    if (status !== 'active') {
      throw invalid(
        'payment_method_type',
        `ACH is not enabled for this merchant's live account (capability us_bank_account_ach_payments is ${status}); ask the platform to enable it`,
        'ach_not_enabled',
      );
    }
  }

  async #stepCreateIntent(state: CreatePaymentState, scope: Scope, key: string, ctx: StepContext<CreatePaymentState, CreatePaymentOutcome>): Promise<StepResult<CreatePaymentState, CreatePaymentOutcome>> {
    const transactionId = state.transactionId;
    if (!transactionId) throw new Error('create step without a transaction');
    const row = await transactionById.first(this.store.db, { id: transactionId });
    if (!row) throw new Error(`transaction ${transactionId} is missing`);
    const { input } = state;
    const destination = await this.accounts.accountOf(scope.merchantId, scope.mode, scope.trace);
    const isAch = input.payment_method_type === 'ach' || input.payment_method_type === 'bank_transfer';
    const customer = row.customer_id ? await findScoped(this.store.db, 'customers', scope, 'id', row.customer_id) : undefined;
    let created: IntentCreation;
    try {
      created = await this.processor.createIntent(
        scope,
        {
          amount: row.amount,
          currency: row.currency,
          methods: PROCESSOR_METHODS[row.payment_method_type],
          captureMethod: row.capture_method,
          applicationFee: row.platform_fee_cents,
          destination,
          confirm: input.confirm,
          ...(input.payment_method ? { paymentMethod: input.payment_method } : {}),
          ...(input.confirm && input.return_url ? { returnUrl: input.return_url } : {}),
          ...(input.confirm && isAch ? { offlineMandate: true } : {}),
          ...(row.description ? { description: row.description } : {}),
          ...(row.receipt_email ? { receiptEmail: this.cipher.open('transactions.receipt_email', row.id, row.receipt_email) } : {}),
          ...(customer?.processor_customer_id && customer.deleted_at === null ? { customer: customer.processor_customer_id } : {}),
          metadata: { pos_transaction_id: row.id, pos_reference: row.reference, pos_merchant_id: scope.merchantId },
        },
        processorIdempotencyKey(scope.merchantId, scope.mode, key, 'create_payment_intent'),
      );
    } catch (err) {
      // Refused for good (the processor's 4xx, or its client refusing to send it): the payment fails
      // here and the key keeps that answer. Anything else may pass and is retried.
      const refusal = permanentProcessorRefusal(err);
      if (!refusal) throw fromProcessorError(err);
      return ctx.commit(async (trx) => {
        const now = this.clock.now();
        const failed = await this.payments.update(trx,
          transactionId,
          (current) => (current.status === 'pending' ? { status: 'failed', failed_at: now, failure_code: refusal.code ?? 'processor_invalid_request', failure_message: refusal.message } : null),
          now,
        );
        return { outcome: { kind: 'failed', transaction: failed, error: refusal } };
      });
    }
    const { intent } = created;
    const cardError = created.decline ? fromProcessorError(created.decline) : undefined;
    return ctx.commit(async (trx) => {
      // The row read before the call: written if it is still that version, read again if not.
      const synced = await this.#applyIntent(trx, transactionId, intent, row);
      if (cardError) return { outcome: { kind: 'declined', transaction: synced, error: cardError } };
      return { outcome: { kind: 'created', transaction: synced } };
    });
  }

  /**
   * A create whose processor call kept failing past the retry cap. A payment the processor never
   * acknowledged (no PaymentIntent known) fails with `processing_error` (a 402 naming it). One the
   * processor's events made known meanwhile is left to them: it is what it is now.
   */
  async #giveUpCreate(state: CreatePaymentState, trx: Trx): Promise<Ending<CreatePaymentOutcome>> {
    const message = 'The payment could not be processed: the payment processor stayed unreachable through repeated attempts; try again with a new Idempotency-Key';
    if (!state.transactionId) return { refusal: cardError('processing_error', message) };
    const now = this.clock.now();
    const row = await this.payments.update(trx,
      state.transactionId,
      (current) => (current.status === 'pending' && !current.processor_payment_intent_id ? { status: 'failed', failed_at: now, failure_code: 'processing_error', failure_message: message } : null),
      now,
    );
    if (row.status === 'failed') return { outcome: { kind: 'failed', transaction: row, error: cardError(row.failure_code ?? 'processing_error', row.failure_message ?? message) } };
    return { outcome: { kind: 'created', transaction: row } };
  }

  /** Brings the row in line with a PaymentIntent inside a transaction; returns the row as stored. `seen`: see PaymentState.update. */
  async #applyIntent(trx: Trx, transactionId: string, intent: PaymentSnapshot, seen?: TransactionsTable): Promise<TransactionsTable> {
    const now = this.clock.now();
    return this.payments.update(trx,
      transactionId,
      (row) => {
        const patch: Partial<TransactionsTable> = { ...(patchFromSnapshot(row, intent, now) ?? {}), synced_at: now };
        if (!row.processor_payment_intent_id) patch.processor_payment_intent_id = intent.id;
        if (!row.client_secret && intent.clientSecret) patch.client_secret = intent.clientSecret;
        if (patch.status === 'succeeded' && hasReceipt(row) && !row.receipt_token) {
          patch.receipt_token = randomBase62(RECEIPT_TOKEN_LENGTH);
          patch.receipt_url = `${this.publicUrl()}/receipts/${patch.receipt_token}`;
        }
        return patch;
      },
      now,
      seen,
    );
  }

  /** The receipt of a paid payment (`GET /v1/transactions/{id}/receipt`): what its receipt page prints. */
  async receipt(scope: Scope, idOrReference: string): Promise<ReceiptContent> {
    const row = await this.getRow(scope, idOrReference);
    const receipt = row.receipt_token ? await findReceipt(this.store.db, row.receipt_token, this.processor.kind === 'simulator') : undefined;
    if (!receipt) {
      throw missing(`Transaction ${row.reference} has no receipt: paid terminal and hosted-page payments have one`, 'id');
    }
    return receiptContent(receipt);
  }

  async get(scope: Scope, idOrReference: string): Promise<Transaction> {
    return this.present(await this.getRow(scope, idOrReference));
  }

  /** A stored row as the API shows it (its receipt email opened). */
  present(row: TransactionsTable): Transaction {
    return presentTransaction(row, this.cipher);
  }

  async getRow(scope: Scope, idOrReference: string): Promise<TransactionsTable> {
    const row = await findTransactionRow(this.store.db, scope, idOrReference);
    if (!row) throw notFound('id', 'transaction');
    return row;
  }

  /**
   * A newest-first page, filtered by status or channel. Counts come from maintained counters (a
   * channel's from `transactions:counter`, online being the rest), so only the two filters together
   * COUNT(*), over the (merchant, mode, status, seq) index.
   */
  async list(scope: Scope, request: PageRequest, filter: { status?: TransactionsTable['status'] | undefined; channel?: TransactionChannel | undefined } = {}): Promise<Page<Transaction>> {
    const db = this.store.db;
    const { status, channel } = filter;
    const present = (row: TransactionsTable) => presentTransaction(row, this.cipher);
    if (!status && !channel) return seqPage(db, 'transactions', scope, request, present);
    let base = db.selectFrom('transactions').where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode);
    if (status) base = base.where('status', '=', status);
    if (channel === 'counter') base = base.where('payment_method_type', 'in', COUNTER_PAYMENT_METHODS);
    if (channel === 'online') base = base.where('payment_method_type', 'not in', COUNTER_PAYMENT_METHODS);
    if (status && channel) return offsetPage(base, (q) => q.selectAll().orderBy('seq', 'desc'), request, present);
    const total = status ? await readCount(db, scope.merchantId, scope.mode, `transactions:${status}`) : await this.#channelCount(db, scope, channel ?? 'counter');
    const rows = await base
      .selectAll()
      .orderBy('seq', 'desc')
      .limit(request.size)
      .offset((request.page - 1) * request.size)
      .execute();
    return toPage(rows.map(present), total, request);
  }

  async #channelCount(db: Executor, scope: Scope, channel: TransactionChannel): Promise<number> {
    const counter = await readCount(db, scope.merchantId, scope.mode, 'transactions:counter');
    if (channel === 'counter') return counter;
    return (await readCount(db, scope.merchantId, scope.mode, 'transactions')) - counter;
  }

  /** Asks the processor for the payment's current state and applies it; traced in `trace`, the asking request's. */
  async sync(row: TransactionsTable, trace?: Scope['trace']): Promise<TransactionsTable> {
    const intentId = row.processor_payment_intent_id;
    if (!intentId) return row;
    const intent = await this.processor.retrieveIntent({ mode: row.mode, trace }, intentId);
    return inTrace(trace, () => this.store.transaction((trx) => this.#applyIntent(trx, row.id, intent)));
  }

  async capture(scope: Scope, idOrReference: string, amountToCapture: number | undefined): Promise<TransactionsTable> {
    let row = await this.getRow(scope, idOrReference);
    if (row.status === 'pending' && row.processor_payment_intent_id) row = await this.sync(row, scope.trace);
    if (['succeeded', 'partially_refunded', 'refunded'].includes(row.status)) return row; // capture is safe to repeat
    if (row.status !== 'requires_capture') {
      throw conflict('transaction_not_capturable', `Only an authorised manual-capture payment can be captured; this one is ${row.status}`);
    }
    if (amountToCapture !== undefined && amountToCapture > row.amount) {
      throw invalid('amount_to_capture', `Cannot capture more than the ${formatAmount(row.amount, row.currency)} authorised (amount_to_capture ${amountToCapture} > ${row.amount} in minor units)`);
    }
    const intentId = row.processor_payment_intent_id;
    if (!intentId) throw conflict('transaction_not_capturable', 'The payment has no authorisation yet');
    try {
      const intent = await this.processor.captureIntent(
        scope,
        intentId,
        amountToCapture,
        processorIdempotencyKey(scope.merchantId, scope.mode, row.id, 'capture', String(amountToCapture ?? 'full')),
      );
      return await inTrace(scope.trace, () => this.store.transaction((trx) => this.#applyIntent(trx, row.id, intent)));
    } catch (err) {
      if (processorErrorCode(err) === 'payment_intent_unexpected_state') {
        const fresh = await this.sync(row, scope.trace);
        if (['succeeded', 'partially_refunded', 'refunded'].includes(fresh.status)) return fresh;
        throw conflict('transaction_not_capturable', `The payment can no longer be captured; it is ${fresh.status}`);
      }
      throw fromProcessorError(err);
    }
  }

  /**
   * Cancels an uncaptured payment (spec §3). Safe to repeat; 409 already_captured once money
   * moved, 409 authorization_in_progress while the processor is authorising.
   */
  async cancel(scope: Scope, idOrReference: string, reason: string | undefined): Promise<CancelResult> {
    const row = await this.getRow(scope, idOrReference);
    const terminal = row.payment_method_type === 'terminal';
    // A repeat resets nothing: there is nothing left on a reader for a canceled payment.
    if (row.status === 'canceled') return { row, ...(terminal ? { readerReset: { reset: null } } : {}) };
    this.#assertCancelable(row);
    const intentId = row.processor_payment_intent_id;
    if (!intentId) {
      if (row.status === 'failed') return { row: await this.#cancelLocally(row, reason), ...(terminal ? { readerReset: { reset: null } } : {}) };
      throw conflict('transaction_being_created', 'The payment is still being created; retry the cancel in a moment');
    }
    // Spec §3: the reader is reset first; a card mid-authorisation stops the cancel with a 409.
    const readerReset = terminal ? await this.readers.resetFor(row) : undefined;
    const canceled = await this.#cancelIntent(scope, row, intentId, reason);
    return { row: canceled, ...(readerReset ? { readerReset } : {}) };
  }

  async #cancelIntent(scope: Scope, row: TransactionsTable, intentId: string, reason: string | undefined): Promise<TransactionsTable> {
    const processorReason = reason && PROCESSOR_CANCEL_REASONS.has(reason) ? (reason as PaymentCancellationReason) : undefined;
    // The processor's event of the cancel may be applied before its answer, and it carries none of
    // our own reasons (Stripe takes four): the reason asked for is on the row first, so whichever
    // moves the payment to canceled (this answer, that event) moves it with the reason, and its
    // payment.canceled event and the counter's push say it. It is shown only once canceled.
    if (row.cancellation_reason !== (reason ?? null)) {
      const asked = reason ?? null;
      await inTrace(scope.trace, () =>
        this.store.transaction((trx) => this.payments.update(trx, row.id, (current) => (current.status === 'canceled' || current.cancellation_reason === asked ? null : { cancellation_reason: asked }), this.clock.now())),
      );
    }
    let intent: PaymentSnapshot;
    try {
      intent = await this.processor.cancelIntent(scope, intentId, processorReason, processorIdempotencyKey(scope.merchantId, scope.mode, row.id, 'cancel'));
    } catch (err) {
      if (processorErrorCode(err) !== 'payment_intent_unexpected_state') throw fromProcessorError(err);
      const fresh = await this.sync(row, scope.trace);
      if (fresh.status === 'canceled') return fresh;
      this.#assertCancelable(fresh);
      const live = await this.processor.retrieveIntent(scope, intentId);
      if (live.status === 'processing') throw this.#authorizing();
      throw fromProcessorError(err);
    }
    return inTrace(scope.trace, () => this.store.transaction(async (trx) => {
      if (reason) await this.payments.update(trx, row.id, (current) => (current.cancellation_reason ? null : { cancellation_reason: reason }), this.clock.now());
      return this.#applyIntent(trx, row.id, intent);
    }));
  }

  #authorizing(): ApiError {
    return conflict('authorization_in_progress', 'The customer already presented a card and the authorisation is running; poll the transaction until it succeeds or fails');
  }

  #assertCancelable(row: TransactionsTable): void {
    if (['succeeded', 'partially_refunded', 'refunded'].includes(row.status)) {
      throw conflict('already_captured', 'The payment was already captured; refund it instead');
    }
  }

  async #cancelLocally(row: TransactionsTable, reason: string | undefined): Promise<TransactionsTable> {
    const now = this.clock.now();
    return this.store.transaction((trx) =>
      this.payments.update(trx, row.id, (current) => (current.status === 'canceled' ? null : { status: 'canceled', canceled_at: now, cancellation_reason: reason ?? null }), now),
    );
  }

  /**
   * Processor events about a PaymentIntent. The event's copy of the intent (`carried`) is trusted
   * for what it says, since the state machine only moves forward and a late or repeated event then
   * moves nothing. The intent is read from the processor only when the copy is not enough: the
   * caller has none, or it says the payment was paid while no charge event has told us the card
   * that paid (Stripe's events never expand `latest_charge`; its `charge.succeeded` normally comes
   * first). An event saying the intent is `processing` (a card being authorised) moves nothing.
   */
  async onIntentEvent(intentId: string, metadataTransactionId: string | undefined, mode: Mode, carried?: PaymentSnapshot): Promise<void> {
    const row = await this.#rowOfIntent(intentId, metadataTransactionId, mode);
    if (!row) {
      this.logger.debug({ intent: intentId }, 'processor event for an intent we do not know');
      return;
    }
    if (carried?.status === 'processing' && row.status === 'pending') return;
    if (carried) {
      const patch = patchFromSnapshot(row, carried, this.clock.now());
      if (!patch) return;
      const paid = patch.status === 'succeeded' || patch.status === 'requires_capture';
      if (!paid || row.card_last_four !== null) {
        await this.store.transaction((trx) => this.#applyIntent(trx, row.id, carried));
        return;
      }
      // Paid, and the card not yet known, while the create still waits on the processor's answer
      // (the row names no intent yet): that answer carries the card. The event is asked for again
      // rather than paid for with a read; by then the create has committed and it moves nothing.
      if (row.status === 'pending' && row.processor_payment_intent_id === null) {
        throw new EventNotYetApplicable(`payment ${row.id} is still being created`);
      }
    }
    const intent = await this.processor.retrieveIntent({ mode }, intentId);
    await this.store.transaction((trx) => this.#applyIntent(trx, row.id, intent));
  }

  /**
   * A charge that paid, from its event: the card and the receipt lines it carries, kept on a payment
   * not yet settled so that the intent's own event (which names the charge only by id) needs no read.
   */
  async onChargeEvent(intentId: string, mode: Mode, charge: ChargeSnapshot): Promise<void> {
    if (!charge.succeeded || !charge.card) return;
    const row = await this.#rowOfIntent(intentId, undefined, mode);
    if (!row || !['pending', 'failed', 'requires_capture'].includes(row.status)) return;
    const now = this.clock.now();
    await this.store.transaction((trx) =>
      this.payments.update(trx, row.id, (current) => {
        if (!['pending', 'failed', 'requires_capture'].includes(current.status)) return null;
        const patch: Partial<TransactionsTable> = {};
        if (charge.card?.brand && charge.card.brand !== current.card_brand) patch.card_brand = charge.card.brand;
        if (charge.card?.last4 && charge.card.last4 !== current.card_last_four) patch.card_last_four = charge.card.last4;
        for (const [column, value] of Object.entries(receiptColumns(charge.receipt)) as [keyof CardReceiptColumns, string | null][]) {
          if (value !== null && value !== current[column]) patch[column] = value;
        }
        return Object.keys(patch).length === 0 ? null : patch;
      }, now),
    );
  }

  async #rowOfIntent(intentId: string, metadataTransactionId: string | undefined, mode: Mode): Promise<TransactionsTable | undefined> {
    const row = await this.store.db.selectFrom('transactions').selectAll().where('processor_payment_intent_id', '=', intentId).executeTakeFirst();
    if (row || !metadataTransactionId) return row;
    return this.store.db.selectFrom('transactions').selectAll().where('id', '=', metadataTransactionId).where('mode', '=', mode).executeTakeFirst();
  }

  /** One pass of the polling fallback: payments whose outcome no event has told us yet. */
  async pollOpen(): Promise<number> {
    const now = this.clock.now();
    const rows = await this.store.db
      .selectFrom('transactions')
      .selectAll()
      // Literals, as the partial index `transactions_open` is written, so both databases use it.
      .where('status', 'in', [sql.lit<TransactionsTable['status']>('pending'), sql.lit<TransactionsTable['status']>('requires_capture')])
      .where('processor_payment_intent_id', 'is not', null)
      .where('synced_at', '<', now - MIN_POLL_INTERVAL_MS)
      .where(sql<boolean>`${9 * now} + created_at > 10 * synced_at`)
      .orderBy('synced_at')
      .limit(POLL_BATCH)
      .execute();
    for (const row of rows) {
      try {
        await this.sync(row);
      } catch (err) {
        this.logger.warn({ err, transaction_id: row.id }, 'polling the processor failed');
      }
    }
    return rows.length;
  }
}
