import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/time.js';
import type { Executor, Store } from './store.js';

/**
 * Named leases in the database: of several server instances on one database, only the holder of a
 * lease does the work it guards (the sweeps), and another takes over once it lapses. One
 * conditional upsert, the same on SQLite and PostgreSQL.
 */
export class Leases {
  /** This process's identity as a lease holder. */
  readonly holder = randomUUID();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** Takes or renews the lease for `ttlMs`; false when another live holder has it. */
  async acquire(name: string, ttlMs: number): Promise<boolean> {
    const now = this.clock.now();
    const row = await this.store.db
      .insertInto('leases')
      .values({ name, holder: this.holder, expires_at: now + ttlMs })
      .onConflict((oc) =>
        oc
          .column('name')
          .doUpdateSet({ holder: this.holder, expires_at: now + ttlMs })
          .where((eb) => eb.or([eb('leases.expires_at', '<', now), eb('leases.holder', '=', this.holder)])),
      )
      .returning('holder')
      .executeTakeFirst();
    return row?.holder === this.holder;
  }

  /**
   * Every instance keeps an `instance:<holder>` lease while it runs, so others can tell whether the
   * holder of some lock is still alive.
   */
  renewPresence(ttlMs: number): Promise<boolean> {
    return this.acquire(`instance:${this.holder}`, ttlMs);
  }

  /** Whether the instance `holder` renewed its presence lease and it has not run out. */
  async isAlive(holder: string, db: Executor = this.store.db): Promise<boolean> {
    if (holder === this.holder) return true;
    const row = await db.selectFrom('leases').select('expires_at').where('name', '=', `instance:${holder}`).executeTakeFirst();
    return row !== undefined && row.expires_at >= this.clock.now();
  }

  async release(name: string): Promise<void> {
    await this.store.db.deleteFrom('leases').where('name', '=', name).where('holder', '=', this.holder).execute();
  }
}

/** What keeps an instance counted alive while it holds idempotency locks. */
export interface Presence {
  /** Counts this instance alive until the returned release is called (and for the lease's TTL after). */
  hold(): Promise<() => void>;
}

/**
 * Presence for an instance with no background loop (`pos server --role api`): its lease is renewed
 * only while it holds idempotency locks, so an idle API instance sends its database nothing. A
 * request renews it before taking a lock when a third of the TTL has passed since the last renewal
 * (so a peer never sees a fresh lock under a lapsed lease), and a timer renews it at that pace while
 * any request holds one, however long the request takes.
 */
export class PresenceOnDemand implements Presence {
  #holds = 0;
  #renewedAt = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | undefined;
  #renewing: Promise<boolean> | undefined;

  constructor(
    private readonly leases: Leases,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  async hold(): Promise<() => void> {
    this.#holds += 1;
    if (this.#holds === 1) {
      this.#timer = setInterval(() => void this.#renew().catch(() => undefined), this.ttlMs / 3);
      this.#timer.unref();
    }
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.#holds -= 1;
      if (this.#holds === 0) clearInterval(this.#timer);
    };
    try {
      if (this.clock.now() - this.#renewedAt > this.ttlMs / 3) await this.#renew();
    } catch (err) {
      release();
      throw err;
    }
    return release;
  }

  #renew(): Promise<boolean> {
    this.#renewing ??= (async () => {
      const at = this.clock.now();
      try {
        const held = await this.leases.renewPresence(this.ttlMs);
        this.#renewedAt = at;
        return held;
      } finally {
        this.#renewing = undefined;
      }
    })();
    return this.#renewing;
  }
}
