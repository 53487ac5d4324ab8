import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { DEFAULT_DAY_ENDS_AT, machineTimeZone } from '../../shared/time-zone.js';
import type { ReaderSnapshot } from '../processor/snapshots.js';
import type { Logger } from 'pino';
import { isUuid } from '../../shared/ids.js';
import { toIsoOrNull, toIsoTimestamp, type Clock } from '../../shared/time.js';
import type { TerminalLocationsTable, TerminalReadersTable, TransactionsTable } from '../db/schema.js';
import { findScoped } from '../db/prepared.js';
import type { Executor, Store } from '../db/store.js';
import { ApiError, conflict, invalid, knownCode, missing, notFound } from '../errors.js';
import { fromProcessorError, processorErrorCode } from '../processor/errors.js';
import { type TerminalPort, processorIdempotencyKey, type TippingRequest } from '../processor/port.js';
import type { CreateTerminalPaymentInput } from '../../shared/contract/terminal.js';
import type { z } from '../../shared/contract/zod.js';
import type { CreateLocationSchema, LocationSchema, ReaderSchema, RegisterReaderSchema, TippingSchema, UpdateLocationSchema } from '../../shared/contract/terminal.js';
import { parseTerminalOptions } from '../payments/terminal-options.js';
import type { ExecuteResult } from '../idempotency/keys.js';
import type { PaymentState } from '../payments/payment-state.js';
import { authorizing } from './reader-reset.js';
import type { Scope } from '../accounts/scope.js';
import type { CreatePaymentState, TransactionService } from '../payments/transactions.js';
import { followNotices, notifyOnCommit, type Notice } from '../db/notify.js';
import { DEFAULT_RECEIPT_POLICY } from '../../shared/receipt-policy.js';
import type { LocationPolicy } from '../../shared/agent-upstream.js';
import type { ReaderActions } from './reader-actions.js';
import { actionOf, readerRowsWithPayments } from './reader-view.js';

type Location = z.infer<typeof LocationSchema>;
type Reader = z.infer<typeof ReaderSchema>;

/**
 * A pending terminal payment older than this is canceled by the service (spec §3, "service
 * sweep"). Ten minutes is far past any real tap-and-tip at a counter (under a minute) and past
 * Stripe's own reader timeout, yet short enough that an abandoned sale doesn't linger all day.
 */
export const DEFAULT_TERMINAL_STALE_MS = 10 * 60 * 1000;

/**
 * simulate-payment answers once the simulated authorisation is over, as the processor's events tell
 * it. The simulator's window is 300 ms by default and its events follow within milliseconds when
 * the account is quiet; in a burst at the account's request budget (20 a second in test mode) the
 * events queue behind the reads their handlers make, so 50 payments at once take ten seconds or
 * more. Thirty seconds covers that without hanging a caller forever; past it the reader and the
 * payment are read once.
 */
const SIMULATE_WAIT_MS = 30_000;

/**
 * How long the processor's word that a reader is online is believed without asking again before a
 * payment is made for it (`--reader-status-max-age-ms`). The processor's own status already lags
 * the reader: Stripe marks a reader offline only once its heartbeats stop, and advises against
 * blocking payments on the field. Half a minute more is of the same order as that lag and as the
 * reconciliation read (DEFAULT_READER_CHECK_MS); it spares the read for a till taking a sale at
 * least every half minute, the busy till whose calls crowd the platform's shared budget, while an
 * idle till's next sale reads once as before. 0 reads for every payment.
 */
export const DEFAULT_READER_STATUS_MAX_AGE_MS = 30_000;

/** Stale payments swept per pass, so a backlog never holds the processor or the database long. */
const SWEEP_BATCH = 50;

type TippingOut = NonNullable<Location['tipping']>;

function presentLocation(row: TerminalLocationsTable): Location {
  return {
    id: row.id,
    object: 'terminal.location',
    display_name: row.display_name,
    address: JSON.parse(row.address) as Record<string, string>,
    processor_location_id: row.processor_location_id,
    tipping: row.tipping ? (JSON.parse(row.tipping) as TippingOut) : null,
    receipt_policy: row.receipt_policy,
    time_zone: row.time_zone ?? machineTimeZone(),
    day_ends_at: row.day_ends_at,
    is_test: row.mode === 'test',
    created_at: toIsoTimestamp(row.created_at),
  };
}

