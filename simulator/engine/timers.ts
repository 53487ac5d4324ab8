import { randomUUID } from 'node:crypto';
import type { Store, TimerRow } from '../store.js';
import type { TimerKind, TimerQueue } from './kernel.js';

/**
 * Persisted timers: authorisation windows, ACH settlements, funds becoming available, disputes and
 * payouts moving on. A timer is a row written in the transaction that starts the wait; firing
 * deletes the row and applies the transition in one transaction, so a restart neither loses nor
 * repeats a transition. One Node timeout is armed for the earliest row.
 */

/** Node's setTimeout overflows past 2^31-1 ms; later timers are re-armed when this one fires. */
const MAX_TIMER_MS = 2_147_483_647;

export type TimerHandler = (payload: unknown) => void;

export class Timers implements TimerQueue {
  private handlers = new Map<string, TimerHandler>();
  private wake: NodeJS.Timeout | null = null;
  private closed = false;
  /** Called after timers fire, so the webhook dispatcher sends what they emitted. */
  afterFire: () => void = () => {};

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly log: (line: string) => void,
  ) {}

  on(kind: TimerKind, handler: TimerHandler): void {
    this.handlers.set(kind, handler);
  }

  schedule(kind: TimerKind, dueAt: number, payload: unknown): string {
    const id = randomUUID();
    this.store.addTimer({ id, kind, dueAt, payload });
    // Armed after the current synchronous transaction has committed.
    queueMicrotask(() => this.arm());
    return id;
  }

  cancel(id: string): void {
    this.store.takeTimer(id);
  }

  arm(): void {
    if (this.closed) return;
    if (this.wake) clearTimeout(this.wake);
    this.wake = null;
    const next = this.store.nextTimer();
    if (!next) return;
    const delay = Math.min(Math.max(0, next.dueAt - this.now()), MAX_TIMER_MS);
    this.wake = setTimeout(() => this.fireDue(), delay);
    this.wake.unref();
  }

  private fire(timer: TimerRow): void {
    const handler = this.handlers.get(timer.kind);
    try {
      this.store.transaction(() => {
        if (!this.store.takeTimer(timer.id)) return;
        handler?.(timer.payload);
      });
    } catch (error) {
      // The transition failed and was rolled back; drop the timer rather than fail forever.
      this.store.takeTimer(timer.id);
      this.log(`timer ${timer.kind} ${timer.id} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private fireDue(): void {
    if (this.closed) return;
    for (const timer of this.store.dueTimers(this.now())) this.fire(timer);
    this.afterFire();
    this.arm();
  }

  /** Fires every pending timer now, earliest first (control API, tests). Returns how many fired. */
  advanceAll(): number {
    let fired = 0;
    // A transition may schedule another timer; the bound stops a handler that always reschedules.
    for (let round = 0; round < 10; round++) {
      const pending = this.store.timers();
      if (pending.length === 0) break;
      for (const timer of pending) {
        this.fire(timer);
        fired++;
      }
    }
    this.afterFire();
    this.arm();
    return fired;
  }

  pending(): TimerRow[] {
    return this.store.timers();
  }

  close(): void {
    this.closed = true;
    if (this.wake) clearTimeout(this.wake);
  }
}
