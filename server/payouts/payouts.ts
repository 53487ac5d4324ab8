import { findScoped } from '../db/prepared.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { isUuid, newIdentity } from '../../shared/ids.js';
import { toIsoOrNull, toIsoTimestamp, type Clock } from '../../shared/time.js';
import type { Scope } from '../accounts/scope.js';
import type { Mode, PayoutStatus, PayoutsTable } from '../db/schema.js';
import type { Store, Trx } from '../db/store.js';
import { invalid, notFound } from '../errors.js';
import type { ExecuteResult, FinalResponse, IdempotencyService, Operation, StepContext, StepResult } from '../idempotency/keys.js';
import { type Page, type PageRequest, offsetPage } from '../pagination.js';
import { fromProcessorError, permanentProcessorRefusal } from '../processor/errors.js';
import { type PayoutsPort, processorIdempotencyKey } from '../processor/port.js';
import type { BankAccountSnapshot, PayoutSnapshot } from '../processor/snapshots.js';
import type { ConnectedAccountDirectory } from '../accounts/connected-accounts.js';
import type { Balance, BankAccount, CreatePayoutInput, Payout, SetBankAccountInput } from '../../shared/contract/payouts.js';
import { type EventType, recordEvent } from '../webhooks/outbox.js';

export function presentPayout(row: PayoutsTable): Payout {
  return {
    id: row.id,
    object: 'payout',
    reference: row.reference,
    amount: row.amount,
    currency: row.currency,
    status: row.status,
    automatic: row.automatic === 1,
    description: row.description,
    arrival_date: toIsoOrNull(row.arrival_date),
    failure_code: row.failure_code,
    failure_message: row.failure_message,
    is_test: row.mode === 'test',
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
  };
}

function presentBankAccount(bank: BankAccountSnapshot, scope: Scope): BankAccount {
  return {
    object: 'bank_account',
    bank_name: bank.bankName,
    last4: bank.last4,
    routing_number: bank.routingNumber,
    country: bank.country,
    currency: bank.currency,
    account_holder_name: bank.holderName,
    status: bank.status,
    is_test: scope.mode === 'test',
  };
}

/** What a payout request needs to (re)do its work after a crash: the request and what it chose. */
export interface CreatePayoutState {
  input: CreatePayoutInput;
  /** Our identity for the payout, chosen up front so the processor's copy can name it. */
  payoutId: string;
  reference: string;
  currency?: string;
  amount?: number;
}

/** What a payout request came to: the payout the processor accepted, as it stands. */
export interface CreatePayoutOutcome {
  payout: PayoutsTable;
}

/** The presenter of `POST /v1/payouts`: the answer its idempotency key keeps. */
export function presentPayoutCreate(outcome: CreatePayoutOutcome): FinalResponse {
  return { status: 201, body: { data: presentPayout(outcome.payout) } };
}

/**
 * Payout statuses in the order they are reached. `paid` can still become `failed` (a bank may
 * return a payout days later, as on Stripe); failed and canceled are final.
 */
const RANK: Record<PayoutStatus, number> = { pending: 0, in_transit: 1, paid: 2, failed: 3, canceled: 3 };

const EVENT_FOR: Partial<Record<PayoutStatus, EventType>> = { paid: 'payout.paid', failed: 'payout.failed', canceled: 'payout.canceled' };

function statusOf(status: string): PayoutStatus {
  return status === 'in_transit' || status === 'paid' || status === 'failed' || status === 'canceled' ? status : 'pending';
}

/** Payouts still on their way re-checked per reconciler pass when no event came. */
const POLL_BATCH = 50;
/**
 * A payout on its way is re-read at most this often without an event: payouts take a day or two to
 * arrive, so a quarter hour's delay in noticing is nothing, and it costs one call per payout.
 */
const POLL_INTERVAL_MS = 15 * 60 * 1000;

/**
 * A merchant's balance and payouts, on its connected account (docs/payouts.md). Payouts asked for
 * here go through the idempotency engine like refunds; those the processor makes on the account's
 * schedule, and every later move, arrive as Connect events (`payout.*`), re-read from the processor.
 */
