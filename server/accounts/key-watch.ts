import type { Logger } from 'pino';
import type { Clock } from '../../shared/time.js';
import type { Mode } from '../db/schema.js';
import type { Store } from '../db/store.js';

/** Why a held key stopped working: revoked (or gone), or past its `expires_at` (a roll's grace ended). */
export type KeyEnd = 'revoked' | 'expired';

/** The key a long-lived connection authenticated with. */
export interface HeldKey {
  keyId: string;
  merchantId: string;
  mode: Mode;
}

/** After a failed read of a key's state it is read again this much later: a database that failed once likely fails again at once. */
const RETRY_MS = 1_000;

/** setTimeout's longest delay (about 24.8 days); an expiry further off re-arms when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

interface Watched {
  key: HeldKey;
  /** Each held connection's end, one entry per `hold` call. */
  holders: Set<(why: KeyEnd) => void>;
  timer: NodeJS.Timeout | undefined;
  retry: NodeJS.Timeout | undefined;
  unsubscribe: () => void;
  reading: boolean;
  again: boolean;
}

/**
 * The long-lived connections of this process (event streams, agent sockets) by the key they
 * authenticated with, ended when that key stops working: nothing re-checks a key per event or per
 * heartbeat. A revoke or roll marks a `keys` notice of its merchant and mode on its commit
 * (server/db/notify.ts: in process on SQLite, LISTEN/NOTIFY across PostgreSQL instances); each held
 * key of that merchant and mode is then read once (revoked? new `expires_at`?), and a timer ends
 * its connections at a known `expires_at`. A key is read when it is first held, on each such notice,
 * and whenever the store says notices may have been missed (a commit by another SQLite process, a
 * PostgreSQL listener reconnected): never per event.
 */
export class KeyWatch {
  readonly #keys = new Map<string, Watched>();
  #stopped = false;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /**
   * Ends `end` (once) when the key stops working: revoked, rolled with no grace, or its grace over.
   * Returns the release to call when the connection ends by itself.
   */
  hold(key: HeldKey, end: (why: KeyEnd) => void): () => void {
    if (this.#stopped) return () => undefined;
    let watched = this.#keys.get(key.keyId);
    if (!watched) {
      const created: Watched = { key, holders: new Set(), timer: undefined, retry: undefined, unsubscribe: () => undefined, reading: false, again: false };
      watched = created;
      this.#keys.set(key.keyId, created);
      // Subscribed before the first read, so a revoke committed after that read is heard.
      created.unsubscribe = this.store.notifications.subscribe({ topic: 'keys', merchantId: key.merchantId, mode: key.mode }, () => void this.#read(created));
      // The connection authenticated a moment ago, but a revoke may have committed since.
      void this.#read(created);
    }
    const entry = (why: KeyEnd) => end(why);
    watched.holders.add(entry);
    const held = watched;
    return () => {
      held.holders.delete(entry);
      if (held.holders.size === 0) this.#forget(held);
    };
  }

  /** Keys held now (tests and diagnostics). */
  get size(): number {
    return this.#keys.size;
  }

  /** Forgets every key and its timers without ending connections (the server closes those itself). */
  stop(): void {
    this.#stopped = true;
    for (const watched of [...this.#keys.values()]) this.#forget(watched);
  }

  async #read(watched: Watched): Promise<void> {
    if (this.#keys.get(watched.key.keyId) !== watched) return;
    if (watched.reading) {
      watched.again = true;
      return;
    }
    watched.reading = true;
    clearTimeout(watched.retry);
    try {
      do {
        watched.again = false;
        const row = await this.store.db.selectFrom('api_keys').select(['revoked_at', 'expires_at']).where('id', '=', watched.key.keyId).executeTakeFirst();
        if (this.#keys.get(watched.key.keyId) !== watched) return;
        const expiresAt = row?.expires_at == null ? null : Number(row.expires_at);
        if (!row || row.revoked_at !== null) return this.#end(watched, 'revoked');
        if (expiresAt !== null && expiresAt <= this.clock.now()) return this.#end(watched, 'expired');
        this.#arm(watched, expiresAt);
      } while (watched.again);
    } catch (err) {
      this.logger.warn({ err, key_id: watched.key.keyId }, 'reading a held key failed; trying again shortly');
      if (this.#keys.get(watched.key.keyId) === watched) {
        watched.retry = setTimeout(() => void this.#read(watched), RETRY_MS);
        watched.retry.unref();
      }
    } finally {
      watched.reading = false;
    }
  }

  #arm(watched: Watched, expiresAt: number | null): void {
    clearTimeout(watched.timer);
    watched.timer = undefined;
    if (expiresAt === null) return;
    const delay = Math.max(0, Math.min(expiresAt - this.clock.now(), MAX_TIMER_MS));
    watched.timer = setTimeout(() => {
      if (this.clock.now() >= expiresAt) this.#end(watched, 'expired');
      else this.#arm(watched, expiresAt);
    }, delay);
    watched.timer.unref();
  }

  #end(watched: Watched, why: KeyEnd): void {
    const holders = [...watched.holders];
    this.#forget(watched);
    this.logger.info({ key_id: watched.key.keyId, merchant_id: watched.key.merchantId, connections: holders.length, why }, 'API key stopped working: closing its connections');
    for (const end of holders) {
      try {
        end(why);
      } catch (err) {
        // One connection failing to close must not keep the others open.
        this.logger.warn({ err }, 'closing a connection of a stopped key failed');
      }
    }
  }

  #forget(watched: Watched): void {
    if (this.#keys.get(watched.key.keyId) !== watched) return;
    this.#keys.delete(watched.key.keyId);
    watched.holders.clear();
    clearTimeout(watched.timer);
    clearTimeout(watched.retry);
    watched.unsubscribe();
  }
}
