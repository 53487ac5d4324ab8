import type { ReaderStatePush } from '../../shared/agent-upstream.js';
import { observationOf } from '../activity.js';
import { OUTCOME_HOLD_MS, type DriverKind } from '../readers.js';
import type { DriverContext, ReaderDriver } from './types.js';

export interface ProcessorDriverOptions {
  /** Follow processor readers of the merchant's locations (`--no-processor-readers` turns it off). */
  includeProcessorReaders: boolean;
  /** tmr_ ids registered by the simulated driver: reported as `simulated`. */
  simulated: () => ReadonlySet<string>;
}

/**
 * Readers the processor drives (physical readers at the merchant's locations, and simulated ones).
 * Nothing is polled: the server keeps each reader's action from the processor's events and pushes
 * it over the upstream websocket (docs/agent-protocol.md): every reader after the welcome
 * (`reader_states`), then each change (`reader_state`).
 */
export class ProcessorDriver implements ReaderDriver {
  readonly kind = 'processor' as const;
  readonly #mine = new Set<string>();
  /** The seq of the last push applied per reader: an older one arriving late is dropped. */
  readonly #seq = new Map<string, number>();

  constructor(
    private readonly ctx: DriverContext,
    private readonly options: ProcessorDriverOptions,
  ) {}

  handles(key: string): boolean {
    return this.#mine.has(key);
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {}

  watch(): void {}

  paymentStarted(): void {}

  /** Every reader of the merchant, as the server sends it after each welcome: readers not in it are gone. */
  snapshot(states: readonly ReaderStatePush[]): void {
    const seen = new Set<string>();
    for (const state of states) if (this.#apply(state, true)) seen.add(state.processor_terminal_id);
    for (const key of [...this.#mine]) {
      if (seen.has(key)) continue;
      this.#mine.delete(key);
      this.#seq.delete(key);
      this.ctx.book.remove(key);
    }
  }

  /** One reader changed. */
  changed(state: ReaderStatePush): void {
    this.#apply(state, false);
  }

  #apply(s: ReaderStatePush, snapshot: boolean): boolean {
    const kind: DriverKind = this.options.simulated().has(s.processor_terminal_id) ? 'simulated' : 'processor';
    if (kind === 'processor' && !this.options.includeProcessorReaders) return false;
    const key = s.processor_terminal_id;
    // A snapshot after a reconnect starts the order afresh (the server's seq is per merchant and mode).
    if (!snapshot && s.seq <= (this.#seq.get(key) ?? -1)) return true;
    this.#seq.set(key, s.seq);
    this.#mine.add(key);
    const book = this.ctx.book;
    book.upsert(key, { driver: kind, id: s.id, processor_terminal_id: key, name: s.name, serial_number: s.serial_number, location_id: s.location_id });
    // Presence not reported yet by the processor (a reader registered before it was kept) counts as online.
    book.setPresence(key, s.processor_status !== 'offline');
    if (s.action?.transaction_id && s.action.amount !== null && s.action.currency !== null) book.rememberTransaction(s.action.transaction_id, s.action.amount, s.action.currency);
    book.observe(key, observationOf(s, Date.now(), OUTCOME_HOLD_MS), book.nextTick());
    return true;
  }
}