export class PayoutService {
  readonly operation: Operation<CreatePayoutState, CreatePayoutOutcome>;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly processor: PayoutsPort,
    private readonly accounts: ConnectedAccountDirectory,
    private readonly idempotency: IdempotencyService,
    private readonly logger: Logger,
  ) {
    this.operation = {
      name: 'create_payout',
      steps: {
        started: (state, ctx) => this.#start(state, ctx),
        accepted: (state, ctx) => this.#chooseAmount(state, ctx),
        amount_chosen: (state, ctx) => this.#callProcessor(state, ctx),
      },
      present: presentPayoutCreate,
    };
  }

  create(scope: Scope, input: CreatePayoutInput, clientKey: string | undefined): Promise<ExecuteResult<CreatePayoutState, CreatePayoutOutcome>> {
    const { id, reference } = newIdentity('payout');
    return this.idempotency.execute(scope, this.operation, clientKey, { input, payoutId: id, reference });
  }

  async balance(scope: Scope): Promise<Balance> {
    const account = await this.accounts.accountOf(scope.merchantId, scope.mode, scope.trace);
    try {
      const balance = await this.processor.retrieveBalance(scope, account);
      const side = (entries: readonly { amount: number; currency: string }[]) => entries.map((e) => ({ amount: e.amount, currency: e.currency.toLowerCase() }));
      return { object: 'balance', available: side(balance.available), pending: side(balance.pending), is_test: scope.mode === 'test' };
    } catch (err) {
      throw fromProcessorError(err);
    }
  }

  /**
   * Where payouts go: a bank account added to the connected account as its default for the
   * currency. Only the processor keeps the numbers; we show the last four digits.
   */
  async setBankAccount(scope: Scope, input: SetBankAccountInput): Promise<BankAccount> {
    const merchant = await this.store.db.selectFrom('merchants').select(['country', 'default_currency']).where('id', '=', scope.merchantId).executeTakeFirstOrThrow();
    const account = await this.accounts.accountOf(scope.merchantId, scope.mode, scope.trace);
    try {
      const bank = await this.processor.addBankAccount(
        scope,
        {
          account,
          accountNumber: input.account_number,
          ...(input.routing_number ? { routingNumber: input.routing_number } : {}),
          ...(input.account_holder_name ? { holderName: input.account_holder_name } : {}),
          country: merchant.country,
          currency: input.currency ?? merchant.default_currency,
        },
        // A fresh key per request: setting the same account again after another must apply again.
        processorIdempotencyKey(scope.merchantId, scope.mode, 'bank_account', randomUUID()),
      );
      return presentBankAccount(bank, scope);
    } catch (err) {
      throw fromProcessorError(err);
    }
  }

  /** The bank account payouts in the merchant's currency go to. */
  async bankAccount(scope: Scope): Promise<BankAccount> {
    const merchant = await this.store.db.selectFrom('merchants').select('default_currency').where('id', '=', scope.merchantId).executeTakeFirstOrThrow();
    const account = await this.accounts.accountOf(scope.merchantId, scope.mode, scope.trace);
    let banks: BankAccountSnapshot[];
    try {
      banks = await this.processor.listBankAccounts(scope, account);
    } catch (err) {
      throw fromProcessorError(err);
    }
    const current = banks.find((b) => b.defaultForCurrency && b.currency === merchant.default_currency);
    if (!current) throw notFound('bank_account', 'bank account');
    return presentBankAccount(current, scope);
  }

  async list(scope: Scope, request: PageRequest, status?: PayoutStatus): Promise<Page<Payout>> {
    const base = this.store.db
      .selectFrom('payouts')
      .where('merchant_id', '=', scope.merchantId)
      .where('mode', '=', scope.mode)
      .$if(status !== undefined, (q) => q.where('status', '=', status as PayoutStatus));
    return offsetPage(base, (q) => q.selectAll().orderBy('created_at', 'desc').orderBy('id'), request, presentPayout);
  }

  async get(scope: Scope, idOrReference: string): Promise<Payout> {
    const row = await findScoped(this.store.db, 'payouts', scope, isUuid(idOrReference) ? 'id' : 'reference', idOrReference);
    if (!row) throw notFound('id', 'payout');
    return presentPayout(row);
  }

  /** Reads only: the currency, and whether the amount must still be read from the balance. */
  async #start(state: CreatePayoutState, ctx: StepContext<CreatePayoutState, CreatePayoutOutcome>): Promise<StepResult<CreatePayoutState, CreatePayoutOutcome>> {
    let currency = state.input.currency;
    if (!currency) {
      const merchant = await this.store.db.selectFrom('merchants').select('default_currency').where('id', '=', ctx.scope.merchantId).executeTakeFirstOrThrow();
      currency = merchant.default_currency;
    }
    if (state.input.amount !== undefined) return { next: 'amount_chosen', state: { ...state, currency, amount: state.input.amount } };
    return { next: 'accepted', state: { ...state, currency } };
  }

  /**
   * No amount given: all that is available in the currency, read once and kept, so a retry after a
   * crash asks the processor for the same payout, not for what is left after it.
   */
  async #chooseAmount(state: CreatePayoutState, ctx: StepContext<CreatePayoutState, CreatePayoutOutcome>): Promise<StepResult<CreatePayoutState, CreatePayoutOutcome>> {
    const currency = state.currency ?? '';
    const available = (await this.balance(ctx.scope)).available.find((b) => b.currency === currency)?.amount ?? 0;
    if (available <= 0) throw invalid('amount', `Nothing is available to pay out in ${currency.toUpperCase()}`, 'balance_insufficient');
    return { next: 'amount_chosen', state: { ...state, amount: available } };
  }

  async #callProcessor(state: CreatePayoutState, ctx: StepContext<CreatePayoutState, CreatePayoutOutcome>): Promise<StepResult<CreatePayoutState, CreatePayoutOutcome>> {
    const account = await this.accounts.accountOf(ctx.scope.merchantId, ctx.scope.mode, ctx.scope.trace);
    let payout: PayoutSnapshot;
    try {
      payout = await this.processor.createPayout(
        ctx.scope,
        {
          account,
          amount: state.amount ?? 0,
          currency: state.currency ?? '',
          ...(state.input.description ? { description: state.input.description } : {}),
          metadata: { pos_payout_id: state.payoutId, pos_merchant_id: ctx.scope.merchantId },
        },
        processorIdempotencyKey(ctx.scope.merchantId, ctx.scope.mode, ctx.key, 'create_payout'),
      );
    } catch (err) {
      // Refused for good (not enough balance, no bank account): that is the answer the key keeps.
      const refusal = permanentProcessorRefusal(err);
      if (refusal) throw refusal;
      throw fromProcessorError(err);
    }
    return ctx.commit(async (trx) => {
      const row = await this.#apply(trx, ctx.scope, payout, { id: state.payoutId, reference: state.reference, metadata: state.input.metadata ?? {} });
      return { outcome: { payout: row } };
    });
  }

  /** A Connect event about a payout: re-read it from the account it happened on and apply it. */
  async onPayoutEvent(payoutId: string, account: string, mode: Mode): Promise<void> {
    const merchantId = await this.accounts.merchantOf(mode, account);
    if (!merchantId) {
      this.logger.debug({ payout: payoutId, account }, 'payout event of an account that is not a merchant of ours');
      return;
    }
    const payout = await this.processor.retrievePayout({ mode }, account, payoutId);
    const scope = { merchantId, mode };
    await this.store.transaction((trx) => this.#apply(trx, scope, payout));
  }

  /** Polling fallback: payouts on their way that no event has settled for a while are re-read. */
  async pollOpen(): Promise<number> {
    const now = this.clock.now();
    const rows = await this.store.db
      .selectFrom('payouts')
      .select(['processor_payout_id', 'merchant_id', 'mode'])
      .where('status', 'in', ['pending', 'in_transit'])
      .where('synced_at', '<', now - POLL_INTERVAL_MS)
      .orderBy('synced_at')
      .limit(POLL_BATCH)
      .execute();
    for (const row of rows) {
      try {
        const account = await this.accounts.accountOf(row.merchant_id, row.mode);
        await this.onPayoutEvent(row.processor_payout_id, account, row.mode);
      } catch (err) {
        this.logger.warn({ err, payout: row.processor_payout_id }, 'polling a payout failed');
      }
    }
    return rows.length;
  }

  /**
   * Records a payout as the processor has it, inside the caller's transaction: the first news of it
   * makes its row and `payout.created`; later news moves its status forward with the event of the
   * status reached (`payout.paid`, `payout.failed`, `payout.canceled`, else `payout.updated`).
   * `ours` is the identity and metadata a payout asked for through the API was given.
   */
  async #apply(trx: Trx, scope: Scope, payout: PayoutSnapshot, ours?: { id: string; reference: string; metadata: Record<string, string> }): Promise<PayoutsTable> {
    const now = this.clock.now();
    let row = await this.#byProcessorId(trx, payout.id);
    if (!row) {
      const named = payout.metadata.pos_payout_id;
      const { id, reference } = ours ?? (named && isUuid(named) ? { id: named, reference: newIdentity('payout').reference } : newIdentity('payout'));
      const created: PayoutsTable = {
        id,
        reference,
        merchant_id: scope.merchantId,
        mode: scope.mode,
        processor_payout_id: payout.id,
        amount: payout.amount,
        currency: payout.currency,
        // Recorded as it began; the move below takes it to where it is now, with its event.
        status: 'pending',
        automatic: payout.automatic ? 1 : 0,
        description: payout.description,
        arrival_date: payout.arrivalDate,
        failure_code: null,
        failure_message: null,
        metadata: JSON.stringify(ours?.metadata ?? {}),
        // When we first heard of it, moments after the processor made it: the processor's own
        // time is in whole seconds, which would leave payouts made in one second in no order.
        created_at: now,
        updated_at: now,
        synced_at: now,
      };
      const inserted = await trx
        .insertInto('payouts')
        .values(created)
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1) {
        await recordEvent(trx, scope, 'payout.created', created.id, presentPayout(created), now);
        row = created;
      } else {
        // Another writer recorded it first (the processor's event racing our own answer).
        row = await this.#byProcessorId(trx, payout.id);
        if (!row) throw new Error(`payout ${payout.id} is neither new nor recorded`);
      }
    }
    // A payout asked for here whose event got in first: it still gets the merchant's metadata.
    if (ours && row.metadata === '{}' && Object.keys(ours.metadata).length > 0) {
      row = { ...row, metadata: JSON.stringify(ours.metadata) };
      await trx.updateTable('payouts').set({ metadata: row.metadata }).where('id', '=', row.id).execute();
    }
    const status = statusOf(payout.status);
    const moving = RANK[status] > RANK[row.status] && RANK[row.status] < RANK.failed;
    const next: PayoutsTable = {
      ...row,
      status: moving ? status : row.status,
      arrival_date: payout.arrivalDate ?? row.arrival_date,
      failure_code: moving && status === 'failed' ? (payout.failureCode ?? 'could_not_process') : row.failure_code,
      failure_message: moving && status === 'failed' ? payout.failureMessage : row.failure_message,
      synced_at: now,
    };
    const changed = next.status !== row.status || next.arrival_date !== row.arrival_date;
    if (changed) next.updated_at = now;
    await trx
      .updateTable('payouts')
      .set({ status: next.status, arrival_date: next.arrival_date, failure_code: next.failure_code, failure_message: next.failure_message, updated_at: next.updated_at, synced_at: now })
      .where('id', '=', row.id)
      .execute();
    if (changed) await recordEvent(trx, scope, (moving && EVENT_FOR[next.status]) || 'payout.updated', next.id, presentPayout(next), now);
    return next;
  }

  /** Locked for the rest of the transaction on PostgreSQL (SQLite's write lock covers the whole unit). */
  #byProcessorId(trx: Trx, processorId: string): Promise<PayoutsTable | undefined> {
    return trx
      .selectFrom('payouts')
      .selectAll()
      .where('processor_payout_id', '=', processorId)
      .$if(this.store.dialect === 'postgres', (q) => q.forUpdate())
      .executeTakeFirst();
  }
}
