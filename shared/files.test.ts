import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { tempDir } from '../test/helpers/tmp.js';
import { checkPrivate, createPrivateDir, formatMode, privateDir, privateFile, PrivateJsonFile, privateSqliteFile, writePrivateFile, type LooseFile } from './files.js';

const modeOf = (path: string): number => statSync(path).mode & 0o777;

// The umask most systems run with; these tests are about what survives it. The test worker is a
// process of its own, so the change stays in it, and is undone after.
let umask: number;
beforeAll(() => {
  umask = process.umask(0o022);
});
afterAll(() => {
  process.umask(umask);
});

let dir: ReturnType<typeof tempDir>;
let found: LooseFile[];
const report = (f: LooseFile): void => void found.push(f);
beforeEach(() => {
  dir = tempDir('pos-files-');
  found = [];
});
afterEach(() => dir.cleanup());

describe('privateDir', () => {
  it('creates the directory and its missing parents 0700', () => {
    const target = join(dir.path, 'a', 'b');
    privateDir(target, report);
    expect(modeOf(join(dir.path, 'a'))).toBe(0o700);
    expect(modeOf(target)).toBe(0o700);
    expect(found).toEqual([]);
  });

  it('is exactly 0700 under an umask that takes more away', () => {
    const before = process.umask(0o277);
    try {
      privateDir(join(dir.path, 'odd'), report);
    } finally {
      process.umask(before);
    }
    expect(modeOf(join(dir.path, 'odd'))).toBe(0o700);
  });

  it('tightens an existing directory open to others, and says so with its old mode', () => {
    const target = join(dir.path, 'data');
    mkdirSync(target, { mode: 0o755 });
    expect(modeOf(target)).toBe(0o755);
    privateDir(target, report);
    expect(modeOf(target)).toBe(0o700);
    expect(found).toEqual([{ path: target, kind: 'directory', mode: 0o755, tightened: true, message: `${target} was open to other users (mode 0755); made it owner-only (0700)` }]);
  });

  it('leaves an owner-only directory alone and silent', () => {
    const target = join(dir.path, 'data');
    mkdirSync(target, { mode: 0o700 });
    privateDir(target, report);
    expect(found).toEqual([]);
  });
});

describe('createPrivateDir', () => {
  it('creates missing directories 0700 but never changes one that exists', () => {
    chmodSync(dir.path, 0o755);
    createPrivateDir(join(dir.path, 'etc'));
    expect(modeOf(join(dir.path, 'etc'))).toBe(0o700);
    createPrivateDir(dir.path);
    expect(modeOf(dir.path)).toBe(0o755);
  });
});

describe('privateFile', () => {
  it('creates a missing file empty and 0600', () => {
    const file = join(dir.path, 'key');
    privateFile(file, report);
    expect(modeOf(file)).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe('');
    expect(found).toEqual([]);
  });

  it('tightens an existing world-readable file, keeping its content', () => {
    const file = join(dir.path, 'key');
    writeFileSync(file, 'secret', { mode: 0o644 });
    privateFile(file, report);
    expect(modeOf(file)).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe('secret');
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ path: file, kind: 'file', mode: 0o644, tightened: true });
    expect(found[0]!.message).toBe(`${file} was open to other users (mode 0644); made it owner-only (0600)`);
  });

  it('counts group access alone as open to others', () => {
    const file = join(dir.path, 'key');
    writeFileSync(file, 'secret', { mode: 0o620 });
    chmodSync(file, 0o620);
    privateFile(file, report);
    expect(modeOf(file)).toBe(0o600);
    expect(found.map((f) => f.mode)).toEqual([0o620]);
  });
});

