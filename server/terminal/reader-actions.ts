import type { Logger } from 'pino';
import type { ReaderStatePush } from '../../shared/agent-upstream.js';
import type { Clock } from '../../shared/time.js';
import { nextSeq } from '../db/counters.js';
import { notifyOnCommit } from '../db/notify.js';
import type { Mode, ReaderActionStatus, TerminalReadersTable } from '../db/schema.js';
import type { Store, Trx } from '../db/store.js';
import type { TerminalPort } from '../processor/port.js';
import type { ProcessorEvent, ReaderSnapshot } from '../processor/snapshots.js';
import { viewOf } from './reader-view.js';

/**
 * An in-progress action with no news for this long is read from the processor once
 * (reconciliation). Stripe delivers events within seconds, so a missing one is overdue long before
 * this; but a reader waiting for a card waits on a customer, who may take half a minute to find
 * one, and each read spends the account's shared request budget. 30 s finds a lost event while the
 * customer is still at the counter and costs at most two reads a minute per busy reader, none for an
 * idle one. `--reader-check-ms` sets it (tests use a second).
 */
export const DEFAULT_READER_CHECK_MS = 30_000;

/**
 * A processor event's `created` is in whole seconds, so an event may be up to a second older than
 * the moment it describes. Within this distance two facts about different payments cannot be
 * ordered by time and the reader is read instead.
 */
const SECOND_MS = 1_000;

/** Overdue actions read per reconciliation pass: bounded so one pass never holds the budget long. */
const CHECK_BATCH = 50;

type ActionState = Pick<
  TerminalReadersTable,
  | 'action_type'
  | 'action_status'
  | 'action_payment_intent_id'
  | 'action_previous_payment_intent_id'
  | 'action_card_presented'
  | 'action_failure_code'
  | 'action_failure_message'
  | 'action_processor_at'
>;

/** What one event or one read says the reader's action is. */
export interface ActionUpdate {
  type: string | null;
  /** null: the reader has no action. */
  status: ReaderActionStatus | null;
  paymentIntentId: string | null;
  cardPresented: boolean;
  failureCode: string | null;
  failureMessage: string | null;
  processorStatus?: 'online' | 'offline';
  /**
   * `event`: an event, at its `created` (epoch ms). `read`: the processor's answer to a request of
   * ours sent at `startedAt` (our clock): the state at some moment after that.
   */
  source: { kind: 'event'; at: number } | { kind: 'read'; startedAt: number };
}

export type Decision = 'apply' | 'ignore' | 'read';

/** How far along one action is: news about the same payment only moves it forward. */
function rank(status: ReaderActionStatus | null, cardPresented: boolean): number {
  if (status === null) return 0;
  if (status === 'in_progress') return cardPresented ? 2 : 1;
  return 3;
}

function sameState(stored: ActionState, next: ActionUpdate): boolean {
  return (
    stored.action_status === next.status &&
    stored.action_payment_intent_id === next.paymentIntentId &&
    (stored.action_card_presented === 1) === next.cardPresented &&
    stored.action_failure_code === next.failureCode &&
    stored.action_type === next.type
  );
}

/**
 * Whether `next` may replace what is stored. Events arrive late, twice and out of order; an old one
 * must never overwrite newer state:
 * - about the same payment, only a step forward counts (waiting → card presented → outcome), and
 *   not from an event more than a second older than what is stored (that is an earlier attempt of
 *   a payment sent to the reader again);
 * - about the payment the reader showed before the current one, an event is old: dropped;
 * - about another payment, an event clearly newer wins, one clearly older is dropped, and one within
 *   the same second is settled by reading the reader;
 * - a read of ours wins unless it would step the same payment back while newer news arrived during
 *   the request.
 */
export function decide(stored: ActionState & { action_updated_at: number | null }, next: ActionUpdate): Decision {
  if (sameState(stored, next)) return 'ignore';
  const samePayment = stored.action_payment_intent_id === next.paymentIntentId;
  const forward = rank(next.status, next.cardPresented) > rank(stored.action_status, stored.action_card_presented === 1);
  if (next.source.kind === 'read') {
    if (samePayment && !forward && stored.action_updated_at !== null && stored.action_updated_at >= next.source.startedAt) return 'ignore';
    return 'apply';
  }
  const at = next.source.at;
  const storedAt = stored.action_processor_at;
  if (stored.action_status === null || storedAt === null) return 'apply';
  if (samePayment) return forward && at >= storedAt - SECOND_MS ? 'apply' : 'ignore';
  if (next.paymentIntentId !== null && next.paymentIntentId === stored.action_previous_payment_intent_id) return 'ignore';
  if (at > storedAt + SECOND_MS) return 'apply';
  if (at < storedAt - SECOND_MS) return 'ignore';
  return 'read';
}

