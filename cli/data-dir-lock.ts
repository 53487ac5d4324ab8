import { closeSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../shared/files.js';
import { usageError } from './errors.js';

/**
 * One `pos up` or `pos server` per data dir: two on the same SQLite files would each run their own
 * reconciler, webhook worker and simulator over one ledger, and the second would repoint the saved
 * profile at itself. The lock is a file naming its holder (pid, port), made with O_EXCL so two
 * starting at once cannot both win. A holder that died without removing it (power cut, SIGKILL)
 * leaves a lock whose pid is gone: the next start takes it over.
 */
export interface LockHolder {
  pid: number;
  /** Null until the holder listens. */
  port: number | null;
  command: string;
  started_at: string;
}

export const LOCK_FILE = 'pos.lock';

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive, only another user's.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(path: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid !== 'number') return undefined;
    return { pid: parsed.pid, port: typeof parsed.port === 'number' ? parsed.port : null, command: String(parsed.command ?? 'pos'), started_at: String(parsed.started_at ?? '') };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    // Half-written by a holder that died mid-write: nobody can be using it.
    return undefined;
  }
}

export function describeHolder(holder: LockHolder): string {
  return `${holder.command} (pid ${holder.pid}, ${holder.port === null ? 'still starting' : `port ${holder.port}`})`;
}

export class DataDirLock {
  #released = false;
  readonly #onExit = () => this.release();

  private constructor(
    readonly path: string,
    private holder: LockHolder,
  ) {
    // Quitting has a deadline that ends the process with process.exit; the lock goes with it.
    process.once('exit', this.#onExit);
  }

  /**
   * Takes the data dir for `command` or refuses with the running holder's pid and port.
   * `alive` is the liveness check of a found holder's pid (a test may pass its own).
   */
  static acquire(dataDir: string, command: string, alive: (pid: number) => boolean = processAlive): DataDirLock {
    mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const path = join(dataDir, LOCK_FILE);
    const holder: LockHolder = { pid: process.pid, port: null, command, started_at: new Date().toISOString() };
    // Twice at most: the second try follows the removal of a dead holder's lock.
    for (let attempt = 0; attempt < 2; attempt++) {
      let fd: number;
      try {
        fd = openSync(path, 'wx', PRIVATE_FILE_MODE);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const found = readHolder(path);
        if (found && alive(found.pid)) {
          throw usageError(
            `${dataDir} is in use by ${describeHolder(found)}: stop it first, or give this one another --data-dir (${LOCK_FILE} names the holder)`,
          );
        }
        // Moved aside before removal, so a holder that took it over in between is not deleted.
        const aside = `${path}.stale-${process.pid}`;
        try {
          renameSync(path, aside);
        } catch (moveErr) {
          if ((moveErr as NodeJS.ErrnoException).code !== 'ENOENT') throw moveErr;
          continue;
        }
        const moved = readHolder(aside);
        if (moved && found && moved.pid !== found.pid && alive(moved.pid)) {
          // Another start took the stale lock over between our read and our move: give it back.
          renameSync(aside, path);
          throw usageError(`${dataDir} is in use by ${describeHolder(moved)}: stop it first, or give this one another --data-dir`);
        }
        unlinkSync(aside);
        continue;
      }
      try {
        writeSync(fd, JSON.stringify(holder));
      } finally {
        closeSync(fd);
      }
      return new DataDirLock(path, holder);
    }
    throw usageError(`${dataDir} is being taken by another pos at this moment: try again`);
  }

  /** Records the port once listening, for the message a second start gets. */
  listening(port: number): void {
    if (this.#released) return;
    this.holder = { ...this.holder, port };
    writeFileSync(this.path, JSON.stringify(this.holder), { mode: PRIVATE_FILE_MODE });
  }

  release(): void {
    if (this.#released) return;
    this.#released = true;
    process.removeListener('exit', this.#onExit);
    // Only our own lock: a file holding another pid was taken over from us and is not ours to delete.
    if (readHolder(this.path)?.pid === this.holder.pid) {
      try {
        unlinkSync(this.path);
      } catch {
        // Already gone.
      }
    }
  }
}
