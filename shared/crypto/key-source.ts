import { closeSync, fchmodSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { ConfigError } from '../config.js';
import { createPrivateDir, PRIVATE_FILE_MODE } from '../files.js';
import { formatMainKey, newMainKeyMaterial, parseMainKey } from './main-key.js';

/**
 * Where a process finds its main keys:
 * - `env`: POS_MASTER_KEY, one key or several separated by commas (newest first). A running process
 *   cannot learn a new one: rotating such keys takes restarts (docs/keys.md).
 * - `file`: a key file, one key per line (newest first; `#` starts a comment): `--master-key-file`
 *   (explicit: it must exist) or, with neither, `<data dir>/master.key`, made on first start. A
 *   running process reads it again when it meets a key id it does not hold.
 */
export type KeySource = { kind: 'env'; keys: readonly Buffer[] } | { kind: 'file'; path: string; explicit: boolean };

/** The key file a data dir keeps when no key is given. */
export const DEFAULT_KEY_FILE = 'master.key';

export function defaultKeyFile(dataDir: string): string {
  return join(dataDir, DEFAULT_KEY_FILE);
}

/** Where the keys came from, for messages: `POS_MASTER_KEY` or `the key file /var/lib/pos/master.key`. */
export function describeKeySource(source: KeySource): string {
  return source.kind === 'env' ? 'POS_MASTER_KEY' : `the key file ${source.path}`;
}

const KEY_FILE_HEADER = [
  '# pos main keys, newest first. They encrypt the webhook signing secrets and customers\' details in',
  '# the database (docs/keys.md). Back this file up apart from the database: without it those values',
  '# cannot be read. Never commit it or copy it next to the database\'s backups.',
];

export function formatKeyFile(materials: readonly Buffer[]): string {
  return `${[...KEY_FILE_HEADER, ...materials.map(formatMainKey)].join('\n')}\n`;
}

export function parseKeyFile(text: string, path: string): Buffer[] {
  const keys: Buffer[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    try {
      keys.push(parseMainKey(line));
    } catch (err) {
      throw new ConfigError(`${path}, line ${index + 1}: ${err instanceof Error ? err.message : String(err)}`);
    }
  });
  return keys;
}

/** The keys of a source, newest first; a default key file that does not exist yet holds none. */
export function readKeySource(source: KeySource): Buffer[] {
  if (source.kind === 'env') return [...source.keys];
  let text: string;
  try {
    text = readFileSync(source.path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !source.explicit) return [];
    throw new ConfigError(`cannot read the main key file ${source.path}: ${(err as Error).message}`);
  }
  const keys = parseKeyFile(text, source.path);
  if (keys.length === 0 && source.explicit) throw new ConfigError(`the main key file ${source.path} holds no key`);
  return keys;
}

/**
 * Writes a new key file. `wx`: never over an existing one (two processes starting at once on a
 * new data dir: one makes the file, the other reads it).
 */
export function createKeyFile(path: string, materials: readonly Buffer[]): void {
  // Owner read and write only: the key file is the one secret that opens all the others. The mode
  // passes through the umask, so it is set again exactly.
  const fd = openSync(path, 'wx', PRIVATE_FILE_MODE);
  try {
    if (process.platform !== 'win32') fchmodSync(fd, PRIVATE_FILE_MODE);
    writeSync(fd, formatKeyFile(materials));
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes the data dir's own key file with a new key, when the source is that file and it does not
 * exist; true when this call made it (false: not such a source, or another process made it first).
 */
export function makeDefaultKeyFile(source: KeySource): boolean {
  if (source.kind !== 'file' || source.explicit) return false;
  try {
    createPrivateDir(dirname(source.path));
    createKeyFile(source.path, [newMainKeyMaterial()]);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new ConfigError(`cannot make the main key file ${source.path}: ${(err as Error).message}`);
  }
}

/** Replaces a key file whole (a new file renamed over it), so a reader never sees half of one. */
export function replaceKeyFile(path: string, materials: readonly Buffer[]): void {
  const temporary = join(dirname(path), `.${DEFAULT_KEY_FILE}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    createKeyFile(temporary, materials);
    renameSync(temporary, path);
  } catch (err) {
    try {
      unlinkSync(temporary);
    } catch {
      // never made, or already renamed
    }
    throw err;
  }
  const dir = openSync(dirname(path), 'r');
  try {
    // The rename is durable only once the directory is.
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

/** The main key settings of a process: POS_MASTER_KEY, or a key file, or neither. */
export interface MainKeySettings {
  dataDir: string;
  masterKey?: readonly Buffer[] | undefined;
  masterKeyFile?: string | undefined;
}

/** The source the settings name: the key given, the key file given, or the data dir's own key file. */
export function keySourceOf(settings: MainKeySettings): KeySource {
  if (settings.masterKey && settings.masterKeyFile) {
    throw new ConfigError('give the main key one way: POS_MASTER_KEY, or --master-key-file (POS_MASTER_KEY_FILE), not both');
  }
  if (settings.masterKey) return { kind: 'env', keys: settings.masterKey };
  if (settings.masterKeyFile) return { kind: 'file', path: settings.masterKeyFile, explicit: true };
  return { kind: 'file', path: defaultKeyFile(settings.dataDir), explicit: false };
}
