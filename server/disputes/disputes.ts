import { findScoped } from '../db/prepared.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { isUuid, newIdentity } from '../../shared/ids.js';
import { toIsoOrNull, toIsoTimestamp, type Clock } from '../../shared/time.js';
import type { Scope } from '../accounts/scope.js';
import type { DisputesTable, Mode, TransactionsTable } from '../db/schema.js';
import type { Executor, Store, Trx } from '../db/store.js';
import { conflict, notFound } from '../errors.js';
import { type Page, type PageRequest, offsetPage, toPage } from '../pagination.js';
import type { PaymentState } from '../payments/payment-state.js';
import { findTransactionRow } from '../payments/transactions.js';
import { fromProcessorError } from '../processor/errors.js';
import { type DisputesPort, processorIdempotencyKey } from '../processor/port.js';
import type { DisputeSnapshot } from '../processor/snapshots.js';
import { type Dispute, EVIDENCE_FIELDS, type SubmitEvidenceInput } from '../../shared/contract/disputes.js';
import { type EventType, recordEvent } from '../webhooks/outbox.js';
import { awaitsResponse, disputeStatusOf, isClosed } from './status.js';

export function presentDispute(row: DisputesTable): Dispute {
  return {
    id: row.id,
    object: 'dispute',
    reference: row.reference,
    transaction_id: row.transaction_id,
    amount: row.amount,
    currency: row.currency,
    reason: row.reason,
    status: row.status,
    evidence: JSON.parse(row.evidence) as Record<string, string>,
    evidence_submission_count: row.evidence_submission_count,
    evidence_due_by: toIsoOrNull(row.evidence_due_by),
    funds_withdrawn_at: toIsoOrNull(row.funds_withdrawn_at),
    funds_reinstated_at: toIsoOrNull(row.funds_reinstated_at),
    is_test: row.mode === 'test',
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
    closed_at: toIsoOrNull(row.closed_at),
  };
}

/** What the processor says about a dispute now, in our terms. */
interface DisputeState {
  status: DisputesTable['status'];
  amount: number;
  currency: string;
  reason: string;
  evidence: Record<string, string>;
  submissions: number;
  dueBy: number | null;
  withdrawn: boolean;
  reinstated: boolean;
}

/**
 * Funds moved as the processor says, or as the event being applied says: an event naming the move
 * is news of it even when the dispute read back does not show it yet.
 */
function stateOf(dispute: DisputeSnapshot, hint: string | undefined): DisputeState {
  const evidence: Record<string, string> = {};
  for (const field of EVIDENCE_FIELDS) {
    const value = dispute.evidence[field];
    if (value) evidence[field] = value;
  }
  return {
    status: disputeStatusOf(dispute.status),
    amount: dispute.amount,
    currency: dispute.currency,
    reason: dispute.reason,
    evidence,
    submissions: dispute.submissionCount,
    dueBy: dispute.dueBy,
    withdrawn: hint === 'charge.dispute.funds_withdrawn' || dispute.fundsWithdrawn,
    reinstated: hint === 'charge.dispute.funds_reinstated' || dispute.fundsReinstated,
  };
}

function intentOf(dispute: DisputeSnapshot): string | null {
  return dispute.paymentIntentId;
}

/** Open disputes re-checked per reconciler pass when no event came: bounded like the payments' poll. */
const POLL_BATCH = 50;
/**
 * An open dispute is re-read at most this often without an event: disputes move over days (the
 * network's answer takes weeks), so a quarter hour loses nothing and costs little.
 */
const POLL_INTERVAL_MS = 15 * 60 * 1000;

/**
 * Disputes (docs/payments.md). They are opened by cardholders, so they arrive as processor events
 * (`charge.dispute.*`, re-read from the processor like every event); the merchant answers with
 * evidence or accepts. Every change writes its events to the outbox, and the payment's
 * `disputed_at` and dispute fields, in the same transaction.
 */