describe('checkPrivate', () => {
  it('creates nothing when the file is missing', () => {
    checkPrivate(join(dir.path, 'absent'), report);
    expect(readdirSync(dir.path)).toEqual([]);
    expect(found).toEqual([]);
  });

  // Only root may change another user's file: run as anyone else, the case is not reachable here.
  it.runIf(process.getuid?.() === 0)("reports a file of another user with the command that fixes it, and leaves it as it is", () => {
    const file = join(dir.path, 'theirs');
    writeFileSync(file, 'x', { mode: 0o644 });
    chmodSync(file, 0o644);
    chownSync(file, 12345, 12345);
    checkPrivate(file, report);
    expect(modeOf(file)).toBe(0o644);
    expect(found).toEqual([
      { path: file, kind: 'file', mode: 0o644, tightened: false, message: `${file} is open to other users (mode 0644) and it belongs to another user: run \`chmod 600 ${file}\`` },
    ]);
  });
});

describe('privateSqliteFile', () => {
  // What the ledger relies on, checked against the SQLite we ship rather than assumed: SQLite
  // creates a database file 0644 under umask 022, and gives -wal and -shm the mode of the
  // database file when it exists before SQLite opens it.
  function openWal(file: string): { wal: number; shm: number; db: number } {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('create table t (x); insert into t values (1)');
    const modes = { db: modeOf(file), wal: modeOf(`${file}-wal`), shm: modeOf(`${file}-shm`) };
    db.close();
    return modes;
  }

  it('left alone, SQLite makes the database and its side files 0644', () => {
    expect(openWal(join(dir.path, 'plain.db'))).toEqual({ db: 0o644, wal: 0o644, shm: 0o644 });
  });

  it('prepared first, the database, -wal and -shm are all 0600', () => {
    const file = join(dir.path, 'pos.db');
    privateSqliteFile(file, report);
    expect(openWal(file)).toEqual({ db: 0o600, wal: 0o600, shm: 0o600 });
    expect(found).toEqual([]);
  });

  it('tightens side files a crash left behind with a wider mode', () => {
    const file = join(dir.path, 'pos.db');
    for (const name of ['pos.db', 'pos.db-wal', 'pos.db-shm']) writeFileSync(join(dir.path, name), '', { mode: 0o644 });
    privateSqliteFile(file, report);
    expect(found.map((f) => f.path)).toEqual([file, `${file}-wal`, `${file}-shm`]);
    for (const name of ['pos.db', 'pos.db-wal', 'pos.db-shm']) expect(modeOf(join(dir.path, name))).toBe(0o600);
  });
});

describe('writePrivateFile', () => {
  it('replaces a world-readable file with an owner-only one and leaves no temporary file', async () => {
    const file = join(dir.path, 'agent.env');
    writeFileSync(file, 'old', { mode: 0o644 });
    await writePrivateFile(file, 'POS_API_KEY=rk_test_x\n');
    expect(readFileSync(file, 'utf8')).toBe('POS_API_KEY=rk_test_x\n');
    expect(modeOf(file)).toBe(0o600);
    expect(readdirSync(dir.path)).toEqual(['agent.env']);
  });

  it('tightens a temporary file a crash left behind before writing the secret into it', async () => {
    const file = join(dir.path, 'config.json');
    writeFileSync(join(dir.path, '.config.json.tmp'), 'stale', { mode: 0o666 });
    chmodSync(join(dir.path, '.config.json.tmp'), 0o666);
    await writePrivateFile(file, '{}');
    expect(modeOf(file)).toBe(0o600);
    expect(existsSync(join(dir.path, '.config.json.tmp'))).toBe(false);
  });
});

describe('PrivateJsonFile', () => {
  it('reads null when missing, and every write stays 0600 in the order asked', async () => {
    const file = join(dir.path, 'state.json');
    const adapter = new PrivateJsonFile<{ n: number }>(file);
    expect(await adapter.read()).toBeNull();
    await Promise.all([1, 2, 3].map((n) => adapter.write({ n })));
    expect(await adapter.read()).toEqual({ n: 3 });
    expect(modeOf(file)).toBe(0o600);
  });
});

it('formats modes as chmod takes them', () => {
  expect(formatMode(0o100644)).toBe('0644');
  expect(formatMode(0o40700)).toBe('0700');
  expect(formatMode(0o7)).toBe('0007');
});
