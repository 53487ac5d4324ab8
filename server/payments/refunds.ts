import { formatAmount } from '../../shared/money.js';
import type { RefundReason, RefundSnapshot } from '../processor/snapshots.js';
import type { Logger } from 'pino';
import { newIdentity } from '../../shared/ids.js';
import type { Clock } from '../../shared/time.js';
import type { Mode, RefundsTable, TransactionsTable } from '../db/schema.js';
import type { Store, Trx } from '../db/store.js';
import { conflict, invalid, notFound } from '../errors.js';
import { fromProcessorError, permanentProcessorRefusal } from '../processor/errors.js';
import { type RefundsPort, processorIdempotencyKey } from '../processor/port.js';
import type { CreateRefundInput, Refund } from '../../shared/contract/transactions.js';
import { type Ending, type ExecuteResult, type IdempotencyService, type Operation, retriesExhausted, type StepContext, type StepResult } from '../idempotency/keys.js';
import { presentRefundCreate } from './presenters.js';
import { recordEvent } from '../webhooks/outbox.js';
import { offsetPage, type Page, type PageRequest } from '../pagination.js';
import type { PaymentState } from './payment-state.js';
import { presentRefund } from './present.js';
import type { Scope } from '../accounts/scope.js';
import { findTransactionRow } from './transactions.js';
import { refusesRefund } from '../disputes/status.js';

export interface CreateRefundState {
  transactionRef: string;
  input: CreateRefundInput;
  refundId?: string;
}

/** What a refund create came to: the refund made, as the processor left it (succeeded, pending, …). */
export interface CreateRefundOutcome {
  refund: RefundsTable;
}

const REFUNDABLE = new Set<TransactionsTable['status']>(['succeeded', 'partially_refunded']);
const PROCESSOR_REASONS = new Set(['duplicate', 'fraudulent', 'requested_by_customer']);

/** What can still be refunded: captured money less what is refunded or being refunded. */
export function refundableBalance(row: TransactionsTable): number {
  return row.amount_captured - row.amount_refunded - row.amount_refund_pending;
}

/**
 * Refunds (spec §4.3). The amount is reserved on the transaction in the same transaction that
 * creates the refund row, so any number of racing refunds can never exceed what was paid; the
 * reservation becomes `amount_refunded` when the processor confirms, or is released if it fails.
 */
/** The failure reason of a refund given up after its retries: its outcome at the processor is unknown. */
const GIVEN_UP = 'processor_unavailable';

