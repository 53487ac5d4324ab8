import type Stripe from 'stripe';
import { newId } from '../ids.js';
import type { Scope, StoredObject } from '../store.js';
import { type Kernel, type Origin, getAny, getScoped, systemOrigin, unixSeconds } from './kernel.js';
import { list, type ListEnvelope } from './shapes.js';

/**
 * Balances: every movement of money on a balance (platform or connected account) is a balance
 * transaction, as on Stripe. A transaction is `pending` until its `available_on`, then `available`;
 * `GET /v1/balance` is the sum of their `net` by currency and status. Funds held back become
 * available through a persisted timer, so the control API's timer advance fast-forwards them.
 */

/** One day: `delay_days` and payout arrival dates are counted in real days, as on Stripe. */
export const DAY_MS = 86_400_000;
/** Stripe's default payout delay for US accounts: card funds become available two days after the charge. */
export const DEFAULT_DELAY_DAYS = 2;

export type SourceType = 'card' | 'bank_account';

export interface LedgerInternal {
  /** Which `source_types` bucket of the balance the funds count in. */
  sourceType: SourceType;
  /** The API version of the request that moved the money, for the `balance.available` event. */
  apiVersion: string;
}

export type BalanceTransactionRow = StoredObject<Stripe.BalanceTransaction, LedgerInternal>;

export interface LedgerEntry {
  type: Stripe.BalanceTransaction.Type;
  /** Signed: credits are positive, debits negative. */
  amount: number;
  currency: string;
  source: string | null;
  description: string | null;
  reportingCategory: string;
  /** Fees taken from (positive) or returned to (negative) the balance with this amount. */
  fees?: Stripe.BalanceTransaction.FeeDetail[];
  sourceType?: SourceType;
  /** `pending` holds the funds for the balance's payout delay; `available` moves them at once. */
  availability: 'pending' | 'available';
}

interface AvailablePayload {
  id: string;
}

function bucket(entries: Map<string, { amount: number; card: number; bank_account: number }>, currency: string) {
  let found = entries.get(currency);
  if (!found) {
    found = { amount: 0, card: 0, bank_account: 0 };
    entries.set(currency, found);
  }
  return found;
}

export class Ledger {
  /**
   * Called (inside the transaction) when funds become available on a balance: the payouts service
   * schedules that account's automatic payout.
   */
  onFundsAvailable: (origin: Origin) => void = () => {};

  constructor(private readonly kernel: Kernel) {}

  /** The payout delay of a balance: the connected account's `settings.payouts.schedule.delay_days`. */
  delayDays(scope: Scope): number {
    if (scope.account === null) return DEFAULT_DELAY_DAYS;
    const account = this.kernel.store.find<Stripe.Account, unknown>(scope.account);
    return account?.body.settings?.payouts?.schedule.delay_days ?? DEFAULT_DELAY_DAYS;
  }

  record(origin: Origin, scope: Scope, entry: LedgerEntry): Stripe.BalanceTransaction {
    const nowMs = this.kernel.now();
    const fee = (entry.fees ?? []).reduce((sum, detail) => sum + detail.amount, 0);
    const pending = entry.availability === 'pending';
    const availableAtMs = pending ? nowMs + this.delayDays(scope) * DAY_MS : nowMs;
    const body: Stripe.BalanceTransaction = {
      id: newId('txn'),
      object: 'balance_transaction',
      amount: entry.amount,
      available_on: unixSeconds(availableAtMs),
      balance_type: 'payments',
      created: unixSeconds(nowMs),
      currency: entry.currency,
      description: entry.description,
      exchange_rate: null,
      fee,
      fee_details: entry.fees ?? [],
      net: entry.amount - fee,
      reporting_category: entry.reportingCategory,
      source: entry.source,
      status: pending ? 'pending' : 'available',
      type: entry.type,
    };
    this.kernel.store.insert<Stripe.BalanceTransaction, LedgerInternal>('balance_transaction', scope, body, {
      sourceType: entry.sourceType ?? 'card',
      apiVersion: origin.apiVersion,
    });
    if (pending) {
      const payload: AvailablePayload = { id: body.id };
      this.kernel.timers.schedule('balance_available', availableAtMs, payload);
    }
    return body;
  }

