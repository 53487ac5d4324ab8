import type Stripe from 'stripe';
import { newAccountId, newId } from '../../ids.js';
import { SimError, invalidRequest } from '../../errors.js';
import type { Scope, StoredObject } from '../../store.js';
import { type Kernel, type Origin, getAny, getScoped, systemOrigin, unixSeconds } from '../kernel.js';
import { list, type ListEnvelope, type Metadata, mergeMetadata } from '../shapes.js';
import { DAY_MS, type Ledger } from '../ledger.js';
import type { BankAccountRow, BankAccounts } from '../connect/bankAccounts.js';
import { type AccountInternal, platformAccountId } from '../connect/accountTypes.js';
import { payoutOutcome } from '../payments/instruments.js';

/**
 * Payouts from a connected account's available balance to its bank account:
 *
 *   pending ──(submitted to the bank)──▶ in_transit ──(arrival date)──▶ paid | failed
 *      └── cancel ──▶ canceled
 *
 * Manual payouts are `POST /v1/payouts` on the account. Automatic payouts follow the account's
 * schedule (`daily` by default; `manual` turns them off): when funds become available, the next
 * daily run pays out the whole available balance. Every step is a persisted timer, so the control
 * API's timer advance fast-forwards a payout to its end. Test bank account numbers decide whether
 * it is paid or fails, and with which code.
 */

export interface PayoutInternal {
  bankAccount: string;
  timerId: string | null;
  apiVersion: string;
}

export type PayoutRow = StoredObject<Stripe.Payout, PayoutInternal>;

export interface PayoutCreateInput {
  amount: number;
  currency: string;
  destination?: string | undefined;
  description?: string | undefined;
  metadata?: Metadata | '' | undefined;
  method?: string | undefined;
  statement_descriptor?: string | undefined;
}

interface PayoutTimerPayload {
  payout: string;
}

interface RunPayload {
  account: string;
  livemode: boolean;
  apiVersion: string;
}

/**
 * Stripe sends standard payouts to the bank in batches during the day; an hour is the window in
 * which a new payout stays `pending` and can be canceled.
 */
const SUBMIT_DELAY_MS = 60 * 60 * 1000;
/** A standard US payout arrives the next business day; the simulator counts one calendar day. */
const ARRIVAL_DAYS = 1;

function balanceInsufficient(): SimError {
  return new SimError(
    400,
    'invalid_request_error',
    'You have insufficient funds in your Stripe account. One likely reason you have insufficient funds is that your funds are automatically being paid out; try enabling manual payouts by going to https://dashboard.stripe.com/account/payouts.',
    { code: 'balance_insufficient', param: 'amount' },
  );
}

export class Payouts {
  constructor(
    private readonly kernel: Kernel,
    private readonly ledger: Ledger,
    private readonly bankAccounts: BankAccounts,
  ) {}

  private get(scope: Scope, id: string): PayoutRow {
    return getScoped<Stripe.Payout, PayoutInternal>(this.kernel, 'payout', scope, id, 'payout', 'payout');
  }

  /**
   * Whose bank account a payout goes to: the connected account's, or for the platform (no
   * `Stripe-Account`) its own, which the simulator files under the platform's account id with
   * Stripe's test account that pays (`000123456789`), made on the first platform payout.
   */
  private owner(origin: Origin): string {
    if (origin.scope.account !== null) return origin.scope.account;
    const id = platformAccountId(this.kernel.store, newAccountId);
    if (this.bankAccounts.all(origin.scope.livemode, id).length === 0) this.bankAccounts.create(origin, id, { external_account: 'btok_us_verified' });
    return id;
  }

  create(origin: Origin, input: PayoutCreateInput): Stripe.Payout {
    const account = this.owner(origin);
    const currency = input.currency.toLowerCase();
    if (input.amount <= 0) throw invalidRequest('Invalid positive integer', 'amount', 'parameter_invalid');
    if (input.method !== undefined && input.method !== 'standard') {
      throw invalidRequest('Instant payouts need an eligible debit card; the simulator pays out to bank accounts only (method standard).', 'method', 'instant_payouts_unsupported');
    }
    let bank: BankAccountRow | undefined;
    if (input.destination !== undefined) {
      bank = this.bankAccounts.get(origin.scope.livemode, account, input.destination);
      if (bank.body.currency !== currency) {
        throw invalidRequest(`The bank account ${bank.id} accepts ${bank.body.currency}, not ${currency}.`, 'currency', 'parameter_invalid');
      }
    } else {
      bank = this.bankAccounts.defaultFor(origin.scope.livemode, account, currency);
      if (!bank) throw invalidRequest(`This account has no bank account for ${currency}; add one with POST /v1/accounts/${account}/external_accounts.`, 'currency');
    }
    if (this.ledger.available(origin.scope, currency) < input.amount) throw balanceInsufficient();
    return this.start(origin, bank, input, false, origin.scope);
  }

