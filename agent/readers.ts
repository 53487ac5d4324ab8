import { toIsoTimestamp, type Clock } from '../shared/time.js';
import type { ReaderActivity, ReaderState } from '../shared/agent-protocol.js';
import type { ReaderRef } from '../shared/agent-upstream.js';
import { IDLE, isOutcome, type Observation } from './activity.js';
import type { RegistryEntry } from './state.js';

/**
 * How long an outcome (approved, declined, canceled on the reader) is shown before the reader is
 * idle again. Ten seconds is about how long a reader's own result screen stays up.
 */
export const OUTCOME_HOLD_MS = 10_000;

/** Transactions remembered for the amount and currency shown beside a reader's activity. */
const MAX_REMEMBERED_TRANSACTIONS = 1_000;

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
  /** The tick of the observation or command that set the current activity. */
  tick: number;
  /** The outcome last cleared by the hold timer: polling it again does not bring it back. */
  cleared: string | null;
  outcomeKey: string | null;
  holdTimer: NodeJS.Timeout | undefined;
}

export interface BookListener {
  /** One reader's presence or activity changed. */
  reader(state: ReaderState, activityChanged: boolean, ref: ReaderRef): void;
  /** The set of readers changed (one appeared or went away). */
  readers(states: ReaderState[]): void;
}

export function refOf(key: string): ReaderRef {
  return key.startsWith('serial:') ? { serial_number: key.slice('serial:'.length) } : { processor_terminal_id: key };
}

/**
 * Every reader the agent follows, by key (`tmr_…`, or `serial:<serial number>` for serial readers
 * the server does not know yet), with presence and activity. Drivers feed it observations; it
 * decides what is news and tells the listener.
 *
 * Observations carry the tick taken when the poll or command that produced them started; one
 * older than the current activity's tick is stale (a slow poll answering after a newer one) and
 * is ignored, so activities never go backwards.
 */
export class ReaderBook {
  readonly #readers = new Map<string, Tracked>();
  readonly #transactions = new Map<string, { amount: number; currency: string }>();
  #tick = 0;

  constructor(
    private readonly clock: Clock,
    private readonly listener: BookListener,
  ) {}

  nextTick(): number {
    this.#tick += 1;
    return this.#tick;
  }

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

  rememberTransaction(id: string, amount: number, currency: string): void {
    this.#transactions.delete(id);
    this.#transactions.set(id, { amount, currency });
    if (this.#transactions.size > MAX_REMEMBERED_TRANSACTIONS) this.#transactions.delete(this.#transactions.keys().next().value!);
  }

  /** Adds a reader or refreshes what is known about it (ids and names learnt from the server). */
  upsert(key: string, info: ReaderInfo): void {
    const existing = this.#readers.get(key);
    const now = toIsoTimestamp(this.clock.now());
    if (!existing) {
      this.#readers.set(key, {
        info,
        tick: 0,
        cleared: null,
        outcomeKey: null,
        holdTimer: undefined,
        state: {
          id: info.id ?? key,
          processor_terminal_id: info.processor_terminal_id,
          name: info.name,
          status: 'offline',
          last_seen_at: null,
          activity: 'idle',
          transaction_id: null,
          amount: null,
          currency: null,
          failure_code: null,
          updated_at: now,
        },
      });
      this.listener.readers(this.states());
      return;
    }
    const nextId = info.id ?? existing.state.id;
    // A reader moved to another location may print receipts by another policy: that is news too.
    if (nextId === existing.state.id && info.name === existing.state.name && info.processor_terminal_id === existing.state.processor_terminal_id && info.location_id === existing.info.location_id) {
      existing.info = info;
      return;
    }
    existing.info = info;
    existing.state = { ...existing.state, id: nextId, name: info.name, processor_terminal_id: info.processor_terminal_id, updated_at: now };
    this.listener.readers(this.states());
  }

  remove(key: string): void {
    const t = this.#readers.get(key);
    if (!t) return;
    clearTimeout(t.holdTimer);
    this.#readers.delete(key);
    this.listener.readers(this.states());
  }

  setPresence(key: string, online: boolean): void {
    const t = this.#readers.get(key);
    if (!t) return;
    const now = this.clock.now();
    const status = online ? 'online' : 'offline';
    const lastSeen = online ? toIsoTimestamp(now) : t.state.last_seen_at;
    if (status === t.state.status) {
      t.state.last_seen_at = lastSeen;
      return;
    }
    t.state = { ...t.state, status, last_seen_at: lastSeen, updated_at: toIsoTimestamp(now) };
    this.listener.reader(t.state, false, refOf(key));
  }

  /** An observation of what the reader is doing, from a poll or a command started at `tick`. */
  observe(key: string, observation: Observation, tick: number): void {
    const t = this.#readers.get(key);
    if (!t || tick < t.tick) return;
    let obs = observation;
    if (obs.outcome_key !== null && obs.outcome_key === t.cleared) obs = IDLE;
    // A card being processed never goes back to waiting for the same payment: such a reading was
    // taken between the agent presenting the card and the processor noticing it.
    if (t.state.activity === 'processing' && obs.activity === 'waiting_for_card' && obs.transaction_id === t.state.transaction_id) return;
    if (obs.activity === t.state.activity && obs.transaction_id === t.state.transaction_id && obs.failure_code === t.state.failure_code) {
      t.tick = tick;
      return;
    }
    this.#set(key, t, obs, tick);
  }

  #set(key: string, t: Tracked, obs: Observation, tick: number): void {
    clearTimeout(t.holdTimer);
    t.holdTimer = undefined;
    t.tick = tick;
    t.outcomeKey = obs.outcome_key;
    const txn = obs.transaction_id ? this.#transactions.get(obs.transaction_id) : undefined;
    t.state = {
      ...t.state,
      activity: obs.activity,
      transaction_id: obs.transaction_id,
      failure_code: obs.failure_code,
      amount: txn?.amount ?? (obs.transaction_id && obs.transaction_id === t.state.transaction_id ? t.state.amount : null),
      currency: txn?.currency ?? (obs.transaction_id && obs.transaction_id === t.state.transaction_id ? t.state.currency : null),
      updated_at: toIsoTimestamp(this.clock.now()),
    };
    this.listener.reader(t.state, true, refOf(key));
    if (isOutcome(obs.activity)) {
      t.holdTimer = setTimeout(() => {
        t.cleared = t.outcomeKey;
        this.#set(key, t, IDLE, this.nextTick());
      }, OUTCOME_HOLD_MS);
      t.holdTimer.unref();
    }
  }

  /** What the agent itself knows happened (it sent the payment, or the tap). */
  mark(key: string, activity: ReaderActivity, transactionId: string | null): void {
    const t = this.#readers.get(key);
    if (!t) return;
    this.#set(key, t, { activity, transaction_id: transactionId, failure_code: null, outcome_key: null }, this.nextTick());
  }

  close(): void {
    for (const t of this.#readers.values()) clearTimeout(t.holdTimer);
  }
}