  /** Timer: the funds of one pending balance transaction become available. */
  makeAvailable(raw: unknown): void {
    const row = getAny<Stripe.BalanceTransaction, LedgerInternal>(this.kernel, 'balance_transaction', (raw as AvailablePayload).id, 'balance_transaction');
    if (row.body.status !== 'pending') return;
    row.body.status = 'available';
    this.kernel.store.save(row);
    const origin = systemOrigin({ livemode: row.livemode, account: row.account }, row.internal.apiVersion);
    this.kernel.events.emit(origin, 'balance.available', this.balance(origin.scope));
    if (row.body.net > 0) this.onFundsAvailable(origin);
  }

  /** Funds credited as available at once (bypassPending, reinstated disputes) start a payout too. */
  creditedNow(origin: Origin, scope: Scope, body: Stripe.BalanceTransaction): void {
    if (body.status === 'available' && body.net > 0) this.onFundsAvailable({ ...origin, scope });
  }

  balance(scope: Scope): Stripe.Balance {
    const available = new Map<string, { amount: number; card: number; bank_account: number }>();
    const pending = new Map<string, { amount: number; card: number; bank_account: number }>();
    for (const total of this.kernel.store.balanceTotals(scope)) {
      const entry = bucket(total.status === 'available' ? available : pending, total.currency);
      entry.amount += total.net;
      if (total.sourceType === 'bank_account') entry.bank_account += total.net;
      else entry.card += total.net;
    }
    const currencies = [...new Set([...available.keys(), ...pending.keys()])].sort();
    if (currencies.length === 0) currencies.push(this.defaultCurrency(scope));
    const render = (from: typeof available): Stripe.Balance.Available[] =>
      currencies.map((currency) => {
        const entry = from.get(currency) ?? { amount: 0, card: 0, bank_account: 0 };
        const sourceTypes: Stripe.Balance.Available.SourceTypes = { card: entry.card };
        if (entry.bank_account !== 0) sourceTypes.bank_account = entry.bank_account;
        return { amount: entry.amount, currency, source_types: sourceTypes };
      });
    return {
      object: 'balance',
      available: render(available),
      // Funds Stripe holds back against connected accounts' negative balances: the simulator holds none.
      connect_reserved: currencies.map((currency) => ({ amount: 0, currency })),
      livemode: scope.livemode,
      pending: render(pending),
    };
  }

  /** What can be paid out now in `currency`. */
  available(scope: Scope, currency: string): number {
    return this.kernel.store
      .balanceTotals(scope)
      .filter((total) => total.currency === currency && total.status === 'available')
      .reduce((sum, total) => sum + total.net, 0);
  }

  private defaultCurrency(scope: Scope): string {
    if (scope.account === null) return 'usd';
    return this.kernel.store.find<Stripe.Account, unknown>(scope.account)?.body.default_currency ?? 'usd';
  }

  retrieve(scope: Scope, id: string): Stripe.BalanceTransaction {
    return getScoped<Stripe.BalanceTransaction, LedgerInternal>(this.kernel, 'balance_transaction', scope, id, 'balance transaction', 'id').body;
  }

  list(
    scope: Scope,
    filters: { type?: string | undefined; source?: string | undefined; currency?: string | undefined },
    page: { limit: number; startingAfter?: string | undefined; endingBefore?: string | undefined },
  ): ListEnvelope<Stripe.BalanceTransaction> {
    const result = this.kernel.store.list<Stripe.BalanceTransaction, LedgerInternal>('balance_transaction', scope, filters, page);
    return list('/v1/balance_transactions', result.data.map((row) => row.body), result.hasMore);
  }
}