export function presentReader(row: TerminalReadersTable, transactionId: string | null = null): Reader {
  return {
    id: row.id,
    object: 'terminal.reader',
    name: row.name,
    serial_number: row.serial_number,
    model: row.model,
    status: row.status,
    processor_terminal_id: row.processor_reader_id,
    location_id: row.location_id,
    last_seen_at: toIsoOrNull(row.last_seen_at),
    is_test: row.mode === 'test',
    action: actionOf(row, transactionId),
  };
}

/** A reader of the scope by its uuid or its `tmr_` id; 404 naming `id` otherwise. */
export async function findReaderRow(db: Executor, scope: Scope, id: string): Promise<TerminalReadersTable> {
  const row = await findScoped(db, 'terminal_readers', scope, isUuid(id) ? 'id' : 'processor_reader_id', id);
  if (!row) throw notFound('id', 'reader');
  return row;
}

function wrongReaderId(readerId: string): ApiError {
  return isUuid(readerId)
    ? invalid('reader_id', "reader_id takes the reader's processor_terminal_id (tmr_…) from GET /v1/terminal/readers, not its uuid")
    : missing(`No such reader: ${readerId} (reader_id takes a processor_terminal_id, tmr_…, from GET /v1/terminal/readers)`, 'reader_id');
}

function readerConflict(err: unknown): ApiError {
  switch (processorErrorCode(err)) {
    case 'terminal_reader_busy':
      return conflict('reader_busy', 'The reader is busy with another payment; wait for it or cancel its action first');
    case 'terminal_reader_offline':
      return conflict('reader_offline', 'The reader is offline: check its power and network');
    default:
      return fromProcessorError(err);
  }
}