  private start(origin: Origin, bank: BankAccountRow, input: PayoutCreateInput, automatic: boolean, scope: Scope): Stripe.Payout {
    const nowMs = this.kernel.now();
    const id = newId('po');
    const txn = this.ledger.record(origin, scope, {
      type: 'payout',
      amount: -input.amount,
      currency: input.currency.toLowerCase(),
      source: id,
      description: input.description ?? 'STRIPE PAYOUT',
      reportingCategory: 'payout',
      availability: 'available',
    });
    const payout: Stripe.Payout = {
      id,
      object: 'payout',
      amount: input.amount,
      application_fee: null,
      application_fee_amount: null,
      arrival_date: unixSeconds(nowMs + ARRIVAL_DAYS * DAY_MS),
      automatic,
      balance_transaction: txn.id,
      created: unixSeconds(nowMs),
      currency: input.currency.toLowerCase(),
      description: input.description ?? 'STRIPE PAYOUT',
      destination: bank.id,
      failure_balance_transaction: null,
      failure_code: null,
      failure_message: null,
      livemode: scope.livemode,
      metadata: mergeMetadata({}, input.metadata),
      method: 'standard',
      original_payout: null,
      payout_method: null,
      reconciliation_status: 'not_applicable',
      reversed_by: null,
      source_type: 'card',
      statement_descriptor: input.statement_descriptor ?? null,
      status: 'pending',
      trace_id: { status: 'pending', value: null },
      type: 'bank_account',
    };
    const timerPayload: PayoutTimerPayload = { payout: id };
    const timerId = this.kernel.timers.schedule('payout_submit', nowMs + SUBMIT_DELAY_MS, timerPayload);
    const row = this.kernel.store.insert<Stripe.Payout, PayoutInternal>('payout', scope, payout, { bankAccount: bank.id, timerId, apiVersion: origin.apiVersion });
    this.kernel.events.emit({ ...origin, scope }, 'payout.created', row.body);
    return row.body;
  }

  /** Timer: the payout leaves Stripe for the bank. */
  submit(raw: unknown): void {
    const row = getAny<Stripe.Payout, PayoutInternal>(this.kernel, 'payout', (raw as PayoutTimerPayload).payout, 'payout');
    if (row.body.status !== 'pending') return;
    const payload: PayoutTimerPayload = { payout: row.id };
    row.internal.timerId = this.kernel.timers.schedule('payout_arrival', row.body.arrival_date * 1000, payload);
    row.body.status = 'in_transit';
    row.body.trace_id = { status: 'pending', value: null };
    this.kernel.store.save(row);
    this.kernel.events.emit(this.origin(row), 'payout.updated', row.body, { status: 'pending' });
  }

  /** Timer: the arrival date; the bank account's test number decides paid or failed. */
  arrive(raw: unknown): void {
    const row = getAny<Stripe.Payout, PayoutInternal>(this.kernel, 'payout', (raw as PayoutTimerPayload).payout, 'payout');
    const payout = row.body;
    if (payout.status !== 'in_transit') return;
    row.internal.timerId = null;
    const origin = this.origin(row);
    const bank = this.kernel.store.find<Stripe.BankAccount, { accountNumber: string }>(row.internal.bankAccount) as BankAccountRow | undefined;
    const outcome = payoutOutcome(bank?.internal.accountNumber ?? '');
    if (outcome.succeeds) {
      payout.status = 'paid';
      payout.reconciliation_status = 'completed';
      payout.trace_id = { status: 'supported', value: `SIM${payout.id.slice(3, 15).toUpperCase()}` };
      this.kernel.store.save(row);
      this.kernel.events.emit(origin, 'payout.paid', payout);
      return;
    }
    payout.status = 'failed';
    payout.failure_code = outcome.code ?? 'could_not_process';
    payout.failure_message = outcome.message ?? 'The bank could not process this payout.';
    payout.trace_id = { status: 'unsupported', value: null };
    payout.failure_balance_transaction = this.returnFunds(origin, row, 'payout_failure').id;
    this.kernel.store.save(row);
    if (bank) this.bankAccounts.markErrored(bank);
    this.kernel.events.emit(origin, 'payout.failed', payout);
  }

