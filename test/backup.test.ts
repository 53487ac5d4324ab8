// @backend-once the embedded SQLite store's own backups and migrations, whatever backend the suite runs on.
import { copyFileSync, existsSync, openSync, readdirSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackupSchedule } from '../server/db/backup.js';
import type { CreatePaymentState } from '../server/payments/transactions.js';
import { POS_VERSION } from '../shared/version.js';
import { json, pos, runCli } from './helpers/cli.js';
import { type Domain, openDomain } from './helpers/domain.js';
import { tempDir } from './helpers/tmp.js';
import { seedSqliteDataDir } from './helpers/db.js';

/** Payments in the store before the copy starts, and the writers that keep adding to it meanwhile. */
const BEFORE_COPY = 200;
const WRITERS = 50;

function payment(amount: number): CreatePaymentState {
  return { input: { amount, payment_method_type: 'card', confirm: true, payment_method: 'pm_card_visa', capture_method: 'automatic' }, source: 'api', terminalId: null, response: 'transaction' };
}

function integrity(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma('integrity_check', { simple: true }) as string;
  } finally {
    db.close();
  }
}

function transactionIds(file: string): Set<string> {
  const db = new Database(file, { readonly: true });
  try {
    return new Set((db.prepare('select id from transactions').all() as { id: string }[]).map((r) => r.id));
  } finally {
    db.close();
  }
}

// The embedded store only: PostgreSQL is backed up with its own tools (docs/operations.md).
describe('backups of the embedded store', () => {
  let d: Domain;
  let out: ReturnType<typeof tempDir>;
  beforeEach(async () => {
    d = await openDomain({ sqlite: true });
    out = tempDir('pos-backup-');
  });
  afterEach(async () => {
    await d.close();
    out.cleanup();
  });

  it('copies the store while payments keep being written; the restore holds every payment acknowledged before it and passes the integrity check', async () => {
    const acknowledged: string[] = [];
    let attempted = 0;
    // The writers keep going until the copy is made, however long it takes: it is made while they write.
    let copying = true;
    const worker = async () => {
      while (copying) {
        const n = attempted++;
        const result = await d.services.transactions.create(d.scope, payment(100 + n), `burst-${n}`);
        if (result.response.status === 201 && result.state.transactionId) acknowledged.push(result.state.transactionId);
      }
    };
    const burst = Promise.all(Array.from({ length: WRITERS }, worker));
    while (acknowledged.length < BEFORE_COPY) await new Promise((r) => setTimeout(r, 5));
    const before = [...acknowledged];
    const file = join(out.path, 'pos.backup.db');
    const backedUp = await runCli(['backup', '--to', file, '--data-dir', d.dataDir, '--json']);
    const duringBackup = acknowledged.length - before.length;
    copying = false;
    await burst;
    expect(backedUp.status, backedUp.stderr).toBe(0);
    expect(json(backedUp)).toMatchObject({ file, integrity: 'ok' });
    // The server kept writing while the copy was made.
    expect(duringBackup).toBeGreaterThan(0);
    expect(acknowledged.length).toBe(attempted);

    const restoredDir = join(out.path, 'restored');
    const restored = await runCli(['restore', file, '--data-dir', restoredDir]);
    expect(restored.status, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/integrity ok/);
    // The main key is not in a backup: the restore says where it must come from.
    expect(restored.stderr).toMatch(/no master\.key/);
    const restoredFile = join(restoredDir, 'pos.db');
    expect(integrity(restoredFile)).toBe('ok');
    const ids = transactionIds(restoredFile);
    expect(before.filter((id) => !ids.has(id))).toEqual([]);
    // Consistent: each payment in the copy has the events its transaction wrote with it.
    const db = new Database(restoredFile, { readonly: true });
    // A payment that reached its outcome wrote that outcome's event in the same transaction.
    const orphans = db.prepare("select count(*) as n from transactions t where t.status in ('succeeded', 'failed') and not exists (select 1 from events e where e.object_id = t.id and e.type = 'payment.' || t.status)").get() as { n: number };
    db.close();
    expect(orphans.n).toBe(0);
  });

  it('refuses to restore over a store in use, or a file that fails its integrity check', async () => {
    const file = join(out.path, 'good.db');
    expect((await runCli(['backup', '--to', file, '--data-dir', d.dataDir])).status).toBe(0);
    // The domain's store is open on d.dataDir, as a running server's would be.
    const busy = await runCli(['restore', file, '--data-dir', d.dataDir]);
    expect(busy.status).toBe(2);
    expect(busy.stderr).toMatch(/is open \(a running pos server/);

    const damaged = join(out.path, 'damaged.db');
    copyFileSync(file, damaged);
    const fd = openSync(damaged, 'r+');
    writeSync(fd, Buffer.alloc(4096, 0xff), 0, 4096, 4096 * 2);
    closeSync(fd);
    const target = join(out.path, 'new');
    const refused = await runCli(['restore', damaged, '--data-dir', target]);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/integrity check|malformed/);
    expect(existsSync(join(target, 'pos.db'))).toBe(false);

    // A backup is never written over an existing file.
    expect((await runCli(['backup', '--to', file, '--data-dir', d.dataDir])).stderr).toMatch(/exists/);
  });

  it('keeps the newest scheduled backups and removes older ones', async () => {
    const schedule = new BackupSchedule({ dataDir: d.dataDir, dir: out.path, everyMs: 3_600_000, keep: 2, logger: pino({ level: 'silent' }) });
    for (const hour of [1, 2, 3]) await schedule.runOnce(new Date(Date.UTC(2026, 10, 27, hour)));
    expect(readdirSync(out.path).sort()).toEqual(['pos-20261127T020000Z.db', 'pos-20261127T030000Z.db']);
    expect(integrity(join(out.path, 'pos-20261127T030000Z.db'))).toBe('ok');
  });
});

