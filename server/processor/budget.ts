import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, Store } from '../db/store.js';

/**
 * The processor's request budget: one limiter per platform account (secret key) and mode that keeps
 * our calls under Stripe's published rate limits (https://docs.stripe.com/rate-limits): 100
 * requests a second in live mode and 25 in test mode per account, 25 a second per endpoint (method
 * and path template). Every merchant's calls go through the platform's key (destination charges,
 * `Stripe-Account`), so they all share one budget.
 *
 * A call waits in a queue ordered by priority (payment-critical calls first, then other writes, then
 * reads) until both its account's and its endpoint's window have room. The windows are sliding
 * logs of send times; in process on SQLite, in a row per window on PostgreSQL so that every server
 * instance draws on the one budget.
 *
 * Libraries looked at: rate-limiter-flexible and p-queue count fixed windows (up to twice the limit
 * across a window boundary), bottleneck shares state only through Redis; none keeps a sliding
 * window with priorities in the database we already run.
 */

export type Priority = 'critical' | 'write' | 'read';

const PRIORITY_ORDER: Record<Priority, number> = { critical: 0, write: 1, read: 2 };

export interface BudgetLimits {
  /** Requests a second over every endpoint of the account. */
  accountPerSecond: number;
  /** Requests a second to one endpoint. */
  endpointPerSecond: number;
}

/** Stripe's figures: 100/s live and 25/s test per account, 25/s per endpoint in either mode. */
export function stripeLimits(mode: 'test' | 'live'): BudgetLimits {
  return { accountPerSecond: mode === 'live' ? 100 : 25, endpointPerSecond: 25 };
}

/**
 * Stripe counts requests when they arrive, we when we send them, and two requests sent a second
 * apart may arrive closer together (one waited longer for a socket, a busy event loop, the
 * network). Counting each send for this much longer than a second keeps the arrivals within the
 * limit as long as that difference stays under 250 ms, which is generous on a LAN or towards Stripe
 * and costs a fifth of the throughput (25 per 1.25 s is 20/s in test mode).
 */
export const WINDOW_MS = 1_250;

/**
 * No more than a fifth of a limit is sent within a fifth of the window. A processor serves a burst
 * one request after another (the simulator does, on one event loop), so the last of 25 sent at once
 * is counted hundreds of milliseconds after the first, and a burst sent a window later can then
 * land within Stripe's second of it. Sent five at a time, a burst is served in a few milliseconds;
 * the rate over the whole window is the same.
 */
const STEPS = 5;
export const STEP_MS = WINDOW_MS / STEPS;

/**
 * Share of the account's window each priority may fill. Reads stop at 80 % and other writes at 90 %,
 * so a burst of reads (a reconciliation pass, a dashboard) always leaves room for a payment to be
 * created, confirmed, captured, canceled or refunded at once, on this instance and on every other
 * one drawing on the same budget.
 */
const ACCOUNT_SHARE: Record<Priority, number> = { critical: 1, write: 0.9, read: 0.8 };

export interface Decision {
  granted: boolean;
  /** When refused, how long until the window that refused has room. */
  waitMs: number;
  /** When refused, which window was full (the account's wins when both were). */
  limitedBy: 'account' | 'endpoint' | null;
}

/** Send times within the window, oldest first. */
export type SendLog = number[];

function live(log: SendLog, now: number): SendLog {
  return log.filter((t) => t > now - WINDOW_MS);
}

/** How long until the last `span` ms of `log` hold fewer than `cap` sends; 0 when they already do. */
function waitWithin(log: SendLog, cap: number, span: number, now: number): number {
  let recent = 0;
  while (recent < log.length && log[log.length - 1 - recent]! > now - span) recent += 1;
  if (recent < cap) return 0;
  // The cap-th newest send must leave the span; it does `span` ms after it was made.
  const leaving = log[log.length - cap]!;
  return Math.max(1, leaving + span - now);
}

/** How long until a send within `cap` for the window, and a fifth of it for the step, is possible. */
function waitFor(log: SendLog, cap: number, now: number): number {
  return Math.max(waitWithin(log, cap, WINDOW_MS, now), waitWithin(log, Math.max(1, Math.floor(cap / STEPS)), STEP_MS, now));
}