export class RefundService {
  readonly operation: Operation<CreateRefundState, CreateRefundOutcome>;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly processor: RefundsPort,
    private readonly payments: PaymentState,
    private readonly idempotency: IdempotencyService,
    private readonly logger: Logger,
  ) {
    this.operation = {
      name: 'create_refund',
      steps: {
        started: (state, ctx) => this.#reserve(state, ctx),
        refund_created: (state, ctx) => this.#callProcessor(state, ctx),
      },
      present: presentRefundCreate,
      giveUp: (state, trx) => this.#giveUp(state, trx),
    };
  }

  create(scope: Scope, transactionRef: string, input: CreateRefundInput, clientKey: string | undefined): Promise<ExecuteResult<CreateRefundState, CreateRefundOutcome>> {
    return this.idempotency.execute(scope, this.operation, clientKey, { transactionRef, input });
  }

  async #reserve(state: CreateRefundState, ctx: StepContext<CreateRefundState, CreateRefundOutcome>): Promise<StepResult<CreateRefundState, CreateRefundOutcome>> {
    return ctx.commit(async (trx) => {
      // Locked so that racing refunds on PostgreSQL reserve one after another against a fresh balance.
      const row = await findTransactionRow(trx, ctx.scope, state.transactionRef, this.store.dialect === 'postgres' ? 'postgres' : 'none');
      if (!row) throw notFound('id', 'transaction');
      if (!REFUNDABLE.has(row.status)) {
        if (row.status === 'refunded') throw conflict('already_refunded', 'The payment is already fully refunded');
        throw conflict('transaction_not_refundable', `Only a paid payment can be refunded; this one is ${row.status}`);
      }
      if (refusesRefund(row.dispute_status)) {
        throw conflict('transaction_disputed', `The payment is disputed (${row.dispute_status}): its money is with the cardholder's bank, so it cannot be refunded; answer the dispute instead`);
      }
      const balance = refundableBalance(row);
      const amount = state.input.amount ?? balance;
      if (balance <= 0) throw conflict('already_refunded', 'Nothing is left to refund on this payment (other refunds may be in flight)');
      if (amount > balance) throw invalid(
          'amount',
          `A refund of ${formatAmount(amount, row.currency)} is more than the ${formatAmount(balance, row.currency)} left to refund (${amount} > ${balance} in minor units)`,
          'amount_too_large',
        );
      const now = this.clock.now();
      const { id, reference } = newIdentity('refund');
      const refund: RefundsTable = {
        id,
        reference,
        merchant_id: ctx.scope.merchantId,
        mode: ctx.scope.mode,
        transaction_id: row.id,
        amount,
        currency: row.currency,
        reason: state.input.reason ?? null,
        status: 'pending',
        processor_refund_id: null,
        failure_reason: null,
        metadata: JSON.stringify(state.input.metadata ?? {}),
        created_at: now,
        updated_at: now,
      };
      await trx.insertInto('refunds').values(refund).execute();
      const reserved = await this.payments.write(trx, row, { amount_refund_pending: row.amount_refund_pending + amount }, now);
      if (!reserved) throw new Error('a locked transaction changed while reserving a refund');
      await recordEvent(trx, ctx.scope, 'refund.created', id, presentRefund(refund), now);
      if (row.payment_method_type === 'cash') {
        // A cash sale is refunded in cash from the drawer: there is no processor to ask, so the
        // refund settles in the same transaction that reserved it.
        const settled = await this.#settle(trx, id, 'succeeded', null, null);
        return { outcome: { refund: settled } };
      }
      return { next: 'refund_created', state: { ...state, refundId: id } };
    });
  }

  async #callProcessor(state: CreateRefundState, ctx: StepContext<CreateRefundState, CreateRefundOutcome>): Promise<StepResult<CreateRefundState, CreateRefundOutcome>> {
    const refundId = state.refundId;
    if (!refundId) throw new Error('refund step without a refund');
    const refund = await this.store.db.selectFrom('refunds').selectAll().where('id', '=', refundId).executeTakeFirstOrThrow();
    const txn = await this.store.db.selectFrom('transactions').selectAll().where('id', '=', refund.transaction_id).executeTakeFirstOrThrow();
    let processorRefund: RefundSnapshot;
    try {
      processorRefund = await this.processor.createRefund(
        ctx.scope,
        {
          paymentIntent: txn.processor_payment_intent_id ?? '',
          amount: refund.amount,
          ...(refund.reason && PROCESSOR_REASONS.has(refund.reason) ? { reason: refund.reason as RefundReason } : {}),
          metadata: { pos_refund_id: refund.id, pos_transaction_id: txn.id },
        },
        processorIdempotencyKey(ctx.scope.merchantId, ctx.scope.mode, ctx.key, 'create_refund'),
      );
    } catch (err) {
      // Refused for good: the refund fails and releases its reservation, and the request ends in
      // the refusal; anything else is retried.
      const refusal = permanentProcessorRefusal(err);
      if (refusal) {
        return ctx.commit(async (trx) => {
          await this.#settle(trx, refund.id, 'failed', null, refusal.message);
          return { refusal };
        });
      }
      throw fromProcessorError(err);
    }
    return ctx.commit(async (trx) => {
      const settled = await this.#settle(trx, refund.id, mapStatus(processorRefund.status), processorRefund.id, processorRefund.failureReason);
      return { outcome: { refund: settled } };
    });
  }

  /**
   * A refund whose processor call kept failing past the retry cap fails and releases the amount it
   * reserved, so the payment's refundable balance is whole again for a new refund. If the call did
   * reach the processor, its later news moves the refund on (see `#settle`); a second refund of the
   * same money meanwhile is refused by the processor, which holds the charge's refundable balance.
   */
  async #giveUp(state: CreateRefundState, trx: Trx): Promise<Ending<CreateRefundOutcome>> {
    if (state.refundId) await this.#settle(trx, state.refundId, 'failed', null, GIVEN_UP);
    return { refusal: retriesExhausted() };
  }

  /**
   * Moves a refund to its processor status once, and the transaction with it: a succeeded refund
   * turns its reservation into `amount_refunded` (partially_refunded or refunded), a failed or
   * canceled one releases it.
   */
  async #settle(trx: Trx, refundId: string, status: RefundsTable['status'], processorId: string | null, failureReason: string | null): Promise<RefundsTable> {
    const refund = await trx.selectFrom('refunds').selectAll().where('id', '=', refundId).executeTakeFirstOrThrow();
    const now = this.clock.now();
    const idPatch = processorId && !refund.processor_refund_id ? { processor_refund_id: processorId } : {};
    // A refund given up while the processor was unreachable may have reached it all the same: when
    // the processor later says it succeeded, that is what happened to the money, so it moves on.
    const lateSuccess = refund.status === 'failed' && refund.failure_reason === GIVEN_UP && status === 'succeeded';
    if ((refund.status !== 'pending' && !lateSuccess) || status === 'pending') {
      if (Object.keys(idPatch).length) await trx.updateTable('refunds').set(idPatch).where('id', '=', refundId).execute();
      return { ...refund, ...idPatch };
    }
    const next: RefundsTable = { ...refund, ...idPatch, status, failure_reason: failureReason, updated_at: now };
    // Guarded on the status read: of two settlements racing (the processor's answer and its event), one moves it.
    const moved = await trx
      .updateTable('refunds')
      .set({ ...idPatch, status, failure_reason: failureReason, updated_at: now })
      .where('id', '=', refundId)
      .where('status', '=', refund.status)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) return trx.selectFrom('refunds').selectAll().where('id', '=', refundId).executeTakeFirstOrThrow();
    const scope = { merchantId: refund.merchant_id, mode: refund.mode };
    const amount = refund.amount;
    await this.payments.update(trx,
      refund.transaction_id,
      (txn) => {
        // A late success's reservation was already released when it was given up.
        const patch: Partial<TransactionsTable> = lateSuccess ? {} : { amount_refund_pending: txn.amount_refund_pending - amount };
        if (status === 'succeeded') {
          const refunded = txn.amount_refunded + amount;
          patch.amount_refunded = refunded;
          const fully = refunded >= txn.amount_captured;
          if (fully) patch.refunded_at = now;
          const target = fully ? 'refunded' : 'partially_refunded';
          if (target !== txn.status) patch.status = target;
        }
        return patch;
      },
      now,
    );
    await recordEvent(trx, scope, status === 'succeeded' ? 'refund.succeeded' : 'refund.failed', refund.id, presentRefund(next), now);
    return next;
  }

  async list(scope: Scope, transactionRef: string, request: PageRequest): Promise<Page<Refund>> {
    const txn = await findTransactionRow(this.store.db, scope, transactionRef);
    if (!txn) throw notFound('id', 'transaction');
    const base = this.store.db.selectFrom('refunds').where('transaction_id', '=', txn.id);
    return offsetPage(base, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id'), request, presentRefund);
  }

  /** Processor news about a refund (events or polling): apply its status. */
  async onProcessorRefund(processorRefund: RefundSnapshot): Promise<void> {
    const local = processorRefund.metadata.pos_refund_id;
    const row = await this.store.db
      .selectFrom('refunds')
      .select('id')
      .where((eb) => eb.or([eb('processor_refund_id', '=', processorRefund.id), ...(local ? [eb('id', '=', local)] : [])]))
      .executeTakeFirst();
    if (!row) return;
    await this.store.transaction((trx) => this.#settle(trx, row.id, mapStatus(processorRefund.status), processorRefund.id, processorRefund.failureReason));
  }

  async onRefundEvent(refundId: string, mode: Mode): Promise<void> {
    const refund = await this.processor.retrieveRefund({ mode }, refundId);
    await this.onProcessorRefund(refund);
  }

  /** The processor says a payment's charge was refunded: apply every refund it holds for that payment. */
  async onChargeRefunded(paymentIntent: string, mode: Mode): Promise<void> {
    for (const refund of await this.processor.listRefunds({ mode }, paymentIntent)) await this.onProcessorRefund(refund);
  }

  /** Polling fallback for refunds the processor left pending. */
  async pollPending(): Promise<number> {
    const pending = await this.store.db.selectFrom('refunds').select(['processor_refund_id', 'mode']).where('status', '=', 'pending').where('processor_refund_id', 'is not', null).limit(50).execute();
    for (const r of pending) {
      try {
        if (r.processor_refund_id) await this.onRefundEvent(r.processor_refund_id, r.mode);
      } catch (err) {
        this.logger.warn({ err, refund: r.processor_refund_id }, 'polling a refund failed');
      }
    }
    return pending.length;
  }
}

function mapStatus(status: string | null): RefundsTable['status'] {
  switch (status) {
    case 'succeeded':
      return 'succeeded';
    case 'failed':
      return 'failed';
    case 'canceled':
      return 'canceled';
    default:
      return 'pending';
  }
}