describe('versions of the store', () => {
  let dir: ReturnType<typeof tempDir>;
  beforeEach(() => {
    dir = tempDir('pos-migrate-');
  });
  afterEach(() => dir.cleanup());

  it('pos migrate status and up say what is applied and pending; a server older than the database refuses to start, naming both versions', async () => {
    // The run's migrated template, taken back to before the last migration (migrating from nothing takes seconds).
    seedSqliteDataDir(dir.path);
    const older = new Database(join(dir.path, 'pos.db'));
    older.exec("delete from kysely_migration where name = '0036_retention'; drop index processor_events_received; drop index webhook_deliveries_completed");
    older.close();
    const fresh = json<{ version: string; applied: unknown[]; pending: string[] }>(await runCli(['migrate', 'status', '--json', '--data-dir', dir.path]));
    expect(fresh.version).toBe(POS_VERSION);
    expect(fresh.applied.length).toBeGreaterThan(20);
    expect(fresh.pending).toEqual(['0036_retention']);
    const up = json<{ applied_now: string[] }>(await runCli(['migrate', 'up', '--json', '--data-dir', dir.path]));
    expect(up.applied_now).toEqual(fresh.pending);
    const current = json<{ pending: string[]; migrated_by: { version: string }[] }>(await runCli(['migrate', 'status', '--json', '--data-dir', dir.path]));
    expect(current.pending).toEqual([]);
    expect(current.migrated_by.map((v) => v.version)).toEqual([POS_VERSION]);

    // What a later version leaves behind: a migration this one does not know, and its version on record.
    const db = new Database(join(dir.path, 'pos.db'));
    db.exec("insert into kysely_migration (name, timestamp) values ('9000_from_the_future', '2030-01-01T00:00:00.000Z')");
    db.exec("insert into store_versions (version, migrated_at, last_migration) values ('9.0.0', 0, '9000_from_the_future')");
    db.close();
    const status = await runCli(['migrate', 'status', '--data-dir', dir.path]);
    expect(status.status).toBe(2);
    expect(status.stdout).toMatch(/9000_from_the_future\s+applied \(unknown to this version\)/);
    // The process boundary is the point: the exit code and the one line an operator (or systemd) sees.
    const server = await pos(['server', '--port', '0', '--data-dir', dir.path]);
    expect(server.status).toBe(2);
    expect(server.stderr).toContain(`the database was migrated by pos 9.0.0, newer than this pos ${POS_VERSION}`);
    expect(server.stderr).toContain('9000_from_the_future');
  });
});
