import type { RequestLogEntry } from '../../shared/contract/request-log.js';

type Listener = (entry: RequestLogEntry) => void;

/**
 * The merchant's own API requests as they finish, for `GET /v1/request-log/stream`: kept in this
 * process only, never stored (the audit trail keeps what changed; this is a developer's live view).
 * With several instances on one database each streams the requests it answered.
 */
export class RequestLogHub {
  readonly #listeners = new Map<string, Set<Listener>>();

  static #channel(merchantId: string, mode: string): string {
    return `${merchantId}:${mode}`;
  }

  subscribe(merchantId: string, mode: string, listener: Listener): () => void {
    const channel = RequestLogHub.#channel(merchantId, mode);
    const set = this.#listeners.get(channel) ?? new Set();
    set.add(listener);
    this.#listeners.set(channel, set);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(channel);
    };
  }

  /** How many streams are open. */
  get size(): number {
    let n = 0;
    for (const set of this.#listeners.values()) n += set.size;
    return n;
  }

  /** Whether any stream follows this merchant and mode: a request nobody follows costs no entry. */
  follows(merchantId: string, mode: string): boolean {
    return this.#listeners.has(RequestLogHub.#channel(merchantId, mode));
  }

  publish(merchantId: string, mode: string, entry: RequestLogEntry): void {
    const set = this.#listeners.get(RequestLogHub.#channel(merchantId, mode));
    if (!set) return;
    for (const listener of set) listener(entry);
  }
}
