import type { Mode } from './schema.js';
import type { Trx } from './store.js';

/**
 * Notifications: a commit tells whoever waits on what it changed, so nothing has to ask the
 * database on a timer. A notice says only *what* changed for whom; listeners read the rest from the
 * database, so a notice is a few dozen bytes (PostgreSQL caps a NOTIFY payload at 8,000) and two
 * notices of the same kind in one transaction are one.
 *
 * The writer marks a notice on its transaction (`notifyOnCommit`); the store delivers it once the
 * transaction committed, and never when it rolled back:
 * - SQLite (`sqlite.ts`): in process, after the COMMIT of the group-commit batch; only this
 *   process writes events to the file.
 * - PostgreSQL (`postgres.ts`): `pg_notify` as the transaction's last statement, which PostgreSQL
 *   delivers on commit to every listening session; each process keeps one listening connection and
 *   delivers what arrives to its own listeners (its own commits come back the same way).
 * Where notices may have been lost (the listening connection dropped, another process wrote to the
 * SQLite file), every listener is woken: a listener always re-reads, so a spare wake-up costs one read.
 */
export type Notice =
  /** An event was written to the merchant's outbox in that mode (server/webhooks/outbox.ts). */
  | { topic: 'events'; merchantId: string; mode: Mode }
  /** Some reader's presence deadline appeared or moved earlier (server/terminal/presence-expiry.ts). */
  | { topic: 'presence' }
  /** A reader of the merchant in that mode changed its action state (server/terminal/reader-actions.ts). */
  | { topic: 'readers'; merchantId: string; mode: Mode }
  /** A terminal location of the merchant in that mode was created or changed (server/terminal/readers.ts). */
  | { topic: 'locations'; merchantId: string; mode: Mode }
  /** Some reader's reconciliation deadline appeared or moved earlier (server/terminal/reader-reconciler.ts). */
  | { topic: 'reader_checks' }
  /** Webhook deliveries became due outside the worker's own schedule: a resend, an endpoint enabled again, a retry set by another instance (server/webhooks/worker.ts). */
  | { topic: 'webhook_deliveries' }
  /** An event was written that the webhook fan-out has yet to see: an endpoint may want it (server/webhooks/outbox.ts). */
  | { topic: 'webhook_fanout' }
  /** A key of the merchant in that mode was revoked or rolled, so it stops working now or sooner (server/accounts/key-watch.ts). */
  | { topic: 'keys'; merchantId: string; mode: Mode }
  /** The primary main key changed: a rotation began (server/db/encryption.ts). */
  | { topic: 'main_key' };

/** Topics whose notices name a merchant and mode: a listener may follow one merchant's, or all of them (`subscribeTopic`). */
export type ScopedTopic = 'events' | 'readers';

/** The notice as a string: the payload sent through PostgreSQL and the key listeners are filed under. */
export function noticeKey(notice: Notice): string {
  switch (notice.topic) {
    case 'events':
    case 'readers':
    case 'locations':
    case 'keys':
      return `${notice.topic}:${notice.mode}:${notice.merchantId}`;
    default:
      return notice.topic;
  }
}

export interface Notifications {
  /**
   * Calls `listener` after every committed transaction, by any process on the database, that
   * notified `notice`, and whenever notices may have been missed. It must not throw; it should only
   * schedule a read. Returns the unsubscribe function.
   */
  subscribe(notice: Notice, listener: () => void): () => void;
  /** As `subscribe`, for every merchant's and mode's notice of `topic`: the process-wide loops (webhook delivery, the reconciler) follow all of them. */
  subscribeTopic(topic: ScopedTopic, listener: () => void): () => void;
}

/** Notices marked on each open transaction, by the transaction object the store handed its unit. */
const pending = new WeakMap<Trx, Set<string>>();

/** Marks `notice` to be delivered when `trx` commits. */
export function notifyOnCommit(trx: Trx, notice: Notice): void {
  const keys = pending.get(trx);
  // A transaction the store did not open for notices would drop this one silently: better loud.
  if (!keys) throw new Error('notifyOnCommit needs a transaction from store.transaction');
  keys.add(noticeKey(notice));
}

/** The store opens a unit's notices before running it... */
export function openNotices(trx: Trx): void {
  pending.set(trx, new Set());
}

