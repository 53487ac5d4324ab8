import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Logger } from 'pino';
import { ConfigError } from '../../shared/config.js';
import { privateDir, privateFile } from '../../shared/files.js';
import { sqlitePath } from './sqlite.js';
import { DatabaseTooNewError, migrationState, type MigrationState } from './store.js';
import type { Tables } from './schema.js';

/**
 * Pages copied per step of an online backup, between which the event loop runs: 1,000 pages of
 * 4 KiB are 4 MB, a few milliseconds of copying, so a server making its own scheduled backup keeps
 * answering while it runs.
 */
const PAGES_PER_STEP = 1_000;

/** How long the backup's reader waits for a lock (a checkpoint in progress); as long as the store's own writers wait. */
const BUSY_TIMEOUT_MS = 5_000;

export interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
  ms: number;
}

/**
 * Copies the embedded store of `dataDir` to `toFile` while servers keep writing to it, with
 * SQLite's online backup. The copy is consistent as of its start: its connection holds one read
 * transaction for the whole copy, so in WAL mode it reads one snapshot while writers go on (and the
 * copy never restarts, which it would after every commit of another connection if it read afresh at
 * each step). It is written beside the target, checked (`PRAGMA integrity_check`) and then renamed
 * into place, so a file at `toFile` is always a whole, checked backup. The main key is not in it.
 */
export async function backupSqlite(dataDir: string, toFile: string): Promise<BackupResult> {
  const started = Date.now();
  const source = sqlitePath(dataDir);
  if (!existsSync(source)) throw new ConfigError(`there is no store to back up in ${dataDir} (no pos.db)`);
  if (existsSync(toFile)) throw new ConfigError(`${toFile} exists: a backup never overwrites a file, name a new one`);
  if (!existsSync(dirname(toFile))) throw new ConfigError(`the directory of ${toFile} does not exist`);
  const partial = join(dirname(toFile), `.${basename(toFile)}.partial`);
  rmSync(partial, { force: true });
  // Owner-only before SQLite writes a byte: the backup holds everything the store does.
  privateFile(partial);
  const reader = new Database(source, { timeout: BUSY_TIMEOUT_MS });
  let pages = 0;
  try {
    reader.pragma('query_only = ON');
    reader.exec('begin');
    // The first read fixes the snapshot the whole copy is made from.
    reader.prepare('select count(*) from sqlite_master').get();
    const done = await reader.backup(partial, { progress: () => PAGES_PER_STEP });
    pages = done.totalPages;
    reader.exec('commit');
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  } finally {
    reader.close();
  }
  const copy = new Database(partial);
  try {
    // One self-contained file: the store's WAL mode would otherwise be copied into the backup's header.
    copy.pragma('journal_mode = DELETE');
    const problems = integrityProblems(copy);
    if (problems.length > 0) throw new Error(`the backup failed its integrity check: ${problems.slice(0, 5).join('; ')}`);
  } catch (err) {
    copy.close();
    rmSync(partial, { force: true });
    throw err;
  }
  copy.close();
  renameSync(partial, toFile);
  return { file: toFile, bytes: statSync(toFile).size, pages, ms: Date.now() - started };
}

/** What `PRAGMA integrity_check` reports about a database: empty when it says `ok`. */
function integrityProblems(db: Database.Database): string[] {
  const rows = db.pragma('integrity_check') as { integrity_check: string }[];
  const lines = rows.map((r) => r.integrity_check);
  return lines.length === 1 && lines[0] === 'ok' ? [] : lines;
}

/** What a backup file holds, checked before it is restored. */
export interface BackupCheck {
  /** `PRAGMA integrity_check` found nothing wrong. */
  integrity: 'ok';
  migrations: MigrationState;
}

/**
 * Refuses a file that is not a sound pos store: not SQLite, failing `PRAGMA integrity_check`, with
 * no migrations, or migrated by a newer version of pos than this one.
 */
export async function checkBackup(file: string): Promise<BackupCheck> {
  if (!existsSync(file)) throw new ConfigError(`${file} does not exist`);
  let raw: Database.Database;
  try {
    raw = new Database(file, { readonly: true, fileMustExist: true });
    raw.prepare('select count(*) from sqlite_master').get();
  } catch (err) {
    throw new ConfigError(`${file} is not a SQLite database: ${err instanceof Error ? err.message : String(err)}`);
  }
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: raw }) });
  try {
    const problems = integrityProblems(raw);
    if (problems.length > 0) throw new ConfigError(`${file} failed its integrity check, nothing was restored: ${problems.slice(0, 5).join('; ')}`);
    const migrations = await migrationState(db);
    if (migrations.applied.length === 0) throw new ConfigError(`${file} is not a pos store (it has no migrations)`);
    if (migrations.unknown.length > 0) throw new DatabaseTooNewError(migrations.versions.at(-1)?.version, migrations.unknown);
    return { integrity: 'ok', migrations };
  } finally {
    await db.destroy();
  }
}

/**
 * Holds the store of `dataDir` exclusively, or answers undefined when another connection has it
 * open: a server (its connection keeps a shared lock on the database file for as long as it is
 * open, WAL mode included), an admin command, a backup, in this process or any other. SQLite's own
 * locks are what is tried, so this holds however the server was started, and a server that died
 * holds nothing (the kernel released its locks). A missing store is free.
 */
