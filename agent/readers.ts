import { toIsoTimestamp, type Clock } from '../shared/time.js';
import type { ReaderActivity, ReaderState } from '../shared/agent-protocol.js';
import type { ReaderRef, ReaderStatePush } from '../shared/agent-upstream.js';
import type { RegistryEntry } from './state.js';

/**
 * How long an outcome (approved, declined, canceled on the reader) is shown before the reader is
 * idle again. Ten seconds is about how long a reader's own result screen stays up.
 */
export const OUTCOME_HOLD_MS = 10_000;

export type DriverKind = RegistryEntry['driver'];

export interface ReaderInfo {
  driver: DriverKind;
  id: string | null;
  processor_terminal_id: string;
  name: string;
  serial_number: string | null;
  /** The terminal location it stands at, when the server said. */
  location_id: string | null;
}

interface Tracked {
  info: ReaderInfo;
  state: ReaderState;
  /** The outcome last cleared by the hold timer: the server repeating it does not bring it back. */
  cleared: string | null;
  outcomeKey: string | null;
  holdTimer: NodeJS.Timeout | undefined;
}

export interface BookListener {
  /** One reader's presence, activity or payment changed; `activityChanged` when what it is doing did. */
  reader(state: ReaderState, activityChanged: boolean, ref: ReaderRef): void;
  /** The set of readers changed (one appeared or went away). */
  readers(states: ReaderState[]): void;
}

export function refOf(key: string): ReaderRef {
  return key.startsWith('serial:') ? { serial_number: key.slice('serial:'.length) } : { processor_terminal_id: key };
}

export function isOutcome(activity: ReaderActivity): boolean {
  return activity === 'approved' || activity === 'declined' || activity === 'canceled_on_reader';
}

/** Identifies one outcome of one action, so an outcome already shown and cleared is not shown again. */
function outcomeKeyOf(view: ReaderStatePush): string | null {
  if (!isOutcome(view.activity) || !view.action) return null;
  return `${view.action.payment_intent_id ?? ''}:${view.action.status}:${view.action.failure_code ?? ''}`;
}

/**
 * The reader as the counter gets it: the server's view (the reader with its payment) as it is, with
 * the flat fields older counters read. `idle` carries no payment.
 */
function shownOf(view: ReaderStatePush, idle: boolean, now: string): ReaderState {
  const base = { id: view.id, processor_terminal_id: view.processor_terminal_id, name: view.name, status: view.status, last_seen_at: view.last_seen_at };
  if (idle || view.activity === 'idle') {
    return { ...base, activity: 'idle', transaction_id: null, amount: null, currency: null, failure_code: null, updated_at: view.action?.updated_at ?? now, payment: null };
  }
  return {
    ...base,
    activity: view.activity,
    transaction_id: view.payment?.id ?? view.action?.transaction_id ?? null,
    amount: view.payment?.amount ?? view.action?.amount ?? null,
    currency: view.payment?.currency ?? view.action?.currency ?? null,
    failure_code: view.action?.failure_code ?? null,
    updated_at: view.action?.updated_at ?? now,
    payment: view.payment,
  };
}

const sameShown = (a: ReaderState, b: ReaderState): boolean => JSON.stringify({ ...a, updated_at: '' }) === JSON.stringify({ ...b, updated_at: '' });

/**
 * Every reader the agent follows, by key (`tmr_…`), as the server last showed it: the server joins
 * each reader with its payment and pushes the result (docs/agent-protocol.md, `reader_state`); the
 * book shows that view, holds an outcome on screen for OUTCOME_HOLD_MS, and tells the listener
 * what changed.
 */
export class ReaderBook {
  readonly #readers = new Map<string, Tracked>();

  constructor(
    private readonly clock: Clock,
    private readonly listener: BookListener,
  ) {}

  keys(): string[] {
    return [...this.#readers.keys()];
  }

  get(key: string): ReaderState | undefined {
    return this.#readers.get(key)?.state;
  }

  info(key: string): ReaderInfo | undefined {
    return this.#readers.get(key)?.info;
  }

  states(): ReaderState[] {
    return [...this.#readers.values()].map((t) => t.state);
  }

  /** Finds a reader by its tmr_ id, uuid or key. */
  find(reader: string): string | undefined {
    if (this.#readers.has(reader)) return reader;
    for (const [key, t] of this.#readers) if (t.state.id === reader || t.state.processor_terminal_id === reader) return key;
    return undefined;
  }

  /** A reader known from an earlier run: shown offline and idle until the server's view of it arrives. */
  remember(key: string, info: ReaderInfo, lastSeenAt: string | null): void {
    if (this.#readers.has(key)) return;
    this.#readers.set(key, {
      info,
      cleared: null,
      outcomeKey: null,
      holdTimer: undefined,
      state: {
        id: info.id ?? key,
        processor_terminal_id: info.processor_terminal_id,
        name: info.name,
        status: 'offline',
        last_seen_at: lastSeenAt,
        activity: 'idle',
        transaction_id: null,
        amount: null,
        currency: null,
        failure_code: null,
        updated_at: toIsoTimestamp(this.clock.now()),
        payment: null,
      },
    });
    this.listener.readers(this.states());
  }

  /**
   * The server's view of a reader. An outcome older than the hold is over (a reconnect's snapshot
   * does not bring back a result the counter showed long ago), and one the hold already cleared
   * stays cleared.
   */
  show(key: string, info: ReaderInfo, view: ReaderStatePush): void {
    const now = this.clock.now();
    const existing = this.#readers.get(key);
    const t: Tracked = existing ?? { info, cleared: null, outcomeKey: null, holdTimer: undefined, state: shownOf(view, true, toIsoTimestamp(now)) };
    // A reader moved to another location may print receipts by another policy: that is news too.
    const listChanged = !existing || existing.info.location_id !== info.location_id || existing.state.name !== view.name || existing.state.id !== view.id;
    t.info = info;
    this.#readers.set(key, t);
    const outcomeKey = outcomeKeyOf(view);
    const stale = outcomeKey !== null && (outcomeKey === t.cleared || (view.action !== null && Date.parse(view.action.updated_at) + OUTCOME_HOLD_MS < now));
    const next = shownOf(view, stale, toIsoTimestamp(now));
    const before = t.state;
    const activityChanged = !existing || before.activity !== next.activity || before.transaction_id !== next.transaction_id || before.failure_code !== next.failure_code;
    if (activityChanged) {
      clearTimeout(t.holdTimer);
      t.holdTimer = undefined;
      t.outcomeKey = stale ? null : outcomeKey;
      if (t.outcomeKey !== null) {
        t.holdTimer = setTimeout(() => {
          t.holdTimer = undefined;
          t.cleared = t.outcomeKey;
          const idle = { ...t.state, activity: 'idle' as const, transaction_id: null, amount: null, currency: null, failure_code: null, payment: null, updated_at: toIsoTimestamp(this.clock.now()) };
          t.state = idle;
          this.listener.reader(idle, true, refOf(key));
        }, OUTCOME_HOLD_MS);
        t.holdTimer.unref();
      }
    }
    t.state = next;
    if (listChanged) this.listener.readers(this.states());
    if (!existing || !sameShown(before, next)) this.listener.reader(next, activityChanged, refOf(key));
  }

  remove(key: string): void {
    const t = this.#readers.get(key);
    if (!t) return;
    clearTimeout(t.holdTimer);
    this.#readers.delete(key);
    this.listener.readers(this.states());
  }

  close(): void {
    for (const t of this.#readers.values()) clearTimeout(t.holdTimer);
  }
}