/** ...and takes them when the unit is done: to deliver after commit, or to drop on failure. */
export function takeNotices(trx: Trx): Set<string> {
  const keys = pending.get(trx) ?? new Set<string>();
  pending.delete(trx);
  return keys;
}

/** Listeners of this process, by notice key. */
export class LocalListeners implements Notifications {
  readonly #byKey = new Map<string, Set<() => void>>();
  /** Told once, when the first listener subscribes: the stores start listening only then (the admin CLI never does). */
  #onFirst: (() => void) | undefined;

  constructor(onFirst?: () => void) {
    this.#onFirst = onFirst;
  }

  subscribe(notice: Notice, listener: () => void): () => void {
    return this.#add(noticeKey(notice), listener);
  }

  subscribeTopic(topic: ScopedTopic, listener: () => void): () => void {
    return this.#add(`${topic}:*`, listener);
  }

  #add(key: string, listener: () => void): () => void {
    let set = this.#byKey.get(key);
    if (!set) this.#byKey.set(key, (set = new Set()));
    // Each subscription is its own entry, so the same function subscribed twice is removed once per call.
    const entry = () => listener();
    set.add(entry);
    const first = this.#onFirst;
    this.#onFirst = undefined;
    first?.();
    return () => {
      set.delete(entry);
      if (set.size === 0 && this.#byKey.get(key) === set) this.#byKey.delete(key);
    };
  }

  deliver(keys: Iterable<string>): void {
    const topics = new Set<string>();
    for (const key of keys) {
      const set = this.#byKey.get(key);
      if (set) for (const listener of [...set]) this.#call(listener);
      const colon = key.indexOf(':');
      if (colon > 0) topics.add(`${key.slice(0, colon)}:*`);
    }
    // A topic's followers hear once per delivery, however many merchants it named.
    for (const key of topics) {
      const set = this.#byKey.get(key);
      if (set) for (const listener of [...set]) this.#call(listener);
    }
  }

  /** Notices may have been missed: every listener looks again. */
  deliverAll(): void {
    for (const set of [...this.#byKey.values()]) for (const listener of [...set]) this.#call(listener);
  }

  #call(listener: () => void): void {
    try {
      listener();
    } catch {
      // A listener that throws must not keep the others (or the committing batch) from going on.
    }
  }
}

/**
 * After a failed pass, a follower tries again this much later: a database that failed once is
 * likely to fail again at once, and a second is nothing to a stream or an agent catching up.
 */
const FOLLOW_RETRY_MS = 1_000;

/**
 * Follows what `notice` announces (or any of several notices): runs `pass` now, and again after each such notice, one pass at a
 * time (notices during a pass make exactly one more pass after it). A pass answers true when it
 * stopped at its batch size and should run again at once. A pass that throws is reported to
 * `failed` and retried after FOLLOW_RETRY_MS unless the follower was stopped. Subscribing comes
 * before the first pass, so nothing committed after the caller's starting point is missed.
 * Returns the stop function.
 *
 * There is no periodic re-read here: a notice can only go missing in ways the store notices (see
 * above), and then it wakes every listener. A timer per follower would cost the database one query
 * per open stream and agent every interval, the very thing notifications are for.
 */
export function followNotices(notifications: Notifications, notice: Notice | readonly Notice[], pass: () => Promise<boolean>, failed: (error: unknown) => void): () => void {
  let stopped = false;
  let running = false;
  let again = false;
  let retry: NodeJS.Timeout | undefined;
  const run = async (): Promise<void> => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(retry);
    running = true;
    try {
      do {
        again = false;
        if (await pass()) again = true;
      } while (again && !stopped);
    } catch (error) {
      if (!stopped) {
        failed(error);
        if (!stopped) retry = setTimeout(() => void run(), FOLLOW_RETRY_MS);
      }
    } finally {
      running = false;
    }
  };
  const unsubscribes = (Array.isArray(notice) ? notice : [notice]).map((n: Notice) => notifications.subscribe(n, () => void run()));
  void run();
  return () => {
    stopped = true;
    clearTimeout(retry);
    for (const unsubscribe of unsubscribes) unsubscribe();
  };
}
