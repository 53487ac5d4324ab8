import type { CardReceipt, PaymentSnapshot } from '../processor/snapshots.js';
import type { TransactionStatus, TransactionsTable } from '../db/schema.js';
import { Prepared, updateRows } from '../db/prepared.js';
import type { Trx } from '../db/store.js';
import { moveCount } from '../db/counters.js';
import { type EventType, recordEvent } from '../webhooks/outbox.js';
import { presentTransaction } from './present.js';
import type { FieldCipher } from '../db/encryption.js';

/**
 * The one owner of payment state (spec §3). Outcomes come only from the processor: a
 * PaymentIntent snapshot (from an event or a poll) is mapped to the status it implies, and the
 * move is made only if the state machine allows it, so late, duplicated or reordered news can
 * never move a payment backwards.
 */

/** The transaction columns a card receipt reads (migration 0020). */
export type CardReceiptColumns = Pick<
  TransactionsTable,
  | 'card_read_method'
  | 'card_application_name'
  | 'card_aid'
  | 'card_authorization_code'
  | 'card_response_code'
  | 'card_account_type'
  | 'card_verification_method'
  | 'processor_location_id'
>;

export const NO_CARD_RECEIPT: CardReceiptColumns = {
  card_read_method: null,
  card_application_name: null,
  card_aid: null,
  card_authorization_code: null,
  card_response_code: null,
  card_account_type: null,
  card_verification_method: null,
  processor_location_id: null,
};

/** What a receipt prints of the card, as the transaction's columns. */
export function receiptColumns(receipt: CardReceipt): CardReceiptColumns {
  return {
    card_read_method: receipt.readMethod,
    card_application_name: receipt.applicationName,
    card_aid: receipt.aid,
    card_authorization_code: receipt.authorizationCode,
    card_response_code: receipt.responseCode,
    card_account_type: receipt.accountType,
    card_verification_method: receipt.verificationMethod,
    processor_location_id: receipt.location,
  };
}

/** The status a processor snapshot implies for our transaction. */
export function impliedStatus(snapshot: Pick<PaymentSnapshot, 'status' | 'failureCode'>): TransactionStatus {
  switch (snapshot.status) {
    case 'succeeded':
      return 'succeeded';
    case 'requires_capture':
      return 'requires_capture';
    case 'canceled':
      return 'canceled';
    case 'requires_payment_method':
      return snapshot.failureCode ? 'failed' : 'pending';
    default:
      return 'pending';
  }
}

/**
 * Allowed moves. `failed → succeeded` exists because a declined PaymentIntent can still be paid by
 * a second confirmation with the same client_secret: money received is never ignored. Refund
 * moves are made by the refund service, not by processor snapshots.
 */
const ALLOWED: Record<TransactionStatus, readonly TransactionStatus[]> = {
  pending: ['requires_capture', 'succeeded', 'failed', 'canceled'],
  requires_capture: ['succeeded', 'canceled', 'failed'],
  failed: ['requires_capture', 'succeeded', 'canceled'],
  succeeded: ['partially_refunded', 'refunded'],
  partially_refunded: ['refunded'],
  refunded: [],
  canceled: [],
};

export function canMove(from: TransactionStatus, to: TransactionStatus): boolean {
  return ALLOWED[from].includes(to);
}

const EVENT_FOR: Partial<Record<TransactionStatus, EventType>> = {
  requires_capture: 'payment.authorized',
  succeeded: 'payment.succeeded',
  failed: 'payment.failed',
  canceled: 'payment.canceled',
  refunded: 'payment.refunded',
  partially_refunded: 'payment.partially_refunded',
};

/**
 * Told of every status move inside the transaction that makes it, so what follows from a move
 * (its event, a checkout session completing, a counter learning its payment's outcome) commits or
 * rolls back with it.
 */
export type PaymentMoveListener = (trx: Trx, moved: TransactionsTable, now: number) => Promise<void>;

/** The outbox listener: every move to a status with an event records that event (spec §6), sealed when it names a receipt email. */
export function paymentEventRecorder(cipher: FieldCipher): PaymentMoveListener {
  return async (trx, moved, now) => {
    const type = EVENT_FOR[moved.status];
    if (type) await recordEvent(trx, { merchantId: moved.merchant_id, mode: moved.mode }, type, moved.id, presentTransaction(moved, cipher), now, { seal: moved.receipt_email === null ? undefined : cipher });
  };
}

export const transactionById = new Prepared<{ id: string }, TransactionsTable>((db, arg) => db.selectFrom('transactions').selectAll().where('id', '=', arg('id')));

