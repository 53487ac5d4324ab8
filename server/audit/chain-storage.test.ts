import { Migrator } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { GENESIS_HASH, auditEntryHash, verifyAuditChain } from '../../shared/audit-chain.js';
import { newReference } from '../../shared/ids.js';
import { backendFlags, dropSchemaOf } from '../../test/helpers/db.js';
import { ManualClock } from '../../test/helpers/domain.js';
import { tempDir } from '../../test/helpers/tmp.js';
import { createMerchant } from '../accounts/merchants.js';
import type { Scope } from '../accounts/scope.js';
import { migrationProvider } from '../db/migration-provider.js';
import type { AuditLogTable } from '../db/schema.js';
import { openStore, type Store } from '../db/store.js';
import { AuditLog, presentAuditEntry } from './log.js';

/** The last migration of a store whose audit entries kept their `prev_hash` beside their hash. */
const LINKS_STORED = '0041_reader_status_seen';

/**
 * A trail written while each entry stored the hash of the one before it, on a database then
 * migrated to read that link from the entry before: the same links, the same hashes, one chain.
 */
describe('an audit trail written with its links stored', () => {
  const dir = tempDir('pos-audit-links-');
  const flags = backendFlags(dir.path);
  const clock = new ManualClock();
  let store: Store | undefined;

  afterEach(async () => {
    await store?.close();
    await dropSchemaOf(dir.path);
    dir.cleanup();
  });

  it('verifies after the migration, and entries written after it continue the chain', async () => {
    store = await openStore({ dataDir: dir.path, ...flags, migrate: false });
    const migrator = new Migrator({ db: store.db, provider: migrationProvider, allowUnorderedMigrations: true, ...(flags.databaseSchema ? { migrationTableSchema: flags.databaseSchema } : {}) });
    const { error } = await migrator.migrateTo(LINKS_STORED);
    expect(error).toBeUndefined();
    const { merchant } = await createMerchant(store, clock, { businessName: 'Corner Shop' });
    const scope: Scope = { merchantId: merchant.id, mode: 'test' };

    // Two entries as the earlier schema held them: each with the hash of the one before it.
    let previous = GENESIS_HASH;
    const written: (Omit<AuditLogTable, 'hash'> & { prev_hash: string; hash: string })[] = [];
    for (const [seq, objectId] of [
      [1, 'obj-one'],
      [2, 'obj-two'],
    ] as const) {
      const entry = {
        id: newReference('audit'),
        merchant_id: merchant.id,
        mode: 'test' as const,
        seq,
        created_at: clock.now() + seq,
        key_id: null,
        key_type: null,
        key_last4: null,
        request_id: `req_${seq}`,
        idempotency_key: null,
        operation: 'POST /v1/customers',
        target_id: null,
        object_id: objectId,
        status: 201,
        details: null,
        prev_hash: previous,
      };
      const row = { ...entry, hash: auditEntryHash(presentAuditEntry(entry)) };
      // The table as it was then, with its prev_hash column: not the Tables of today.
      await store.db.insertInto('audit_log').values(row as unknown as AuditLogTable).execute();
      written.push(row);
      previous = row.hash;
    }
    await store.db.insertInto('audit_heads').values({ merchant_id: merchant.id, mode: 'test', seq: 2, hash: previous }).execute();
    await store.close();

    store = await openStore({ dataDir: dir.path, ...flags });
    const audit = new AuditLog(store, clock);
    await audit.record(scope, { key: null, requestId: 'req_3', idempotencyKey: null, operation: 'POST /v1/customers', targetId: null, objectId: 'obj-three', status: 201 });

    const entries = (await audit.list(scope, { page: 1, size: 10 })).data;
    expect(entries.map((e) => [e.seq, e.prev_hash])).toEqual([
      [3, written[1]!.hash],
      [2, written[0]!.hash],
      [1, GENESIS_HASH],
    ]);
    expect(entries.slice(1).map((e) => e.hash)).toEqual([written[1]!.hash, written[0]!.hash]);
    expect(verifyAuditChain(entries, { expectedCount: 3 }).problem).toBeNull();

    // A page that does not hold the entry before its own reads that entry's hash all the same.
    const [second] = (await audit.list(scope, { page: 1, size: 10 }, { objectId: 'obj-two' })).data;
    expect(second).toMatchObject({ seq: 2, prev_hash: written[0]!.hash, hash: written[1]!.hash });
    const [newest] = (await audit.list(scope, { page: 1, size: 1 })).data;
    expect(newest).toMatchObject({ seq: 3, prev_hash: written[1]!.hash });
  });
});