/**
 * The budget's one rule, the same in memory and in the database: a call may be sent now when the
 * account's window holds fewer sends than its priority's share of the limit and the endpoint's
 * fewer than the endpoint limit; then both record it.
 */
export function decide(
  account: SendLog,
  endpoint: SendLog,
  now: number,
  limits: BudgetLimits,
  priority: Priority,
): { decision: Decision; account: SendLog; endpoint: SendLog } {
  const a = live(account, now);
  const e = live(endpoint, now);
  const accountWait = waitFor(a, Math.max(1, Math.floor(limits.accountPerSecond * ACCOUNT_SHARE[priority])), now);
  const endpointWait = waitFor(e, limits.endpointPerSecond, now);
  if (accountWait > 0 || endpointWait > 0) {
    return { decision: { granted: false, waitMs: Math.max(accountWait, endpointWait), limitedBy: accountWait > 0 ? 'account' : 'endpoint' }, account: a, endpoint: e };
  }
  a.push(now);
  e.push(now);
  return { decision: { granted: true, waitMs: 0, limitedBy: null }, account: a, endpoint: e };
}

/** Where the windows live: this process's memory, or a table every instance shares. */
export interface BudgetLedger {
  take(account: string, endpoint: string, priority: Priority, limits: BudgetLimits): Promise<Decision>;
}

export class MemoryLedger implements BudgetLedger {
  readonly #logs = new Map<string, SendLog>();

  constructor(private readonly now: () => number = () => performance.timeOrigin + performance.now()) {}

  take(account: string, endpoint: string, priority: Priority, limits: BudgetLimits): Promise<Decision> {
    const endpointKey = `${account} ${endpoint}`;
    const result = decide(this.#logs.get(account) ?? [], this.#logs.get(endpointKey) ?? [], this.now(), limits, priority);
    this.#logs.set(account, result.account);
    this.#logs.set(endpointKey, result.endpoint);
    return Promise.resolve(result.decision);
  }
}

/**
 * The windows in `processor_budgets`, one row each, shared by every instance on the database. Both
 * rows are locked in key order (the account's key is a prefix of its endpoints' keys, so it always
 * comes first and two instances never wait on each other in a cycle), decided on with the
 * database's clock (instances' clocks may differ; the database's is the one every instance reads)
 * and written back in one short transaction. A window's loss in a crash costs nothing, so the
 * commit does not wait for the WAL flush.
 */
export class PostgresLedger implements BudgetLedger {
  readonly #known = new Set<string>();

  constructor(private readonly db: Db) {}

  async take(account: string, endpoint: string, priority: Priority, limits: BudgetLimits): Promise<Decision> {
    const endpointKey = `${account} ${endpoint}`;
    const keys = [account, endpointKey];
    return this.db.transaction().execute(async (trx) => {
      await sql`set local synchronous_commit = off`.execute(trx);
      const missing = keys.filter((k) => !this.#known.has(k));
      if (missing.length > 0) {
        await trx
          .insertInto('processor_budgets')
          .values(missing.map((key) => ({ key, sends: '[]' })))
          .onConflict((oc) => oc.column('key').doNothing())
          .execute();
      }
      const { rows } = await sql<{ key: string; sends: string; now: number }>`
        select key, sends, extract(epoch from clock_timestamp()) * 1000 as now
        from processor_budgets where key in (${account}, ${endpointKey}) order by key for update`.execute(trx);
      for (const key of keys) this.#known.add(key);
      const log = (key: string): SendLog => JSON.parse(rows.find((r) => r.key === key)?.sends ?? '[]') as SendLog;
      const now = Number(rows[0]?.now ?? Date.now());
      const result = decide(log(account), log(endpointKey), now, limits, priority);
      if (result.decision.granted) {
        await trx.updateTable('processor_budgets').set({ sends: JSON.stringify(result.account) }).where('key', '=', account).execute();
        await trx.updateTable('processor_budgets').set({ sends: JSON.stringify(result.endpoint) }).where('key', '=', endpointKey).execute();
      }
      return result.decision;
    });
  }
}

/** A call that waited longer for the budget than its own timeout allows. */
export class BudgetTimeoutError extends Error {
  override readonly name = 'BudgetTimeoutError';
}

interface Waiter {
  endpoint: string;
  priority: Priority;
  resolve(): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * One account's queue: calls wait here, highest priority first and in arrival order within a
 * priority, and are let through as the ledger allows. A call whose endpoint is full does not hold up
 * calls to other endpoints; a call the account's window refuses holds up everything after it, since
 * those have the same or a lower priority and so a smaller share.
 */
export class ProcessorBudget {
  readonly #queue: Waiter[] = [];
  #pumping = false;
  #wake: (() => void) | null = null;
  /** A call arrived while the queue was being looked at: look again before sleeping. */
  #arrived = false;

