import { chmodSync, closeSync, fchmodSync, fstatSync, mkdirSync, openSync, statSync, type Stats } from 'node:fs';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Adapter } from 'lowdb';

/**
 * Files that hold keys, payments or customers' data are readable by their owner only, whatever the
 * process umask: the ledger and its SQLite side files, the simulator's store, the agent's state and
 * print queue, the CLI's profiles, the agent service's key file. Every place that makes one goes
 * through here rather than passing modes of its own.
 *
 * A file or directory of ours found open to others (made by an older version, or by hand) is made
 * owner-only when this user owns it, and reported either way; what is not ours to change is only
 * reported, with the command that fixes it.
 */

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** Any permission for the group or others: read, write or (for a directory) entry. */
const OPEN_TO_OTHERS = 0o077;

/** A file or directory of ours found open to others, and what was done about it. */
export interface LooseFile {
  path: string;
  kind: 'file' | 'directory';
  /** The permission bits found. */
  mode: number;
  /** Made owner-only here; false when it is not this user's or the change was refused. */
  tightened: boolean;
  /** One line for the log: the path, its mode, and what was done or the command that fixes it. */
  message: string;
}

/** Told of every loose file found; the caller logs it. */
export type LooseFileReport = (found: LooseFile) => void;

/** Octal permission bits as `chmod` takes them, e.g. `0644`. */
export function formatMode(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, '0')}`;
}

// Permission bits mean nothing to Windows, where Node reports every file as 0666 or 0444.
const POSIX = process.platform !== 'win32';

function ownedByUs(stats: Stats): boolean {
  return process.getuid === undefined || stats.uid === process.getuid();
}

/** Checks existing `stats` of `path` and tightens them when others have any access. */
function check(path: string, stats: Stats, report: LooseFileReport | undefined): void {
  if (!POSIX || (stats.mode & OPEN_TO_OTHERS) === 0) return;
  const kind = stats.isDirectory() ? 'directory' : 'file';
  const wanted = kind === 'directory' ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE;
  const mode = stats.mode & 0o777;
  const fix = `chmod ${formatMode(wanted).slice(1)} ${path}`;
  let tightened = false;
  let why = 'it belongs to another user';
  if (ownedByUs(stats)) {
    try {
      chmodSync(path, wanted);
      tightened = true;
    } catch (err) {
      why = `changing it failed (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
    }
  }
  const message = tightened
    ? `${path} was open to other users (mode ${formatMode(mode)}); made it owner-only (${formatMode(wanted)})`
    : `${path} is open to other users (mode ${formatMode(mode)}) and ${why}: run \`${fix}\``;
  report?.({ path, kind, mode, tightened, message });
}

function statIfPresent(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Makes `dir` (and any missing parents) owner-only (0700). An existing `dir` is checked and, when
 * open to others, tightened if ours; its existing parents are left alone.
 */
export function privateDir(dir: string, report?: LooseFileReport): void {
  const existing = statIfPresent(dir);
  if (existing) {
    check(dir, existing, report);
    return;
  }
  createPrivateDir(dir);
}

/**
 * Creates `dir` and its missing parents owner-only, and checks nothing that already existed: for a
 * directory that may be shared, such as `/etc/pos-agent`'s parent.
 */
export function createPrivateDir(dir: string): void {
  // mkdir's mode passes through the umask, which can only take bits away from 0700; the chmod
  // makes the directory itself exactly 0700 under an odd umask too.
  const first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first !== undefined && POSIX) chmodSync(dir, PRIVATE_DIR_MODE);
}

/** Makes `path` an owner-only file (0600), creating it empty when missing. */
export function privateFile(path: string, report?: LooseFileReport): void {
  const existing = statIfPresent(path);
  if (existing) {
    check(path, existing, report);
    return;
  }
  const fd = openSync(path, 'a', PRIVATE_FILE_MODE);
  try {
    if (POSIX && (fstatSync(fd).mode & 0o777) !== PRIVATE_FILE_MODE) fchmodSync(fd, PRIVATE_FILE_MODE);
  } finally {
    closeSync(fd);
  }
}

/** Checks `path` if it exists (a side file another program made, or one left by a crash). */
export function checkPrivate(path: string, report?: LooseFileReport): void {
  const existing = statIfPresent(path);
  if (existing) check(path, existing, report);
}

/**
 * Prepares an SQLite database file to be opened owner-only: the file is made (or tightened to)
 * 0600 before SQLite opens it, because SQLite creates the database itself with 0644 under the
 * usual umask and gives the `-wal` and `-shm` files it makes the database file's mode. Side files
 * left by a crash keep whatever mode they had, so they are checked too.
 */
export function privateSqliteFile(file: string, report?: LooseFileReport): void {
  privateFile(file, report);
  checkPrivate(`${file}-wal`, report);
  checkPrivate(`${file}-shm`, report);
}

/**
 * Replaces `path` with `data` in one step: written to an owner-only temporary file beside it,
 * then renamed over it, so the file is never seen half-written nor, even for a moment, with wider
 * permissions. The directory must exist.
 */
export async function writePrivateFile(path: string, data: string | Uint8Array): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.tmp`);
  const handle = await open(temp, 'w', PRIVATE_FILE_MODE);
  try {
    // A temporary file left behind by a crash keeps its old mode when opened again.
    if (POSIX) await handle.chmod(PRIVATE_FILE_MODE);
    await handle.writeFile(data);
  } catch (err) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw err;
  }
  await handle.close();
  await rename(temp, path);
}

/**
 * A lowdb adapter for an owner-only JSON file: lowdb's own JSONFile writes through a temporary
 * file created with the umask's mode and renames it over the file, which undoes any chmod.
 * Writes are serialised, in the order they were asked for.
 */
export class PrivateJsonFile<T> implements Adapter<T> {
  #writing: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {}

  async read(): Promise<T | null> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8')) as T;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
  }

  write(data: T): Promise<void> {
    const text = JSON.stringify(data, null, 2);
    const done = this.#writing.catch(() => undefined).then(() => writePrivateFile(this.path, text));
    this.#writing = done;
    return done;
  }
}

/** A report that writes each finding as one warning to a pino-style logger. */
export function warnLooseFiles(logger: { warn(fields: object, message: string): void }): LooseFileReport {
  return (found) => logger.warn({ path: found.path, mode: formatMode(found.mode), tightened: found.tightened }, found.message);
}
