import type { ReaderLiveState } from '../../shared/api/types.js';
import { activityOf, isBusy } from '../activity.js';
import type { DriverKind } from '../readers.js';
import type { DriverContext, ReaderDriver } from './types.js';

/**
 * A reader with an action in progress is polled this often: a tap and its result show on the
 * counter within a tenth of a second, and only readers mid-payment cost anything.
 */
export const FAST_POLL_MS = 100;

/** After a command, a reader is followed closely this long even before its action shows. */
const WATCH_MS = 3_000;

export interface ProcessorDriverOptions {
  /** How often every reader is looked at (presence, actions started elsewhere). */
  slowPollMs: number;
  /** Follow processor readers of the merchant's locations (`--no-processor-readers` turns it off). */
  includeProcessorReaders: boolean;
  /** tmr_ ids registered by the simulated driver: reported as `simulated`. */
  simulated: () => ReadonlySet<string>;
}

/**
 * Readers the processor drives (physical readers at the merchant's locations, and simulated
 * ones): presence and actions read through the server's agent-facing reader-state endpoints, one
 * list call for all of them every slow interval, and one call per busy reader every 100 ms.
 */
export class ProcessorDriver implements ReaderDriver {
  readonly kind = 'processor' as const;
  #slowTimer: NodeJS.Timeout | undefined;
  #stopped = false;
  readonly #mine = new Set<string>();
  readonly #fast = new Map<string, number>();
  readonly #inFlight = new Set<string>();
  #fastTimer: NodeJS.Timeout | undefined;
  #slowRunning: Promise<void> | undefined;

  constructor(
    private readonly ctx: DriverContext,
    private readonly options: ProcessorDriverOptions,
  ) {}

  handles(key: string): boolean {
    return this.#mine.has(key);
  }

  async start(): Promise<void> {
    await this.pollAll();
    const loop = () => {
      if (this.#stopped) return;
      this.#slowTimer = setTimeout(() => {
        this.#slowRunning = this.pollAll().finally(loop);
      }, this.options.slowPollMs);
    };
    loop();
    this.#fastTimer = setInterval(() => this.#pollBusy(), FAST_POLL_MS);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#slowTimer);
    clearInterval(this.#fastTimer);
    await this.#slowRunning;
  }

  watch(key: string): void {
    if (this.#mine.has(key)) this.#fast.set(key, Date.now() + WATCH_MS);
  }

  paymentStarted(key: string): void {
    this.watch(key);
  }

  /** Every reader of the merchant, once. Failures are logged; the next pass tries again. */
  async pollAll(): Promise<void> {
    const tick = this.ctx.book.nextTick();
    let states: ReaderLiveState[];
    try {
      states = (await this.ctx.api.readerStates()).data;
    } catch (err) {
      this.ctx.logger.warn({ err: err instanceof Error ? err.message : err }, 'could not read reader states from the server');
      return;
    }
    const simulated = this.options.simulated();
    const seen = new Set<string>();
    for (const s of states) {
      const kind: DriverKind = simulated.has(s.processor_terminal_id) ? 'simulated' : 'processor';
      if (kind === 'processor' && !this.options.includeProcessorReaders) continue;
      const key = s.processor_terminal_id;
      seen.add(key);
      this.#mine.add(key);
      this.ctx.book.upsert(key, { driver: kind, id: s.id, processor_terminal_id: key, name: s.name, serial_number: s.serial_number });
      this.#apply(key, s, tick);
    }
    for (const key of [...this.#mine]) {
      if (seen.has(key)) continue;
      this.#mine.delete(key);
      this.#fast.delete(key);
      this.ctx.book.remove(key);
    }
  }

  #apply(key: string, s: ReaderLiveState, tick: number): void {
    this.ctx.book.setPresence(key, s.processor_status === 'online');
    const observation = activityOf(s.action);
    this.ctx.book.observe(key, observation, tick);
    if (isBusy(this.ctx.book.get(key)?.activity ?? 'idle')) this.#fast.set(key, Math.max(this.#fast.get(key) ?? 0, Date.now() + FAST_POLL_MS));
  }

  #pollBusy(): void {
    const now = Date.now();
    for (const [key, until] of this.#fast) {
      const busy = isBusy(this.ctx.book.get(key)?.activity ?? 'idle');
      if (!busy && until < now) {
        this.#fast.delete(key);
        continue;
      }
      if (this.#inFlight.has(key)) continue;
      this.#inFlight.add(key);
      const tick = this.ctx.book.nextTick();
      this.ctx.api
        .readerState(key)
        .then((s) => this.#apply(key, s.data, tick))
        .catch((err: unknown) => this.ctx.logger.debug({ err: err instanceof Error ? err.message : err, reader: key }, 'reader state poll failed'))
        .finally(() => this.#inFlight.delete(key));
    }
  }
}