  constructor(
    private readonly ledger: BudgetLedger,
    /** The account's key in the ledger: mode and a hash of the secret key, never the key itself. */
    readonly account: string,
    readonly limits: BudgetLimits,
  ) {}

  /** Resolves when the call may be sent; rejects with BudgetTimeoutError after `timeoutMs`. */
  acquire(endpoint: string, priority: Priority, timeoutMs: number): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        endpoint,
        priority,
        resolve,
        reject,
        timer: setTimeout(() => {
          const at = this.#queue.indexOf(waiter);
          if (at < 0) return;
          this.#queue.splice(at, 1);
          reject(new BudgetTimeoutError(`waited ${timeoutMs} ms for the processor's rate budget (${endpoint})`));
        }, timeoutMs),
      };
      // Sorted insert: a new call goes after every call of its priority or a higher one.
      let at = this.#queue.length;
      while (at > 0 && PRIORITY_ORDER[this.#queue[at - 1]!.priority] > PRIORITY_ORDER[priority]) at -= 1;
      this.#queue.splice(at, 0, waiter);
      if (!this.#pumping) void this.#pump();
      else if (this.#wake) this.#wake();
      else this.#arrived = true;
    });
  }

  /** Calls waiting now (for tests and logs). */
  get waiting(): number {
    return this.#queue.length;
  }

  async #pump(): Promise<void> {
    this.#pumping = true;
    try {
      while (this.#queue.length > 0) {
        this.#arrived = false;
        let soonest = Number.POSITIVE_INFINITY;
        const fullEndpoints = new Set<string>();
        for (const waiter of [...this.#queue]) {
          if (fullEndpoints.has(waiter.endpoint) || !this.#queue.includes(waiter)) continue;
          let decision: Decision;
          try {
            decision = await this.ledger.take(this.account, waiter.endpoint, waiter.priority, this.limits);
          } catch (error) {
            // The ledger (the database) failed: this call fails as its processor call would have.
            this.#settle(waiter);
            waiter.reject(error instanceof Error ? error : new Error(String(error)));
            continue;
          }
          if (decision.granted) {
            this.#settle(waiter);
            waiter.resolve();
            continue;
          }
          soonest = Math.min(soonest, decision.waitMs);
          if (decision.limitedBy === 'account') break;
          fullEndpoints.add(waiter.endpoint);
        }
        if (this.#queue.length === 0) break;
        if (soonest === Number.POSITIVE_INFINITY || this.#arrived) {
          this.#arrived = false;
          continue;
        }
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            this.#wake = null;
            resolve();
          }, soonest);
          // A new call (perhaps a payment the reads in front of it cannot hold up) is looked at now.
          this.#wake = () => {
            clearTimeout(timer);
            this.#wake = null;
            resolve();
          };
        });
      }
    } finally {
      this.#pumping = false;
    }
  }

  #settle(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    const at = this.#queue.indexOf(waiter);
    if (at >= 0) this.#queue.splice(at, 1);
  }
}

/** The ledger key of a platform key: its mode and a hash, so no secret is written to the database. */
export function accountKey(secretKey: string): { account: string; mode: 'test' | 'live' } {
  // Restricted keys (rk_live_…) are live too; anything unrecognised gets test mode's stricter limits.
  const mode = /^[a-z]+_live_/.test(secretKey) ? 'live' : 'test';
  return { account: `${mode}:${createHash('sha256').update(secretKey).digest('hex').slice(0, 24)}`, mode };
}

/**
 * The ledger every instance shares: the database's on PostgreSQL, where several gateways may send
 * on the same platform account; none on SQLite (one process), where each process keeps its own.
 */
export function sharedBudgetLedger(store: Store): BudgetLedger | undefined {
  return store.dialect === 'postgres' ? new PostgresLedger(store.db) : undefined;
}