export class DisputeService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly processor: DisputesPort,
    private readonly payments: PaymentState,
    private readonly logger: Logger,
  ) {}

  async list(scope: Scope, request: PageRequest, filter: { transactionId?: string | undefined; status?: DisputesTable['status'] | undefined }): Promise<Page<Dispute>> {
    let transactionId: string | undefined;
    if (filter.transactionId !== undefined) {
      const txn = await findTransactionRow(this.store.db, scope, filter.transactionId);
      // A filter naming no payment of this scope matches nothing, as Stripe's list filters do.
      if (!txn) return toPage([], 0, request);
      transactionId = txn.id;
    }
    const base = this.store.db
      .selectFrom('disputes')
      .where('merchant_id', '=', scope.merchantId)
      .where('mode', '=', scope.mode)
      .$if(transactionId !== undefined, (q) => q.where('transaction_id', '=', transactionId as string))
      .$if(filter.status !== undefined, (q) => q.where('status', '=', filter.status as DisputesTable['status']));
    return offsetPage(base, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id'), request, presentDispute);
  }

  async get(scope: Scope, idOrReference: string): Promise<Dispute> {
    return presentDispute(await this.#row(this.store.db, scope, idOrReference));
  }

  /** Stages evidence, or submits it (`submit: true`); the processor's answer is applied at once. */
  async submitEvidence(scope: Scope, idOrReference: string, input: SubmitEvidenceInput): Promise<Dispute> {
    const row = await this.#row(this.store.db, scope, idOrReference);
    this.#assertAwaitingResponse(row);
    const evidence: Record<string, string> = {};
    for (const field of EVIDENCE_FIELDS) {
      const value = input[field];
      if (value !== undefined) evidence[field] = value;
    }
    let updated: DisputeSnapshot;
    try {
      // A fresh key per request: the SDK's retries reuse it, while staging the same text again
      // later (after other evidence replaced it) must apply, not replay.
      const key = processorIdempotencyKey(scope.merchantId, scope.mode, row.id, 'dispute_evidence', randomUUID());
      updated = await this.processor.updateDispute(scope, row.processor_dispute_id, { evidence, submit: input.submit === true }, key);
    } catch (err) {
      throw fromProcessorError(err);
    }
    return presentDispute(await this.#applyKnown(row.id, updated, undefined));
  }

  /** Accepts the dispute: the merchant concedes it (lost; an inquiry is closed). Safe to repeat. */
  async accept(scope: Scope, idOrReference: string): Promise<Dispute> {
    const row = await this.#row(this.store.db, scope, idOrReference);
    if (row.status === 'lost' || row.status === 'warning_closed') return presentDispute(row);
    this.#assertAwaitingResponse(row);
    let closed: DisputeSnapshot;
    try {
      closed = await this.processor.closeDispute(scope, row.processor_dispute_id, processorIdempotencyKey(scope.merchantId, scope.mode, row.id, 'dispute_close'));
    } catch (err) {
      throw fromProcessorError(err);
    }
    return presentDispute(await this.#applyKnown(row.id, closed, undefined));
  }

  /** A processor event about a dispute: re-read it and apply what it says now. */
  async onDisputeEvent(disputeId: string, mode: Mode, eventType: string): Promise<void> {
    const dispute = await this.processor.retrieveDispute({ mode }, disputeId);
    await this.onProcessorDispute(dispute, mode, eventType);
  }

  /**
   * Applies a dispute as the processor has it: the first news of it records it against its
   * payment, later news moves it on. A dispute of a payment we do not know is left alone.
   */
  async onProcessorDispute(dispute: DisputeSnapshot, mode: Mode, eventType?: string): Promise<DisputesTable | undefined> {
    const intent = intentOf(dispute);
    return this.store.transaction(async (trx) => {
      const existing = await this.#byProcessorId(trx, dispute.id);
      if (existing) return this.#apply(trx, existing, stateOf(dispute, eventType));
      const txn = intent ? await trx.selectFrom('transactions').selectAll().where('processor_payment_intent_id', '=', intent).where('mode', '=', mode).executeTakeFirst() : undefined;
      if (!txn) {
        this.logger.debug({ dispute: dispute.id, intent }, 'processor dispute of a payment we do not know');
        return undefined;
      }
      return this.#open(trx, txn, dispute, stateOf(dispute, eventType));
    });
  }

  /** Polling fallback: open disputes no event has told us about for a while are re-read. */
  async pollOpen(): Promise<number> {
    const now = this.clock.now();
    const rows = await this.store.db
      .selectFrom('disputes')
      .select(['processor_dispute_id', 'mode'])
      .where('closed_at', 'is', null)
      .where('synced_at', '<', now - POLL_INTERVAL_MS)
      .orderBy('synced_at')
      .limit(POLL_BATCH)
      .execute();
    for (const row of rows) {
      try {
        await this.onDisputeEvent(row.processor_dispute_id, row.mode, 'poll');
      } catch (err) {
        this.logger.warn({ err, dispute: row.processor_dispute_id }, 'polling a dispute failed');
      }
    }
    return rows.length;
  }

  #assertAwaitingResponse(row: DisputesTable): void {
    if (isClosed(row.status)) throw conflict('dispute_closed', `The dispute is closed (${row.status}): it takes no more evidence and cannot be accepted`);
    if (!awaitsResponse(row.status)) throw conflict('dispute_under_review', `The dispute's evidence was already submitted and is under review (${row.status})`);
  }

  async #applyKnown(id: string, dispute: DisputeSnapshot, hint: string | undefined): Promise<DisputesTable> {
    return this.store.transaction(async (trx) => {
      const row = await this.#byId(trx, id);
      return this.#apply(trx, row, stateOf(dispute, hint));
    });
  }

  /** The first news of a dispute: its row, the payment's dispute fields, and its opening events. */
  async #open(trx: Trx, txn: TransactionsTable, dispute: DisputeSnapshot, snap: DisputeState): Promise<DisputesTable> {
    const now = this.clock.now();
    const { id, reference } = newIdentity('dispute');
    const opened: DisputesTable = {
      id,
      reference,
      merchant_id: txn.merchant_id,
      mode: txn.mode,
      transaction_id: txn.id,
      processor_dispute_id: dispute.id,
      amount: snap.amount,
      currency: snap.currency,
      reason: snap.reason,
      // Opened as it first was; #apply below moves it to where it is now, with its events.
      status: snap.status.startsWith('warning_') ? 'warning_needs_response' : 'needs_response',
      evidence: '{}',
      metadata: txn.metadata,
      evidence_submission_count: 0,
      evidence_due_by: snap.dueBy,
      funds_withdrawn_at: null,
      funds_reinstated_at: null,
      // When we first heard of it, moments after the processor opened it: the processor's own
      // time is in whole seconds, which would leave disputes opened in one second in no order.
      created_at: now,
      updated_at: now,
      closed_at: null,
      synced_at: now,
    };
    const inserted = await trx
      .insertInto('disputes')
      .values(opened)
      .onConflict((oc) => oc.column('processor_dispute_id').doNothing())
      .executeTakeFirst();
    // Another writer recorded it between our read and our insert: move that one on instead.
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) !== 1) return this.#apply(trx, await this.#byProcessorIdOrThrow(trx, dispute.id), snap);
    await this.#event(trx, opened, 'dispute.created', now);
    return this.#apply(trx, opened, snap);
  }

  /**
   * Moves a dispute to what the processor says, writing each event the change implies, in order:
   * funds withdrawn, updated or closed, funds reinstated. A closed dispute never reopens, so a
   * late or stale read changes nothing.
   */
  async #apply(trx: Trx, row: DisputesTable, snap: DisputeState): Promise<DisputesTable> {
    const now = this.clock.now();
    const closed = isClosed(row.status);
    const status = closed ? row.status : snap.status;
    const evidence = JSON.stringify(snap.evidence);
    const next: DisputesTable = {
      ...row,
      status,
      amount: snap.amount,
      reason: snap.reason,
      evidence: closed ? row.evidence : evidence,
      evidence_submission_count: Math.max(row.evidence_submission_count, snap.submissions),
      evidence_due_by: snap.dueBy ?? row.evidence_due_by,
      funds_withdrawn_at: row.funds_withdrawn_at ?? (snap.withdrawn ? now : null),
      funds_reinstated_at: row.funds_reinstated_at ?? (snap.reinstated ? now : null),
      closed_at: row.closed_at ?? (isClosed(status) ? now : null),
      synced_at: now,
    };
    const changed = (['status', 'amount', 'reason', 'evidence', 'evidence_submission_count', 'evidence_due_by'] as const).some((k) => next[k] !== row[k]);
    const withdrawn = row.funds_withdrawn_at === null && next.funds_withdrawn_at !== null;
    const reinstated = row.funds_reinstated_at === null && next.funds_reinstated_at !== null;
    if (changed || withdrawn || reinstated) next.updated_at = now;
    const { id: _id, ...patch } = next;
    await trx.updateTable('disputes').set(patch).where('id', '=', row.id).execute();
    if (withdrawn) await this.#event(trx, next, 'dispute.funds_withdrawn', now);
    if (changed) await this.#event(trx, next, next.closed_at !== null && row.closed_at === null ? 'dispute.closed' : 'dispute.updated', now);
    if (reinstated) await this.#event(trx, next, 'dispute.funds_reinstated', now);
    await this.payments.update(
      trx,
      row.transaction_id,
      (txn) => (txn.dispute_id === next.id && txn.dispute_status === next.status && txn.disputed_at !== null ? null : { dispute_id: next.id, dispute_status: next.status, disputed_at: txn.disputed_at ?? now }),
      now,
    );
    return next;
  }

  #event(trx: Trx, row: DisputesTable, type: EventType, now: number): Promise<string> {
    return recordEvent(trx, { merchantId: row.merchant_id, mode: row.mode }, type, row.id, presentDispute(row), now);
  }

  async #row(db: Executor, scope: Scope, idOrReference: string): Promise<DisputesTable> {
    const row = await findScoped(db, 'disputes', scope, isUuid(idOrReference) ? 'id' : 'reference', idOrReference);
    if (!row) throw notFound('id', 'dispute');
    return row;
  }

  /** Locked for the rest of the transaction on PostgreSQL (SQLite's write lock covers the whole unit). */
  #byId(trx: Trx, id: string): Promise<DisputesTable> {
    return trx
      .selectFrom('disputes')
      .selectAll()
      .where('id', '=', id)
      .$if(this.store.dialect === 'postgres', (q) => q.forUpdate())
      .executeTakeFirstOrThrow();
  }

  #byProcessorId(trx: Trx, processorId: string): Promise<DisputesTable | undefined> {
    return trx
      .selectFrom('disputes')
      .selectAll()
      .where('processor_dispute_id', '=', processorId)
      .$if(this.store.dialect === 'postgres', (q) => q.forUpdate())
      .executeTakeFirst();
  }

  async #byProcessorIdOrThrow(trx: Trx, processorId: string): Promise<DisputesTable> {
    const row = await this.#byProcessorId(trx, processorId);
    if (!row) throw new Error(`dispute ${processorId} vanished after a conflicting insert`);
    return row;
  }
}
