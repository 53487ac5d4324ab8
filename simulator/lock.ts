import { openSync, readFileSync, unlinkSync, writeFileSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError } from '../shared/config.js';

const LOCK_FILE = 'simulator.pid';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * One process at a time serves a simulator's state: two would each run its timers and deliver its
 * webhooks, and a standalone `pos simulator` would answer for the processor of a running `pos up`.
 * The lock is a file naming the holder's pid; one left by a process that died is taken over.
 * Returns its release.
 */
export function lockSimulatorState(dataDir: string): () => void {
  const path = join(dataDir, LOCK_FILE);
  for (;;) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeFileSync(fd, `${process.pid}\n`);
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(holder) && holder !== process.pid && alive(holder)) {
        throw new ConfigError(
          `the simulator state in ${dataDir} is in use by process ${holder} (a running pos simulator, pos server or pos up): stop it, or give this simulator its own --data-dir`,
        );
      }
      unlinkSync(path);
    }
  }
  return () => {
    try {
      if (Number.parseInt(readFileSync(path, 'utf8'), 10) === process.pid) unlinkSync(path);
    } catch {
      // Already gone: nothing to release.
    }
  };
}
