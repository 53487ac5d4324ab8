import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, loadStoreConfig } from '../../shared/config.js';
import { backupSqlite, restoreSqlite } from '../../server/db/backup.js';
import type { CliIo } from '../io.js';
import { createOutput } from '../output.js';

function embeddedDataDir(options: { dataDir?: string }, io: CliIo, what: string): string {
  const config = loadStoreConfig(options, io.env);
  if (config.databaseUrl) throw new ConfigError(`pos ${what} works on the embedded SQLite store; on PostgreSQL use pg_dump or continuous archiving (docs/operations.md, "Backups")`);
  return config.dataDir;
}

/** `pos backup --to FILE`: a consistent copy of the embedded store, made while servers serve from it. */
export async function backupAction(options: { to: string; dataDir?: string; json?: boolean }, io: CliIo): Promise<void> {
  const out = createOutput({ json: Boolean(options.json) }, io);
  const dataDir = embeddedDataDir(options, io, 'backup');
  const result = await backupSqlite(dataDir, resolve(options.to));
  if (out.json) {
    out.printJson({ file: result.file, bytes: result.bytes, pages: result.pages, ms: result.ms, integrity: 'ok' });
    return;
  }
  out.line(`Backed up ${dataDir} to ${result.file} (${result.bytes} bytes, integrity ok, ${result.ms} ms).`);
  out.line('The main key is not in it: keep master.key (or POS_MASTER_KEY) safe apart from it (docs/operations.md).');
}

/** `pos restore FILE`: the backup, checked, becomes the data dir's store; refused while the store is open. */
export async function restoreAction(file: string, options: { dataDir?: string; json?: boolean }, io: CliIo): Promise<void> {
  const out = createOutput({ json: Boolean(options.json) }, io);
  const config = loadStoreConfig(options, io.env);
  const dataDir = embeddedDataDir(options, io, 'restore');
  const result = await restoreSqlite(resolve(file), dataDir);
  // Without the main key it was made under, the restored store's secrets and customers' details stay sealed.
  const keyKnown = config.masterKey !== undefined || config.masterKeyFile !== undefined || existsSync(join(dataDir, 'master.key'));
  const migrations = result.check.migrations;
  if (out.json) {
    out.printJson({ file: result.file, integrity: result.check.integrity, replaced: result.replaced ?? null, migrations: { applied: migrations.applied.length, pending: migrations.pending }, main_key_found: keyKnown });
    return;
  }
  out.line(`Restored ${resolve(file)} into ${result.file} (integrity ok, ${migrations.applied.length} migrations${migrations.pending.length ? `; ${migrations.pending.length} pending, applied when the server starts` : ''}).`);
  if (result.replaced) out.line(`The store that was there is kept as ${result.replaced}.`);
  if (!keyKnown) out.error(`pos: warning: ${dataDir} has no master.key: copy the main key the backup was made under there (mode 0600), or start the server with --master-key-file or POS_MASTER_KEY; with another key it refuses to start (docs/keys.md).`);
}
