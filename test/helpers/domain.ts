import pino from 'pino';
import type { Clock } from '../../shared/time.js';
import { createMerchant } from '../../server/accounts/merchants.js';
import type { Scope } from '../../server/accounts/scope.js';
import { openStore, type Store } from '../../server/db/store.js';
import { InMemoryProcessor } from '../../server/processor/fake.js';
import { buildServices, type Services } from '../../server/services.js';
import { openStoreKeyring, type StoreKeyring } from '../../server/db/encryption.js';
import { Keyring } from '../../shared/crypto/keyring.js';
import { keySourceOf } from '../../shared/crypto/key-source.js';
import { backendFlags, releaseDataDir, seedDataDir, seedSqliteDataDir } from './db.js';
import { tempDir } from './tmp.js';

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(public ms = Date.UTC(2026, 10, 23, 12)) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface Domain {
  /** The temporary data dir: its key file, and on PostgreSQL its schema (helpers/db.ts). */
  dataDir: string;
  store: Store;
  /** The store's main keys (a key file made in the temporary data dir). */
  cipher: StoreKeyring;
  clock: ManualClock;
  processor: InMemoryProcessor;
  services: Services;
  /** A merchant's test-mode scope. */
  scope: Scope;
  close(): Promise<void>;
}

/**
 * The services over the suite's real database (SQLite, or PostgreSQL in its pass) and the
 * in-memory processor: what unit tests of the domain run on, with no server, no port, no simulator.
 * Each starts migrated and empty: on SQLite a copy of the run's migrated database, on PostgreSQL a
 * schema of its own, new or emptied.
 */
export async function openDomain(options: { recoveryRetryScale?: number; clock?: ManualClock; sqlite?: boolean } = {}): Promise<Domain> {
  const dir = tempDir('pos-domain-');
  // `sqlite`: the embedded store whichever backend the suite runs on, for what only it has (backups).
  if (options.sqlite) seedSqliteDataDir(dir.path);
  else seedDataDir(dir.path);
  const store = await openStore({ dataDir: dir.path, ...(options.sqlite ? {} : backendFlags(dir.path)) });
  const clock = options.clock ?? new ManualClock();
  const cipher = await openStoreKeyring(store, new Keyring(keySourceOf({ dataDir: dir.path })), { now: clock.now() });
  const processor = new InMemoryProcessor();
  const logger = pino({ level: 'silent' });
  const services = buildServices({ store, cipher, clock, logger, processor, publicUrl: () => 'http://pos.test', ...(options.recoveryRetryScale ? { recoveryRetryScale: options.recoveryRetryScale } : {}) });
  const { merchant } = await createMerchant(store, clock, { businessName: 'Corner Shop' });
  return {
    dataDir: dir.path,
    store,
    cipher,
    clock,
    processor,
    services,
    scope: { merchantId: merchant.id, mode: 'test' },
    async close() {
      await store.close();
      if (!options.sqlite) await releaseDataDir(dir.path);
      dir.cleanup();
    },
  };
}