/** Writes payment moves; its listeners are listed once, by the composition root (server/services.ts). */
export class PaymentState {
  constructor(private readonly listeners: readonly PaymentMoveListener[]) {}

  /**
   * Writes a move: the row (guarded on its previous `updated_at`, so a concurrent writer makes this
   * one fail rather than be overwritten), the per-status counters, and the listeners' work, in one
   * transaction. Returns the new row, or null if the row changed underneath.
   */
  async write(trx: Trx, row: TransactionsTable, patch: Partial<TransactionsTable>, now: number): Promise<TransactionsTable | null> {
    // Strictly increasing per row even within one millisecond: it doubles as the row's version.
    const updatedAt = Math.max(now, row.updated_at + 1);
    const next: TransactionsTable = { ...row, ...patch, updated_at: updatedAt };
    const written = await updateRows(trx, 'transactions', { ...patch, updated_at: updatedAt }, { id: row.id, updated_at: row.updated_at });
    if (written !== 1) return null;
    if (next.status !== row.status) {
      await moveCount(trx, row.merchant_id, row.mode, `transactions:${row.status}`, `transactions:${next.status}`);
      for (const listener of this.listeners) await listener(trx, next, now);
    }
    return next;
  }

  /**
   * Reads a transaction and writes the patch `patchOf` derives from it, again and again until the
   * write lands: another writer may move the row between our read and our write (on PostgreSQL;
   * SQLite's write lock already serialises them). `patchOf` returning null means nothing to do.
   * `seen`: the row as the caller read it before this transaction, tried first instead of a read.
   * Every write to a transaction goes through `write` and moves `updated_at`, so the guarded write
   * lands only if the row is still that version; otherwise, or if it asks for nothing, it is read.
   */
  async update(trx: Trx, id: string, patchOf: (row: TransactionsTable) => Partial<TransactionsTable> | null, now: number, seen?: TransactionsTable): Promise<TransactionsTable> {
    let hint = seen;
    for (;;) {
      const row = hint ?? (await transactionById.first(trx, { id }));
      const fromHint = hint !== undefined;
      hint = undefined;
      if (!row) throw new Error(`transaction ${id} is missing`);
      const patch = patchOf(row);
      if (!patch) {
        if (fromHint) continue;
        return row;
      }
      const written = await this.write(trx, row, patch, now);
      if (written) return written;
    }
  }
}

/** The patch that brings a row in line with a processor snapshot, or null when nothing changes. */
export function patchFromSnapshot(row: TransactionsTable, snapshot: PaymentSnapshot, now: number): Partial<TransactionsTable> | null {
  const target = impliedStatus(snapshot);
  const patch: Partial<TransactionsTable> = {};
  const moving = target !== row.status && canMove(row.status, target);
  if (moving) patch.status = target;
  const status = moving ? target : row.status;
  if (moving && target === 'succeeded') {
    patch.captured_at = now;
    patch.amount_captured = snapshot.amountReceived;
    patch.amount = snapshot.amount;
    patch.tip_amount = snapshot.tip;
    patch.failure_code = null;
    patch.decline_code = null;
    patch.failure_message = null;
  }
  if (moving && target === 'failed') {
    patch.failed_at = now;
  }
  if (moving && target === 'canceled') {
    patch.canceled_at = now;
    if (!row.cancellation_reason && snapshot.cancellationReason) patch.cancellation_reason = snapshot.cancellationReason;
  }
  if (status === 'failed' && (snapshot.failureCode !== row.failure_code || snapshot.declineCode !== row.decline_code || snapshot.failureMessage !== row.failure_message) && snapshot.failureCode) {
    patch.failure_code = snapshot.failureCode;
    patch.decline_code = snapshot.declineCode;
    patch.failure_message = snapshot.failureMessage;
  }
  // Once paid, the card that paid is settled: an older snapshot read before a newer one (say, of a
  // declined first card) must not overwrite it.
  const paid = ['succeeded', 'partially_refunded', 'refunded'].includes(row.status);
  if (!paid || moving) {
    const card = snapshot.card;
    if (card?.brand && card.brand !== row.card_brand) patch.card_brand = card.brand;
    if (card?.last4 && card.last4 !== row.card_last_four) patch.card_last_four = card.last4;
  }
  // The receipt's card lines are those of the charge that paid, taken once when the payment succeeds.
  if (moving && target === 'succeeded') {
    for (const [column, value] of Object.entries(receiptColumns(snapshot.receipt)) as [keyof CardReceiptColumns, string | null][]) {
      if (value !== null && value !== row[column]) patch[column] = value;
    }
  }
  return Object.keys(patch).length === 0 ? null : patch;
}
