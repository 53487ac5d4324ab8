import type { ReaderStatePush } from '../../shared/agent-upstream.js';
import type { DriverKind } from '../readers.js';
import type { DriverContext, ReaderDriver } from './types.js';

export interface ProcessorDriverOptions {
  /** Follow processor readers of the merchant's locations (`--no-processor-readers` turns it off). */
  includeProcessorReaders: boolean;
  /** tmr_ ids registered by the simulated driver: reported as `simulated`. */
  simulated: () => ReadonlySet<string>;
}

/**
 * Readers the processor drives (physical readers at the merchant's locations, and simulated ones).
 * Nothing is polled: the server keeps each reader's action from the processor's events, joins it
 * with its payment and pushes that view over the upstream websocket (docs/agent-protocol.md): every
 * reader after the welcome (`reader_states`), then each change (`reader_state`). The book shows the
 * view as it comes.
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
    // A snapshot after a reconnect starts the order afresh (the server's seq is per merchant and
    // mode). The same seq again is the same action with news of its payment.
    if (!snapshot && s.seq < (this.#seq.get(key) ?? -1)) return true;
    this.#seq.set(key, s.seq);
    this.#mine.add(key);
    this.ctx.book.show(key, { driver: kind, id: s.id, processor_terminal_id: key, name: s.name, serial_number: s.serial_number, location_id: s.location_id }, s);
    return true;
  }
}
