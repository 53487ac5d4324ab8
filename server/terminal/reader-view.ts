import type { ReaderActivity, ReaderPayment, ReaderPaymentOutcome } from '../../shared/agent-protocol.js';
import type { ReaderStatePush } from '../../shared/agent-upstream.js';
import type { ReaderSchema } from '../../shared/contract/terminal.js';
import type { z } from '../../shared/contract/zod.js';
import { toIsoOrNull, toIsoTimestamp } from '../../shared/time.js';
import type { Scope } from '../accounts/scope.js';
import { followNotices } from '../db/notify.js';
import type { TerminalReadersTable, TransactionStatus } from '../db/schema.js';
import type { Executor, Store } from '../db/store.js';
import { shownCancelReason } from '../payments/present.js';
import { latestEventSeq } from '../webhooks/outbox.js';

/** A reader's action as the readers' listing shows it; the push to agents adds its own fields to it. */
export type ReaderActionView = NonNullable<z.infer<typeof ReaderSchema>['action']>;

type ActionRow = Pick<TerminalReadersTable, 'action_type' | 'action_status' | 'action_payment_intent_id' | 'action_failure_code' | 'action_failure_message'>;

/**
 * Payment events read per pass while following reader views. A pass that stops at it runs again at
 * once; 200 keeps one read small when a busy shop's sales all end together.
 */
const PAYMENT_EVENTS_BATCH = 200;

/**
 * The reader's current or last action, null when it has had none since registration;
 * `transactionId` is our payment for its payment intent, when there is one.
 */
export function actionOf(row: ActionRow, transactionId: string | null): ReaderActionView | null {
  if (row.action_status === null) return null;
  return {
    type: row.action_type ?? 'process_payment_intent',
    status: row.action_status,
    payment_intent_id: row.action_payment_intent_id,
    transaction_id: transactionId,
    failure_code: row.action_failure_code,
    failure_message: row.action_failure_message,
  };
}

/** How a reader is named to its agents: in the presence answer and in reader views. */
export function readerIdentity(row: Pick<TerminalReadersTable, 'id' | 'processor_reader_id' | 'serial_number' | 'name'>): {
  id: string;
  processor_terminal_id: string;
  serial_number: string;
  name: string;
} {
  return { id: row.id, processor_terminal_id: row.processor_reader_id, serial_number: row.serial_number, name: row.name };
}

/** What the counter shows for a stored action. */
export function activityOf(row: Pick<TerminalReadersTable, 'action_status' | 'action_card_presented' | 'action_failure_code'>): ReaderActivity {
  switch (row.action_status) {
    case 'in_progress':
      return row.action_card_presented === 1 ? 'processing' : 'waiting_for_card';
    case 'succeeded':
      return 'approved';
    case 'failed':
      return row.action_failure_code === 'customer_canceled' ? 'canceled_on_reader' : 'declined';
    default:
      return 'idle';
  }
}

/** How a payment in `status` ended; null while it has not. */
export function outcomeOf(status: TransactionStatus): ReaderPaymentOutcome | null {
  switch (status) {
    case 'pending':
    case 'requires_capture':
      return null;
    case 'failed':
      return 'declined';
    case 'canceled':
      return 'canceled';
    case 'succeeded':
    case 'refunded':
    case 'partially_refunded':
      return 'approved';
  }
}

/** A reader row with the columns of its action's payment (all null when the action has none of ours). */
type ViewRow = TerminalReadersTable & {
  transaction_id: string | null;
  amount: number | string | null;
  currency: string | null;
  payment_status: TransactionStatus | null;
  payment_failure_code: string | null;
  payment_decline_code: string | null;
  payment_failure_message: string | null;
  payment_cancellation_reason: string | null;
};

function paymentOf(row: ViewRow): ReaderPayment | null {
  if (row.transaction_id === null || row.payment_status === null || row.amount === null || row.currency === null) return null;
  return {
    id: row.transaction_id,
    amount: Number(row.amount),
    currency: row.currency,
    status: row.payment_status,
    failure_code: row.payment_failure_code,
    decline_code: row.payment_decline_code,
    failure_message: row.payment_failure_message,
    cancellation_reason: shownCancelReason(row.payment_status, row.payment_cancellation_reason),
    outcome: outcomeOf(row.payment_status),
  };
}

export function presentView(row: ViewRow): ReaderStatePush {
  const action = actionOf(row, row.transaction_id);
  return {
    ...readerIdentity(row),
    location_id: row.location_id,
    processor_status: row.processor_status,
    // A reader the processor has not reported on yet (registered before presence was kept) counts as online.
    status: row.processor_status === 'offline' ? 'offline' : 'online',
    last_seen_at: toIsoOrNull(row.last_seen_at),
    seq: Number(row.action_seq),
    activity: activityOf(row),
    action:
      action === null
        ? null
        : {
            ...action,
            amount: row.amount === null ? null : Number(row.amount),
            currency: row.currency,
            card_presented: row.action_card_presented === 1,
            updated_at: toIsoTimestamp(row.action_updated_at ?? row.created_at),
          },
    payment: paymentOf(row),
  };
}