function holdExclusively(file: string): { release(): void } | undefined {
  if (!existsSync(file)) return { release: () => undefined };
  const probe = new Database(file, { timeout: 0 });
  try {
    // Set before the first read, exclusive mode keeps the lock once taken and makes SQLite take a
    // real exclusive lock on the file rather than go through the WAL's shared memory.
    probe.pragma('locking_mode = EXCLUSIVE');
    probe.exec('begin exclusive');
  } catch (err) {
    probe.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') return undefined;
    throw err;
  }
  return {
    release: () => {
      try {
        probe.exec('rollback');
      } finally {
        probe.close();
      }
    },
  };
}

/** Whether something (a server, an admin command, a backup) has the store of `dataDir` open. */
export function storeInUse(dataDir: string): boolean {
  const held = holdExclusively(sqlitePath(dataDir));
  held?.release();
  return held === undefined;
}

export interface RestoreResult {
  file: string;
  check: BackupCheck;
  /** Where the store the data dir held before now is (it is kept, never deleted). */
  replaced?: string;
}

/**
 * Puts the backup `file` in place as the store of `dataDir`: checked first (`checkBackup`), copied
 * into the data dir and checked again there, then swapped in while the old store (if any) is held
 * exclusively, so no server can open it meanwhile. A store in use is refused. The old store, with
 * its -wal and -shm, is kept beside it as `pos.db.replaced-<time>`.
 */
export async function restoreSqlite(file: string, dataDir: string, now = new Date()): Promise<RestoreResult> {
  const check = await checkBackup(file);
  privateDir(dataDir);
  const target = sqlitePath(dataDir);
  if (storeInUse(dataDir)) throw storeBusy(dataDir);
  const incoming = join(dataDir, '.pos.db.restoring');
  rmSync(incoming, { force: true });
  privateFile(incoming);
  const source = new Database(file, { readonly: true, fileMustExist: true });
  try {
    await source.backup(incoming, { progress: () => PAGES_PER_STEP });
  } finally {
    source.close();
  }
  const copy = new Database(incoming);
  const problems = integrityProblems(copy);
  copy.close();
  if (problems.length > 0) {
    rmSync(incoming, { force: true });
    throw new Error(`the copy in ${dataDir} failed its integrity check, nothing was restored: ${problems.slice(0, 5).join('; ')}`);
  }
  const held = holdExclusively(target);
  if (!held) {
    rmSync(incoming, { force: true });
    throw storeBusy(dataDir);
  }
  let replaced: string | undefined;
  try {
    if (existsSync(target)) {
      replaced = `${target}.replaced-${now.toISOString().replace(/[:.]/g, '-')}`;
      // The old WAL goes with its database: left behind, SQLite would apply it to the restored one.
      for (const suffix of ['', '-wal', '-shm']) if (existsSync(target + suffix)) renameSync(target + suffix, replaced + suffix);
    }
    renameSync(incoming, target);
  } finally {
    held.release();
  }
  return { file: target, check, ...(replaced ? { replaced } : {}) };
}

function storeBusy(dataDir: string): ConfigError {
  return new ConfigError(`the store in ${dataDir} is open (a running pos server, pos up, or an admin command): stop it first, then restore`);
}

export interface BackupScheduleOptions {
  dataDir: string;
  dir: string;
  everyMs: number;
  keep: number;
  logger: Logger;
}

/** Scheduled backups are named by their UTC time, so their names sort as their ages do. */
const SCHEDULED = /^pos-\d{8}T\d{6}Z\.db$/;

function scheduledName(now: Date): string {
  return `pos-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z')}.db`;
}

/**
 * `pos server --backup-every 1h --backup-keep 24 [--backup-dir DIR]`: a backup of the embedded
 * store every interval (the first one interval after the start), the newest `keep` kept and older
 * scheduled ones removed. Files other than its own in the directory are left alone. A failed backup
 * is logged and tried again at the next interval.
 */
export class BackupSchedule {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;

  constructor(private readonly options: BackupScheduleOptions) {}

  start(): void {
    privateDir(this.options.dir);
    this.#timer = setInterval(() => {
      if (this.#running) return;
      this.#running = this.runOnce()
        .catch((err: unknown) => this.options.logger.error({ err, dir: this.options.dir }, 'scheduled backup failed; trying again at the next interval'))
        .finally(() => (this.#running = undefined));
    }, this.options.everyMs);
    this.#timer.unref();
  }

  /** One backup now, then the oldest scheduled ones beyond `keep` removed. */
  async runOnce(now = new Date()): Promise<BackupResult> {
    privateDir(this.options.dir);
    const result = await backupSqlite(this.options.dataDir, join(this.options.dir, scheduledName(now)));
    const removed = this.#prune();
    this.options.logger.info({ file: result.file, bytes: result.bytes, ms: result.ms, removed }, 'scheduled backup written');
    return result;
  }

  #prune(): string[] {
    const ours = readdirSync(this.options.dir)
      .filter((name) => SCHEDULED.test(name))
      .sort();
    const old = ours.slice(0, Math.max(0, ours.length - this.options.keep));
    for (const name of old) rmSync(join(this.options.dir, name), { force: true });
    return old;
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#running;
  }
}