/** When what an update says was true: an event's `created`, or the moment our request was sent (the answer is later). */
function statusTimeOf(source: ActionUpdate['source']): number {
  return source.kind === 'event' ? source.at : source.startedAt;
}

/** Whether a word on the reader's status said at `at` is no older than the one kept (events arrive late and out of order). */
function notOlder(row: Pick<TerminalReadersTable, 'processor_status_at'>, at: number): boolean {
  return row.processor_status_at === null || at >= row.processor_status_at;
}

function intentIdOf(reader: ReaderSnapshot): string | null {
  return reader.action?.paymentIntentId ?? null;
}

/** A reader object (from an event or a request) as an update; `cardPresented` when known otherwise. */
export function updateFromReader(reader: ReaderSnapshot, source: ActionUpdate['source'], cardPresented: boolean): ActionUpdate {
  // A cart shown before a payment (set_reader_display) is not reader activity: no action.
  const action = reader.action?.type === 'process_payment_intent' ? reader.action : null;
  const status = action ? action.status : null;
  return {
    type: action?.type ?? null,
    status,
    paymentIntentId: intentIdOf(reader),
    // A payment that came with the action says for itself whether a card is being authorised.
    cardPresented: status === 'in_progress' && (cardPresented || action?.authorising === true),
    failureCode: action?.failureCode ?? null,
    failureMessage: action?.failureMessage ?? null,
    processorStatus: reader.status === 'online' ? 'online' : 'offline',
    source,
  };
}

/**
 * Each reader's action, kept from the processor's `terminal.reader.action_*` and `payment_intent.*`
 * events and from the answers to our own reader requests, in the event's transaction. A change
 * takes the scope's next `reader_actions` seq and sends the `readers` notice, which wakes whoever
 * pushes reader views to that merchant's agents (reader-view.ts), on every instance. Nothing polls the processor:
 * an in-progress action with no news for `checkMs` is read once (see DEFAULT_READER_CHECK_MS).
 */