  cancel(origin: Origin, id: string): Stripe.Payout {
    const row = this.get(origin.scope, id);
    const payout = row.body;
    if (payout.status !== 'pending') {
      throw invalidRequest(`Payout ${payout.id} cannot be canceled: its status is ${payout.status}. Only pending payouts can be canceled.`);
    }
    if (row.internal.timerId) this.kernel.timers.cancel(row.internal.timerId);
    row.internal.timerId = null;
    payout.status = 'canceled';
    payout.failure_balance_transaction = this.returnFunds(origin, row, 'payout_cancel').id;
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'payout.canceled', payout);
    return payout;
  }

  /** A payout that did not reach the bank gives its amount back to the available balance. */
  private returnFunds(origin: Origin, row: PayoutRow, type: 'payout_failure' | 'payout_cancel'): Stripe.BalanceTransaction {
    return this.ledger.record(origin, { livemode: row.livemode, account: row.account }, {
      type,
      amount: row.body.amount,
      currency: row.body.currency,
      source: row.id,
      description: type === 'payout_failure' ? `Payout failure (${String(row.body.failure_code)})` : 'Payout canceled',
      reportingCategory: 'payout_reversal',
      availability: 'available',
    });
  }

  retrieve(scope: Scope, id: string): Stripe.Payout {
    return this.get(scope, id).body;
  }

  update(origin: Origin, id: string, metadata: Metadata | '' | undefined): Stripe.Payout {
    const row = this.get(origin.scope, id);
    const previous = row.body.metadata;
    row.body.metadata = mergeMetadata(row.body.metadata ?? {}, metadata);
    this.kernel.store.save(row);
    this.kernel.events.emit(origin, 'payout.updated', row.body, { metadata: previous });
    return row.body;
  }

  list(
    scope: Scope,
    filters: { status?: string | undefined; destination?: string | undefined },
    page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined },
  ): ListEnvelope<Stripe.Payout> {
    const result = this.kernel.store.list<Stripe.Payout, PayoutInternal>('payout', scope, filters, page);
    return list('/v1/payouts', result.data.map((row) => row.body), result.hasMore);
  }

  /**
   * Funds became available on a balance: a connected account on an automatic schedule gets its
   * daily run, at the start of the next UTC day, unless one is already due.
   */
  scheduleRun(origin: Origin): void {
    const accountId = origin.scope.account;
    if (accountId === null) return;
    const account = this.kernel.store.find<Stripe.Account, AccountInternal>(accountId);
    if (!account || account.type !== 'account' || account.internal.payoutRunTimerId) return;
    if (account.body.settings?.payouts?.schedule.interval === 'manual') return;
    const nextDay = (Math.floor(this.kernel.now() / DAY_MS) + 1) * DAY_MS;
    const payload: RunPayload = { account: accountId, livemode: account.livemode, apiVersion: origin.apiVersion };
    account.internal.payoutRunTimerId = this.kernel.timers.schedule('payout_run', nextDay, payload);
    this.kernel.store.save(account);
  }

  /** Timer: the daily automatic payout of everything available, per currency. */
  run(raw: unknown): void {
    const payload = raw as RunPayload;
    const account = getAny<Stripe.Account, AccountInternal>(this.kernel, 'account', payload.account, 'account');
    account.internal.payoutRunTimerId = null;
    this.kernel.store.save(account);
    if (account.body.settings?.payouts?.schedule.interval === 'manual') return;
    // Stripe sends no automatic payout to an account whose payouts are disabled (requirements due).
    if (!account.body.payouts_enabled) return;
    const scope: Scope = { livemode: payload.livemode, account: payload.account };
    const origin = systemOrigin(scope, payload.apiVersion);
    for (const entry of this.ledger.balance(scope).available) {
      if (entry.amount <= 0) continue;
      const bank = this.bankAccounts.defaultFor(scope.livemode, payload.account, entry.currency);
      if (!bank || bank.body.status === 'errored') continue;
      this.start(origin, bank, { amount: entry.amount, currency: entry.currency }, true, scope);
    }
  }

  private origin(row: PayoutRow): Origin {
    return systemOrigin({ livemode: row.livemode, account: row.account }, row.internal.apiVersion);
  }
}