/** The scope's readers joined with their action's payment: the one place a reader meets its payment. */
function viewQuery(db: Executor, scope: Scope) {
  return db
    .selectFrom('terminal_readers as r')
    .leftJoin('transactions as t', (join) => join.onRef('t.processor_payment_intent_id', '=', 'r.action_payment_intent_id'))
    .selectAll('r')
    .select([
      't.id as transaction_id',
      't.amount as amount',
      't.currency as currency',
      't.status as payment_status',
      't.failure_code as payment_failure_code',
      't.decline_code as payment_decline_code',
      't.failure_message as payment_failure_message',
      't.cancellation_reason as payment_cancellation_reason',
    ])
    .where('r.merchant_id', '=', scope.merchantId)
    .where('r.mode', '=', scope.mode);
}

/** The scope's readers, oldest first, each with the id of its action's payment (the readers' listing). */
export async function readerRowsWithPayments(db: Executor, scope: Scope): Promise<(TerminalReadersTable & { transaction_id: string | null })[]> {
  return (await viewQuery(db, scope).orderBy('r.created_at').execute()) as ViewRow[];
}

/** One reader's view now. */
export async function viewOf(db: Executor, row: Pick<TerminalReadersTable, 'id' | 'merchant_id' | 'mode'>): Promise<ReaderStatePush | undefined> {
  const found = await viewQuery(db, { merchantId: row.merchant_id, mode: row.mode }).where('r.id', '=', row.id).executeTakeFirst();
  return found ? presentView(found as ViewRow) : undefined;
}

/**
 * Each reader with its payment, as agents get it (docs/agent-protocol.md, `reader_state`) and the
 * counter shows it. The view changes when the reader's action changes (the `readers` notice, with a
 * new `seq`) and when the payment of its action changes (the `events` notice of a payment event, the
 * same `seq`): both are followed here, so nothing downstream joins the two.
 */
export class ReaderViews {
  constructor(private readonly store: Store) {}

  /** Readers of the scope whose action changed after `seq` (every reader for -1), oldest change first. */
  async statesAfter(scope: Scope, seq: number): Promise<ReaderStatePush[]> {
    const rows = await viewQuery(this.store.db, scope).where('r.action_seq', '>', seq).orderBy('r.action_seq').execute();
    return rows.map((row) => presentView(row as ViewRow));
  }

  /** Readers of the scope whose current action is about one of these payments. */
  async #onPayments(scope: Scope, transactionIds: readonly string[]): Promise<ReaderStatePush[]> {
    if (transactionIds.length === 0) return [];
    const rows = await viewQuery(this.store.db, scope).where('t.id', 'in', [...transactionIds]).orderBy('r.action_seq').execute();
    return rows.map((row) => presentView(row as ViewRow));
  }

  /**
   * Follows the scope's reader views for a connected agent: `snapshot` gets every reader first, then
   * `changed` each reader whose action or whose action's payment changed, after each commit that
   * changed one. Returns stop.
   */
  follow(scope: Scope, snapshot: (readers: ReaderStatePush[]) => void, changed: (reader: ReaderStatePush) => void, failed: (error: unknown) => void): () => void {
    let seq: number | undefined;
    let eventSeq = 0;
    return followNotices(
      this.store.notifications,
      [
        { topic: 'readers', merchantId: scope.merchantId, mode: scope.mode },
        { topic: 'events', merchantId: scope.merchantId, mode: scope.mode },
      ],
      async () => {
        if (seq === undefined) {
          // Events from here on may move a payment shown in the snapshot; those before are in it.
          eventSeq = await latestEventSeq(this.store.db, scope);
          const states = await this.statesAfter(scope, -1);
          seq = states.reduce((max, s) => Math.max(max, s.seq), 0);
          snapshot(states);
          return false;
        }
        // Events before readers: a payment that moves after this read is the next pass's, and the
        // readers read below show every payment moved before it. Read the other way round, a
        // payment committed between the two reads was taken as sent with a reader read before it.
        const events = await this.store.db
          .selectFrom('events')
          .select(['seq', 'object_id'])
          .where('merchant_id', '=', scope.merchantId)
          .where('mode', '=', scope.mode)
          .where('seq', '>', eventSeq)
          .orderBy('seq')
          .limit(PAYMENT_EVENTS_BATCH)
          .execute();
        if (events.length) eventSeq = Number(events[events.length - 1]!.seq);
        const moved = await this.statesAfter(scope, seq);
        for (const state of moved) seq = Math.max(seq, state.seq);
        const paid = new Set(events.flatMap((e) => (e.object_id !== null ? [e.object_id] : [])));
        const shown = new Set(moved.map((s) => s.id));
        // A reader whose action changed is sent once, as read last: its payment is in that read.
        const settled = (await this.#onPayments(scope, [...paid])).filter((s) => !shown.has(s.id));
        for (const state of [...moved, ...settled]) changed(state);
        return events.length === PAYMENT_EVENTS_BATCH;
      },
      failed,
    );
  }
}