export class ReaderActions {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly processor: TerminalPort,
    private readonly logger: Logger,
    readonly checkMs: number = DEFAULT_READER_CHECK_MS,
  ) {}

  /** Applies one processor event; events that say nothing about a reader's action are skipped. */
  async onEvent(event: ProcessorEvent, mode: Mode): Promise<void> {
    const at = event.createdAt;
    const subject = event.subject;
    if (event.type.startsWith('terminal.reader.action_')) {
      if (subject.kind !== 'reader') return;
      const reader = subject.reader;
      // An event about a cart shown before the payment says nothing about the payment's action.
      if (reader.action && reader.action.type !== 'process_payment_intent') return;
      // `action_updated` on a payment in progress: the reader read a card and the intent is being authorised.
      const update = updateFromReader(reader, { kind: 'event', at }, event.type === 'terminal.reader.action_updated');
      await this.#applyTo({ mode, processorReaderId: reader.id }, update);
      return;
    }
    if (!event.type.startsWith('payment_intent.') || subject.kind !== 'payment') return;
    const intent = subject.payment;
    let status: ReaderActionStatus;
    let cardPresented = false;
    if (event.type === 'payment_intent.processing') {
      status = 'in_progress';
      cardPresented = true;
    } else if (event.type === 'payment_intent.succeeded') {
      status = 'succeeded';
    } else if (event.type === 'payment_intent.canceled') {
      // The processor drops a canceled payment's action from the reader; the screen is cleared.
      status = 'canceled';
    } else {
      return;
    }
    const readers = await this.store.db
      .selectFrom('terminal_readers')
      .select('processor_reader_id')
      .where('action_payment_intent_id', '=', intent.id)
      .where('mode', '=', mode)
      .execute();
    for (const { processor_reader_id } of readers) {
      await this.#applyTo(
        { mode, processorReaderId: processor_reader_id },
        { type: 'process_payment_intent', status, paymentIntentId: intent.id, cardPresented, failureCode: null, failureMessage: null, source: { kind: 'event', at } },
        (row) => row.action_payment_intent_id === intent.id && row.action_status === 'in_progress',
      );
    }
  }

  /** The processor's answer to a reader request of ours (process, present, cancel), sent at `startedAt`. */
  async onResponse(row: TerminalReadersTable, reader: ReaderSnapshot | null, startedAt: number, cardPresented = false): Promise<void> {
    const update: ActionUpdate = reader
      ? updateFromReader(reader, { kind: 'read', startedAt }, cardPresented)
      : { type: null, status: null, paymentIntentId: null, cardPresented: false, failureCode: null, failureMessage: null, source: { kind: 'read', startedAt } };
    await this.#applyTo({ mode: row.mode, processorReaderId: row.processor_reader_id }, update);
  }

  /** We canceled the reader's action (cancel-action, or a payment canceled after its reader reset). */
  async onCanceled(row: TerminalReadersTable, startedAt: number): Promise<void> {
    await this.#applyTo(
      { mode: row.mode, processorReaderId: row.processor_reader_id },
      { type: 'process_payment_intent', status: 'canceled', paymentIntentId: null, cardPresented: false, failureCode: null, failureMessage: null, source: { kind: 'read', startedAt } },
      (stored) => stored.action_status === 'in_progress',
      (stored) => stored.action_payment_intent_id,
    );
  }

  /**
   * The processor said whether the reader is reachable (a read sent at `at`, or a request it
   * refused as offline). Stripe sends no event when a reader drops off, so this is how the
   * counter's header learns it: a change takes the next seq and agents are pushed the reader.
   */
  async onPresence(row: TerminalReadersTable, status: 'online' | 'offline', at: number): Promise<void> {
    await this.store.transaction(async (trx) => {
      let query = trx.selectFrom('terminal_readers').selectAll().where('id', '=', row.id);
      if (this.store.dialect === 'postgres') query = query.forUpdate();
      const current = await query.executeTakeFirst();
      if (current) await this.#statusSeen(trx, current, status, at);
    });
  }

  /**
   * Keeps what the processor said of the reader's status, and when, unless it already told us
   * something later (events arrive late and out of order). A change of status takes the next seq
   * and agents are pushed the reader; the same status said again only moves its time on.
   */
  async #statusSeen(trx: Trx, row: TerminalReadersTable, status: 'online' | 'offline', at: number): Promise<void> {
    if (!notOlder(row, at)) return;
    if (row.processor_status === status) {
      if (row.processor_status_at !== at) await trx.updateTable('terminal_readers').set({ processor_status_at: at }).where('id', '=', row.id).execute();
      return;
    }
    const seq = await nextSeq(trx, row.merchant_id, row.mode, 'reader_actions');
    await trx.updateTable('terminal_readers').set({ processor_status: status, processor_status_at: at, action_seq: seq }).where('id', '=', row.id).execute();
    notifyOnCommit(trx, { topic: 'readers', merchantId: row.merchant_id, mode: row.mode });
  }

  /**
   * Whether the processor said the reader was online recently enough to be believed without asking
   * again: within `withinMs` of now, and nothing it said since contradicts it.
   */
  knownOnline(row: TerminalReadersTable, withinMs: number): boolean {
    return row.processor_status === 'online' && row.processor_status_at !== null && this.clock.now() - row.processor_status_at <= withinMs;
  }

  /** A reader was registered: its first seq, so agents following the merchant learn of it. */
  async registered(trx: Trx, row: TerminalReadersTable): Promise<number> {
    const seq = await nextSeq(trx, row.merchant_id, row.mode, 'reader_actions');
    notifyOnCommit(trx, { topic: 'readers', merchantId: row.merchant_id, mode: row.mode });
    return seq;
  }

  async #applyTo(
    which: { mode: Mode; processorReaderId: string },
    update: ActionUpdate,
    only?: (row: TerminalReadersTable) => boolean,
    keepIntent?: (row: TerminalReadersTable) => string | null,
  ): Promise<void> {
    const decision = await this.store.transaction(async (trx): Promise<Decision> => {
      let query = trx.selectFrom('terminal_readers').selectAll().where('processor_reader_id', '=', which.processorReaderId).where('mode', '=', which.mode);
      // Two instances handling two events of one reader at once: the second waits for the first's commit.
      if (this.store.dialect === 'postgres') query = query.forUpdate();
      const row = await query.executeTakeFirst();
      if (!row || (only && !only(row))) return 'ignore';
      const next = keepIntent ? { ...update, paymentIntentId: keepIntent(row) } : update;
      const decision = decide(row, next);
      if (decision === 'apply') await this.#write(trx, row, next);
      // What it says of the reader's status counts even when its action is old news.
      else if (next.processorStatus) await this.#statusSeen(trx, row, next.processorStatus, statusTimeOf(next.source));
      return decision;
    });
    if (decision === 'read') await this.refresh(which.mode, which.processorReaderId);
  }

  async #write(trx: Trx, row: TerminalReadersTable, next: ActionUpdate): Promise<void> {
    const now = this.clock.now();
    const seq = await nextSeq(trx, row.merchant_id, row.mode, 'reader_actions');
    const checkAt = next.status === 'in_progress' ? now + this.checkMs : null;
    const said = statusTimeOf(next.source);
    const status = next.processorStatus && notOlder(row, said) ? { processor_status: next.processorStatus, processor_status_at: said } : {};
    await trx
      .updateTable('terminal_readers')
      .set({
        action_seq: seq,
        action_type: next.type,
        action_status: next.status,
        action_payment_intent_id: next.paymentIntentId,
        action_previous_payment_intent_id: next.paymentIntentId === row.action_payment_intent_id ? row.action_previous_payment_intent_id : row.action_payment_intent_id,
        action_card_presented: next.cardPresented ? 1 : 0,
        action_failure_code: next.failureCode,
        action_failure_message: next.failureMessage,
        // A read's moment on the processor's clock is taken as ours: Stripe's clock and a server's NTP clock agree far within a second.
        action_processor_at: next.source.kind === 'event' ? next.source.at : now,
        action_updated_at: now,
        action_check_at: checkAt,
        ...status,
      })
      .where('id', '=', row.id)
      .execute();
    notifyOnCommit(trx, { topic: 'readers', merchantId: row.merchant_id, mode: row.mode });
    // Deadlines that only moved later need no timer's attention (as for presence).
    if (checkAt !== null && (row.action_check_at === null || checkAt < row.action_check_at)) notifyOnCommit(trx, { topic: 'reader_checks' });
  }

  /** Reads the reader from the processor (through the budget) and applies what it says now. */
  async refresh(mode: Mode, processorReaderId: string): Promise<void> {
    const row = await this.store.db.selectFrom('terminal_readers').selectAll().where('processor_reader_id', '=', processorReaderId).where('mode', '=', mode).executeTakeFirst();
    if (!row) return;
    const startedAt = this.clock.now();
    const reader = await this.processor.retrieveReader({ mode }, processorReaderId);
    // The reader object does not say whether a card was read; for the same payment, what we knew stands.
    const intent = reader ? intentIdOf(reader) : null;
    const presented = reader?.action?.status === 'in_progress' && intent === row.action_payment_intent_id && row.action_card_presented === 1;
    await this.onResponse(row, reader, startedAt, presented);
  }

  /**
   * Reconciliation: reads each reader whose in-progress action had no news for `checkMs`, once per
   * deadline. Several instances may run this at the same deadline; the conditional update that
   * moves a reader's deadline on lets exactly one of them read it.
   */
  async reconcile(): Promise<number> {
    const now = this.clock.now();
    const due = await this.store.db
      .selectFrom('terminal_readers')
      .select(['id', 'mode', 'processor_reader_id', 'action_check_at'])
      .where('action_check_at', '<=', now)
      .orderBy('action_check_at')
      .limit(CHECK_BATCH)
      .execute();
    let read = 0;
    for (const row of due) {
      const claimed = await this.store.db
        .updateTable('terminal_readers')
        .set({ action_check_at: now + this.checkMs })
        .where('id', '=', row.id)
        .where('action_check_at', '=', row.action_check_at)
        .executeTakeFirst();
      if (Number(claimed.numUpdatedRows) !== 1) continue;
      try {
        await this.refresh(row.mode, row.processor_reader_id);
        read += 1;
      } catch (err) {
        this.logger.warn({ err, reader: row.processor_reader_id }, 'reconciliation read of a reader failed; trying again at its next deadline');
      }
    }
    if (read) this.logger.info({ read }, 'reader actions with an overdue event read from the processor');
    return due.length === CHECK_BATCH ? read + (await this.reconcile()) : read;
  }

  /** The earliest reconciliation deadline (epoch ms), or undefined when no action is in progress. */
  async nextCheck(): Promise<number | undefined> {
    const row = await this.store.db
      .selectFrom('terminal_readers')
      .select((eb) => eb.fn.min('action_check_at').as('at'))
      .executeTakeFirst();
    return row?.at === null || row?.at === undefined ? undefined : Number(row.at);
  }

  /** One reader's state now, with its payment (simulate-payment waits on it). */
  stateOf(row: TerminalReadersTable): Promise<ReaderStatePush | undefined> {
    return viewOf(this.store.db, row);
  }
}