export class TerminalService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly processor: TerminalPort,
    private readonly transactions: TransactionService,
    private readonly payments: PaymentState,
    private readonly readerActions: ReaderActions,
    private readonly logger: Logger,
    private readonly staleMs: number = DEFAULT_TERMINAL_STALE_MS,
    private readonly readerStatusMaxAgeMs: number = DEFAULT_READER_STATUS_MAX_AGE_MS,
  ) {}

  async #tippingOut(scope: Scope, tipping: z.infer<typeof TippingSchema>): Promise<TippingOut> {
    let currency = tipping.currency;
    if (!currency) {
      const merchant = await this.store.db.selectFrom('merchants').select('default_currency').where('id', '=', scope.merchantId).executeTakeFirstOrThrow();
      currency = merchant.default_currency;
    }
    return { currency, percentages: tipping.percentages ?? null, fixed_amounts: tipping.fixed_amounts ?? null, smart_tip_threshold: tipping.smart_tip_threshold ?? null };
  }

  /** Mirrors a location's tipping to the processor's Terminal Configuration assigned to it. */
  async #configureTipping(scope: Scope, processorLocation: string, configuration: string | null, tipping: TippingOut | null, key: string): Promise<string> {
    const request: TippingRequest | null = tipping
      ? {
          currency: tipping.currency,
          ...(tipping.percentages ? { percentages: tipping.percentages } : {}),
          ...(tipping.fixed_amounts ? { fixedAmounts: tipping.fixed_amounts } : {}),
          ...(tipping.smart_tip_threshold !== null ? { smartTipThreshold: tipping.smart_tip_threshold } : {}),
        }
      : null;
    return this.processor.configureLocationTipping(scope, processorLocation, configuration, request, processorIdempotencyKey(scope.merchantId, scope.mode, key, 'tipping')).catch((err: unknown) => {
      throw fromProcessorError(err);
    });
  }

  async createLocation(scope: Scope, input: z.infer<typeof CreateLocationSchema>): Promise<Location> {
    const tipping = input.tipping ? await this.#tippingOut(scope, input.tipping) : null;
    const key = randomUUID();
    const created = await this.processor
      .createLocation(
        scope,
        { displayName: input.display_name, address: input.address, metadata: { pos_merchant_id: scope.merchantId } },
        processorIdempotencyKey(scope.merchantId, scope.mode, key, 'location'),
      )
      .catch((err: unknown) => {
        throw fromProcessorError(err);
      });
    const configuration = tipping ? await this.#configureTipping(scope, created.id, null, tipping, key) : null;
    const row: TerminalLocationsTable = {
      id: randomUUID(),
      merchant_id: scope.merchantId,
      mode: scope.mode,
      display_name: input.display_name,
      address: JSON.stringify(input.address),
      processor_location_id: created.id,
      created_at: this.clock.now(),
      tipping: tipping ? JSON.stringify(tipping) : null,
      processor_configuration_id: configuration,
      receipt_policy: input.receipt_policy ?? DEFAULT_RECEIPT_POLICY,
      time_zone: input.time_zone ?? null,
      day_ends_at: input.day_ends_at ?? DEFAULT_DAY_ENDS_AT,
    };
    await this.store.transaction(async (trx) => {
      await trx.insertInto('terminal_locations').values(row).execute();
      notifyOnCommit(trx, { topic: 'locations', merchantId: scope.merchantId, mode: scope.mode });
    });
    return presentLocation(row);
  }

  /**
   * Changes what is given of a location: its on-reader tipping (set, or off with null; on the
   * processor first) and its receipt policy, which reaches the agents following the merchant at once.
   */
  async updateLocation(scope: Scope, id: string, input: z.infer<typeof UpdateLocationSchema>): Promise<Location> {
    const row = await findScoped(this.store.db, 'terminal_locations', scope, 'id', id);
    if (!row) throw notFound('id', 'location');
    const next: Partial<Pick<TerminalLocationsTable, 'tipping' | 'processor_configuration_id' | 'receipt_policy' | 'time_zone' | 'day_ends_at'>> = {};
    if (input.tipping !== undefined) {
      const tipping = input.tipping ? await this.#tippingOut(scope, input.tipping) : null;
      let configuration = row.processor_configuration_id;
      if (tipping || configuration) configuration = await this.#configureTipping(scope, row.processor_location_id, configuration, tipping, randomUUID());
      next.tipping = tipping ? JSON.stringify(tipping) : null;
      next.processor_configuration_id = configuration;
    }
    if (input.receipt_policy !== undefined) next.receipt_policy = input.receipt_policy;
    if (input.time_zone !== undefined) next.time_zone = input.time_zone;
    if (input.day_ends_at !== undefined) next.day_ends_at = input.day_ends_at;
    await this.store.transaction(async (trx) => {
      await trx.updateTable('terminal_locations').set(next).where('id', '=', row.id).execute();
      if (next.receipt_policy !== undefined && next.receipt_policy !== row.receipt_policy) notifyOnCommit(trx, { topic: 'locations', merchantId: scope.merchantId, mode: scope.mode });
    });
    return presentLocation({ ...row, ...next });
  }

  async listLocations(scope: Scope): Promise<Location[]> {
    const rows = await this.store.db.selectFrom('terminal_locations').selectAll().where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode).orderBy('created_at').execute();
    return rows.map(presentLocation);
  }

  /**
   * Follows the scope's locations for a connected agent: `deliver` gets every location's receipt
   * policy now and again after each commit that created a location or changed a policy. A shop has
   * a handful of locations, so the whole list is read and sent each time. Returns stop.
   */
  followLocations(scope: Scope, deliver: (locations: LocationPolicy[]) => void, failed: (error: unknown) => void): () => void {
    return followNotices(
      this.store.notifications,
      { topic: 'locations', merchantId: scope.merchantId, mode: scope.mode },
      async () => {
        const rows = await this.store.db
          .selectFrom('terminal_locations')
          .select(['id', 'display_name', 'receipt_policy'])
          .where('merchant_id', '=', scope.merchantId)
          .where('mode', '=', scope.mode)
          .orderBy('created_at')
          .execute();
        deliver(rows);
        return false;
      },
      failed,
    );
  }

  /**
   * Registers a reader (spec §4.7 rules 1–3): `simulated-wpe` with a test key attaches a simulated
   * reader to the account's test location; a live key registers a physical reader by its code at
   * a live location. Without a location in the key's mode: 400 location_required.
   */
  async registerReader(scope: Scope, input: z.infer<typeof RegisterReaderSchema>): Promise<Reader> {
    let location = this.store.db.selectFrom('terminal_locations').selectAll().where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode);
    if (input.location_id) location = location.where('id', '=', input.location_id);
    const place = await location.orderBy('created_at').executeTakeFirst();
    if (!place) {
      throw invalid(
        input.location_id ? 'location_id' : 'registration_code',
        input.location_id
          ? `No ${scope.mode}-mode location ${input.location_id}: a location is required to register a reader`
          : `A location is required: create a ${scope.mode}-mode location with POST /v1/terminal/locations before registering a reader`,
        'location_required',
      );
    }
    let reader: ReaderSnapshot;
    const startedAt = this.clock.now();
    try {
      reader = await this.processor.registerReader(
        scope,
        { registrationCode: input.registration_code, location: place.processor_location_id, label: input.name, metadata: { pos_merchant_id: scope.merchantId } },
        processorIdempotencyKey(scope.merchantId, scope.mode, randomUUID(), 'reader'),
      );
    } catch (err) {
      const mapped = fromProcessorError(err);
      if (mapped.status === 400 && mapped.param === 'registration_code') throw invalid('registration_code', mapped.message, knownCode(400, mapped.code, 'parameter_invalid'));
      throw mapped;
    }
    const row: TerminalReadersTable = {
      id: randomUUID(),
      merchant_id: scope.merchantId,
      mode: scope.mode,
      location_id: place.id,
      name: input.name,
      serial_number: reader.serialNumber,
      model: reader.deviceType,
      processor_reader_id: reader.id,
      status: reader.status,
      status_source: 'processor',
      last_seen_at: reader.lastSeenAt,
      created_at: this.clock.now(),
      agent_id: null,
      presence_expires_at: null,
      action_seq: 0,
      action_type: null,
      action_status: null,
      action_payment_intent_id: null,
      action_previous_payment_intent_id: null,
      action_card_presented: 0,
      action_failure_code: null,
      action_failure_message: null,
      action_processor_at: null,
      action_updated_at: null,
      action_check_at: null,
      processor_status: reader.status,
      processor_status_at: startedAt,
    };
    await this.store.transaction(async (trx) => {
      row.action_seq = await this.readerActions.registered(trx, row);
      await trx.insertInto('terminal_readers').values(row).execute();
    });
    return presentReader(row);
  }

  /**
   * The key's readers. Presence comes from the on-premise agent once one reports; until then the
   * processor's view is fetched on each listing.
   */
  async listReaders(scope: Scope): Promise<Reader[]> {
    const rows = await this.#readerRows(scope);
    if (rows.some((r) => r.status_source === 'processor')) {
      try {
        const seen = await this.processor.listReaders(scope);
        const byId = new Map(seen.map((r) => [r.id, r]));
        for (const row of rows) {
          const fresh = byId.get(row.processor_reader_id);
          if (!fresh || row.status_source !== 'processor') continue;
          const status = fresh.status;
          const lastSeen = fresh.lastSeenAt;
          if (status !== row.status || lastSeen !== row.last_seen_at) {
            await this.store.db.updateTable('terminal_readers').set({ status, last_seen_at: lastSeen }).where('id', '=', row.id).where('status_source', '=', 'processor').execute();
          }
        }
      } catch (err) {
        this.logger.warn({ err }, 'could not refresh reader status from the processor; showing the last known');
      }
    }
    // The same join as the reader views pushed to agents (reader-view.ts).
    const joined = await readerRowsWithPayments(this.store.db, scope);
    return joined.map((row) => presentReader(row, row.transaction_id));
  }

  #readerRows(scope: Scope): Promise<TerminalReadersTable[]> {
    return this.store.db.selectFrom('terminal_readers').selectAll().where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode).orderBy('created_at').execute();
  }

  async deleteReader(scope: Scope, id: string): Promise<Reader> {
    const row = await findReaderRow(this.store.db, scope, id);
    try {
      await this.processor.deleteReader(scope, row.processor_reader_id);
    } catch (err) {
      if (processorErrorCode(err) !== 'resource_missing') throw fromProcessorError(err);
    }
    await this.store.db.deleteFrom('terminal_readers').where('id', '=', row.id).execute();
    return presentReader(row);
  }

  async readerByProcessorId(scope: Scope, readerId: string): Promise<TerminalReadersTable> {
    const row = isUuid(readerId) ? undefined : await findScoped(this.store.db, 'terminal_readers', scope, 'processor_reader_id', readerId);
    if (!row) throw wrongReaderId(readerId);
    return row;
  }

  async createPayment(scope: Scope, input: Omit<CreateTerminalPaymentInput, 'idempotency_key'>, clientKey: string | undefined): Promise<ExecuteResult<CreatePaymentState>> {
    if (input.terminal_id) {
      const reader = await findScoped(this.store.db, 'terminal_readers', scope, 'id', input.terminal_id);
      if (!reader) throw invalid('terminal_id', 'No such reader in this mode: terminal_id takes a reader id from GET /v1/terminal/readers', 'resource_missing');
      // A payment for a reader the processor reports offline would only be canceled again: refused
      // before it exists, so a till retrying Enter leaves no trail of canceled payments. A retried
      // request (same key) is answered from its stored response before this check counts, and the
      // processor's recent word that the reader is online spares the read (DEFAULT_READER_STATUS_MAX_AGE_MS).
      if (!this.readerActions.knownOnline(reader, this.readerStatusMaxAgeMs) && (!clientKey || !(await this.transactions.createRequested(scope, clientKey)))) {
        await this.#refuseOffline(reader);
      }
    }
    return this.transactions.create(
      scope,
      {
        input: {
          amount: input.amount,
          ...(input.currency ? { currency: input.currency } : {}),
          ...(input.description ? { description: input.description } : {}),
          ...(input.customer_id ? { customer_id: input.customer_id } : {}),
          ...(input.metadata ? { metadata: input.metadata } : {}),
          payment_method_type: 'terminal',
          confirm: false,
          capture_method: 'automatic',
        },
        source: 'terminal',
        terminalId: input.terminal_id ?? null,
        response: 'terminal',
        terminal: {
          ...(input.line_items ? { line_items: input.line_items } : {}),
          ...(input.tax !== undefined ? { tax: input.tax } : {}),
          skip_tipping: input.skip_tipping ?? false,
          enable_customer_cancellation: input.enable_customer_cancellation ?? true,
        },
      },
      clientKey,
    );
  }

  /**
   * Reads the reader and refuses it when the processor reports it offline; a processor that cannot
   * be asked does not block the sale. createPayment skips it when the processor said the reader was
   * online within `readerStatusMaxAgeMs` (its answers to our reader requests, its reader events, the
   * registration): a reader said offline, or not heard of for longer, is read.
   */
  async #refuseOffline(reader: TerminalReadersTable): Promise<void> {
    const startedAt = this.clock.now();
    const seen = await this.processor.retrieveReader({ mode: reader.mode }, reader.processor_reader_id).catch(() => undefined);
    if (!seen) return;
    await this.readerActions.onPresence(reader, seen.status === 'offline' ? 'offline' : 'online', startedAt);
    if (seen.status === 'offline') throw conflict('reader_offline', 'The reader is offline: check its power and network, or take the payment by link');
  }

  async #terminalPayment(scope: Scope, paymentIntentId: string): Promise<TransactionsTable> {
    const row = await findScoped(this.store.db, 'transactions', scope, 'processor_payment_intent_id', paymentIntentId);
    if (!row) throw missing('No such payment: payment_intent_id takes the value create-payment returned', 'payment_intent_id');
    if (row.payment_method_type !== 'terminal') throw invalid('payment_intent_id', 'This payment was not created for a terminal (use POST /v1/terminal/create-payment)');
    return row;
  }

  /** Sends a pending terminal payment to a reader; the payment is attributed to that reader (rule 4). */
  async processPayment(scope: Scope, paymentIntentId: string, readerId: string): Promise<{ reader_id: string; status: 'in_progress' | 'succeeded' | 'failed'; action_type: 'process_payment_intent' }> {
    const reader = await this.readerByProcessorId(scope, readerId);
    const txn = await this.#terminalPayment(scope, paymentIntentId);
    if (txn.status !== 'pending' && txn.status !== 'failed') {
      throw conflict('transaction_not_processable', `This payment is ${txn.status}; only a pending payment can be sent to a reader`);
    }
    const options = parseTerminalOptions(txn.terminal_options);
    let result: ReaderSnapshot;
    const startedAt = this.clock.now();
    try {
      const lineItems = options?.line_items;
      if (lineItems) {
        await this.processor.setReaderDisplay(scope, reader.processor_reader_id, {
          currency: txn.currency,
          lineItems,
          ...(options.tax !== undefined ? { tax: options.tax } : {}),
          total: txn.amount,
        });
      }
      result = await this.processor.processPaymentIntent(scope, reader.processor_reader_id, paymentIntentId, {
        skipTipping: options?.skip_tipping ?? false,
        enableCustomerCancellation: options?.enable_customer_cancellation ?? true,
        // Tips are suggested on the amount before tax, as a server would at a till.
        ...(options?.tax ? { tipEligibleAmount: txn.amount - options.tax } : {}),
      });
    } catch (err) {
      if (processorErrorCode(err) === 'terminal_reader_offline') await this.readerActions.onPresence(reader, 'offline', startedAt);
      throw readerConflict(err);
    }
    await this.store.transaction((trx) => this.payments.update(trx, txn.id, () => ({ terminal_id: reader.id, reader_id: reader.processor_reader_id, location_id: reader.location_id }), this.clock.now()));
    await this.readerActions.onResponse(reader, result, startedAt);
    const status = result.action?.status;
    return {
      reader_id: reader.processor_reader_id,
      status: status === 'succeeded' ? 'succeeded' : status === 'failed' ? 'failed' : 'in_progress',
      action_type: 'process_payment_intent',
    };
  }

  /**
   * Test mode: a customer taps a test card on the reader (spec §4.7 rule 6). Answers once the
   * simulated authorisation is over, with the payment's outcome.
   */
  async simulatePayment(scope: Scope, readerId: string, options: { amountTip?: number; cardNumber?: string }) {
    if (scope.mode !== 'test') throw invalid(undefined, 'simulate-payment is only available with a test key (sk_test_…)', 'livemode_not_allowed');
    const reader = await this.readerByProcessorId(scope, readerId);
    let presented: ReaderSnapshot;
    const startedAt = this.clock.now();
    try {
      presented = await this.processor.presentPaymentMethod(scope, reader.processor_reader_id, {
        ...(options.amountTip ? { amountTip: options.amountTip } : {}),
        ...(options.cardNumber ? { cardNumber: options.cardNumber } : {}),
      });
    } catch (err) {
      if (processorErrorCode(err) === 'terminal_reader_invalid_state') {
        throw conflict('reader_idle', 'The reader is not waiting for a card: send a payment to it with process-payment first');
      }
      throw readerConflict(err);
    }
    const intentId = presented.action?.paymentIntentId;
    await this.readerActions.onResponse(reader, presented, startedAt, presented.action?.status === 'in_progress');
    // The outcome arrives as the processor's events: the reader's action, then the payment's.
    const settled = async (waitForPayment: boolean): Promise<{ action: string | null; failure: string | null; txn: TransactionsTable | undefined } | undefined> => {
      const state = await this.readerActions.stateOf(reader);
      const txn = typeof intentId === 'string' ? await findScoped(this.store.db, 'transactions', scope, 'processor_payment_intent_id', intentId) : undefined;
      const action = state?.action && state.action.payment_intent_id === intentId ? state.action : null;
      if (action?.status === 'in_progress') return undefined;
      // An approval or a decline moves the payment too (its own event); a cancel on the reader does not.
      const movesPayment = action?.status === 'succeeded' || (action?.status === 'failed' && action.failure_code !== 'customer_canceled' && action.failure_code !== 'payment_intent_canceled');
      if (waitForPayment && txn && txn.status === 'pending' && movesPayment) return undefined;
      return { action: action?.status ?? null, failure: action?.failure_code ?? null, txn };
    };
    // A processor that answers with the outcome at once has no events to wait for.
    let outcome =
      presented.action?.status === 'in_progress'
        ? await waitFor(
            this.store.notifications,
            [
              { topic: 'readers', merchantId: scope.merchantId, mode: scope.mode },
              { topic: 'events', merchantId: scope.merchantId, mode: scope.mode },
            ],
            () => settled(true),
            SIMULATE_WAIT_MS,
          )
        : await settled(false);
    if (!outcome) {
      // No event in time (lost, or held up): what the processor says now.
      await this.readerActions.refresh(scope.mode, reader.processor_reader_id);
      outcome = (await settled(false)) ?? { action: 'in_progress', failure: null, txn: undefined };
    }
    let txn = outcome.txn;
    if (txn && txn.status === 'pending' && outcome.action !== 'in_progress') txn = await this.transactions.sync(txn, scope.trace);
    const status: 'succeeded' | 'failed' | 'in_progress' = outcome.action === 'succeeded' ? 'succeeded' : outcome.action === 'failed' ? 'failed' : 'in_progress';
    return { reader_id: reader.processor_reader_id, status, transaction_id: txn?.id ?? null, failure_code: outcome.failure };
  }

  /** Clears the reader's screen only; the payment stays pending (spec §3, last row). */
  async cancelAction(scope: Scope, readerId: string): Promise<{ reader_id: string; status: 'idle'; canceled_payment_intent_id: string | null }> {
    const reader = await this.readerByProcessorId(scope, readerId);
    // Which payment was on the screen: the reader's action as its events left it, not a read.
    const intent = reader.action_status === 'in_progress' ? reader.action_payment_intent_id : null;
    const startedAt = this.clock.now();
    try {
      await this.processor.cancelReaderAction(scope, reader.processor_reader_id);
      await this.readerActions.onCanceled(reader, startedAt);
      return { reader_id: reader.processor_reader_id, status: 'idle', canceled_payment_intent_id: intent };
    } catch (err) {
      if (processorErrorCode(err) === 'terminal_reader_busy') throw authorizing();
      throw readerConflict(err);
    }
  }

  /** Cancels pending terminal payments older than the stale age (spec §3, service sweep). */
  async sweep(): Promise<number> {
    const cutoff = this.clock.now() - this.staleMs;
    const stale = await this.store.db
      .selectFrom('transactions')
      .select(['id', 'merchant_id', 'mode'])
      // Literals, as the partial index `transactions_terminal_pending` is written, so both databases use it.
      .where('payment_method_type', '=', sql.lit('terminal'))
      .where('status', '=', sql.lit('pending'))
      .where('created_at', '<', cutoff)
      .orderBy('created_at')
      .limit(SWEEP_BATCH)
      .execute();
    let canceled = 0;
    for (const row of stale) {
      try {
        await this.transactions.cancel({ merchantId: row.merchant_id, mode: row.mode }, row.id, 'abandoned');
        canceled += 1;
      } catch (err) {
        const code = err instanceof ApiError ? err.code : undefined;
        if (code === 'authorization_in_progress' || code === 'already_captured') continue;
        this.logger.warn({ err, transaction_id: row.id }, 'stale terminal payment could not be canceled; will retry');
      }
    }
    return canceled;
  }
}

/**
 * Resolves with `check()`'s first answer other than undefined: now, and after each of `notices`
 * (commits that changed what it looks at), one check at a time; undefined after `timeoutMs`.
 */
async function waitFor<T>(notifications: { subscribe(notice: Notice, listener: () => void): () => void }, notices: Notice[], check: () => Promise<T | undefined>, timeoutMs: number): Promise<T | undefined> {
  return new Promise<T | undefined>((resolve, reject) => {
    let done = false;
    let running = false;
    let again = false;
    const unsubscribes: (() => void)[] = [];
    const finish = (value: T | undefined, error?: unknown) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      for (const unsubscribe of unsubscribes) unsubscribe();
      if (error !== undefined) reject(error);
      else resolve(value);
    };
    const run = async (): Promise<void> => {
      if (done) return;
      if (running) {
        again = true;
        return;
      }
      running = true;
      try {
        do {
          again = false;
          const value = await check();
          if (value !== undefined) return finish(value);
        } while (again && !done);
      } catch (err) {
        finish(undefined, err);
      } finally {
        running = false;
      }
    };
    const timer = setTimeout(() => finish(undefined), timeoutMs);
    for (const notice of notices) unsubscribes.push(notifications.subscribe(notice, () => void run()));
    void run();
  });
}
