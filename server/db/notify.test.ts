import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { seedSqliteDataDir, SQLITE_PASS, TEST_DATABASE_URL } from '../../test/helpers/db.js';
import { eventually, tempDir } from '../../test/helpers/tmp.js';
import { followNotices, LocalListeners, type Notice, notifyOnCommit } from './notify.js';
import { dropPostgresSchema, openPostgresStore } from './postgres.js';
import { openSqliteStore, sqlitePath } from './sqlite.js';
import type { Store } from './store.js';

const shopA: Notice = { topic: 'events', merchantId: 'm_a', mode: 'test' };
const shopB: Notice = { topic: 'events', merchantId: 'm_b', mode: 'test' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(SQLITE_PASS)('notices on SQLite', () => {
  const dirs: ReturnType<typeof tempDir>[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const d of dirs.splice(0)) d.cleanup();
  });
  async function open(): Promise<{ store: Store; path: string }> {
    const dir = tempDir('pos-notify-');
    dirs.push(dir);
    seedSqliteDataDir(dir.path);
    const store = await openSqliteStore(dir.path, { checkNesting: true });
    stores.push(store);
    await sql`create table kv (k text primary key)`.execute(store.db);
    return { store, path: sqlitePath(dir.path) };
  }

  it('are delivered after the commit, once per kind and transaction, only to their own listeners', async () => {
    const { store, path } = await open();
    // Another connection sees only what is committed: what the listener sees there proves the order.
    const outside = new Database(path, { readonly: true });
    const seenAtNotice: (string | undefined)[] = [];
    store.notifications.subscribe(shopA, () => seenAtNotice.push((outside.prepare('select max(k) as k from kv').get() as { k?: string }).k));
    let other = 0;
    store.notifications.subscribe(shopB, () => other++);
    await store.transaction(async (trx) => {
      await sql`insert into kv (k) values ('one')`.execute(trx);
      notifyOnCommit(trx, shopA);
      notifyOnCommit(trx, shopA);
    });
    outside.close();
    expect(seenAtNotice).toEqual(['one']);
    expect(other).toBe(0);
  });

  it('reach the followers of a topic once per commit, whichever merchants it named', async () => {
    const { store } = await open();
    let events = 0;
    let readers = 0;
    store.notifications.subscribeTopic('events', () => events++);
    store.notifications.subscribeTopic('readers', () => readers++);
    await store.transaction(async (trx) => {
      await sql`insert into kv (k) values ('a')`.execute(trx);
      notifyOnCommit(trx, shopA);
      notifyOnCommit(trx, shopB);
    });
    await store.transaction(async (trx) => {
      await sql`insert into kv (k) values ('b')`.execute(trx);
      notifyOnCommit(trx, { topic: 'presence' });
    });
    expect(events).toBe(1);
    expect(readers).toBe(0);
  });

  it('are dropped with a unit that rolled back, even when its batch commits', async () => {
    const { store } = await open();
    let heard = 0;
    store.notifications.subscribe(shopA, () => heard++);
    const failing = store.transaction(async (trx) => {
      notifyOnCommit(trx, shopA);
      throw new Error('no');
    });
    // Queued in the same turn: the same batch, whose COMMIT goes ahead without the failed unit.
    const fine = store.transaction(async (trx) => {
      await sql`insert into kv (k) values ('x')`.execute(trx);
    });
    await expect(failing).rejects.toThrow('no');
    await fine;
    expect(heard).toBe(0);
  });

  it('need a transaction the store opened', async () => {
    const { store } = await open();
    await store.db.transaction().execute(async (trx) => {
      expect(() => notifyOnCommit(trx, shopA)).toThrow(/store\.transaction/);
    });
  });
});

describe.runIf(SQLITE_PASS)('following notices', () => {
  it('reads once at the start, again after each notice, and once more for notices that came during a read', async () => {
    const listeners = new LocalListeners();
    let passes = 0;
    let release: (() => void) | undefined;
    const stop = followNotices(
      listeners,
      shopA,
      async () => {
        passes++;
        if (passes === 2) await new Promise<void>((resolve) => (release = resolve));
        return false;
      },
      () => undefined,
    );
    await eventually(() => (passes === 1 ? true : undefined));
    listeners.deliver(['events:test:m_a']);
    await eventually(() => (release ? true : undefined));
    // Three notices while the second read runs: one more read, not three.
    for (let i = 0; i < 3; i++) listeners.deliver(['events:test:m_a']);
    release!();
    await eventually(() => (passes === 3 ? true : undefined));
    await sleep(50);
    expect(passes).toBe(3);
    listeners.deliver(['events:test:m_b']);
    stop();
    listeners.deliver(['events:test:m_a']);
    listeners.deliverAll();
    await sleep(50);
    expect(passes).toBe(3);
  });

  it('reads again at once after a full batch, and retries a failed read', async () => {
    const listeners = new LocalListeners();
    const results: (boolean | Error)[] = [true, true, new Error('database gone'), false];
    const failures: unknown[] = [];
    let passes = 0;
    const stop = followNotices(
      listeners,
      shopA,
      async () => {
        const next = results[passes++] ?? false;
        if (next instanceof Error) throw next;
        return next;
      },
      (error) => failures.push(error),
    );
    await eventually(() => (passes === 4 ? true : undefined), 5_000);
    stop();
    expect(failures).toHaveLength(1);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('notices on PostgreSQL (LISTEN/NOTIFY)', () => {
  const url = TEST_DATABASE_URL!;
  const schemas: string[] = [];
  const stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    for (const schema of schemas.splice(0)) await dropPostgresSchema(url, schema);
  });
  async function open(schema: string): Promise<Store> {
    if (!schemas.includes(schema)) schemas.push(schema);
    const store = await openPostgresStore(url, { schema });
    stores.push(store);
    await sql`create table if not exists kv (k text primary key)`.execute(store.db);
    return store;
  }
  const newSchema = () => `t_notify_${randomBytes(6).toString('hex')}`;

  it('reach every process on the schema on commit, never on rollback, and no other schema', async () => {
    const schema = newSchema();
    const [a, b, elsewhere] = [await open(schema), await open(schema), await open(newSchema())];
    const heard = { a: 0, b: 0, elsewhere: 0 };
    a.notifications.subscribe(shopA, () => heard.a++);
    b.notifications.subscribe(shopA, () => heard.b++);
    elsewhere.notifications.subscribe(shopA, () => heard.elsewhere++);
    // Each listening connection wakes its listeners once when it is up (notices before it went unheard).
    await eventually(() => (heard.a > 0 && heard.b > 0 && heard.elsewhere > 0 ? true : undefined));
    const before = { ...heard };
    await expect(
      a.transaction(async (trx) => {
        await sql`insert into kv (k) values ('rolled back')`.execute(trx);
        notifyOnCommit(trx, shopA);
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    await a.transaction(async (trx) => {
      await sql`insert into kv (k) values ('committed')`.execute(trx);
      notifyOnCommit(trx, shopA);
      notifyOnCommit(trx, shopA);
    });
    await eventually(() => (heard.a === before.a + 1 && heard.b === before.b + 1 ? true : undefined));
    await sleep(200);
    expect(heard).toEqual({ a: before.a + 1, b: before.b + 1, elsewhere: before.elsewhere });
  });

  it('wake every listener again after the listening connection was lost and came back', async () => {
    const schema = newSchema();
    const store = await open(schema);
    let heard = 0;
    store.notifications.subscribe(shopB, () => heard++);
    await eventually(() => (heard === 1 ? true : undefined));
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const killed = await admin.query(`select pg_terminate_backend(pid) from pg_stat_activity where query = $1`, [`listen "pos_${schema}"`]);
      expect(killed.rowCount).toBe(1);
    } finally {
      await admin.end();
    }
    await eventually(() => (heard === 2 ? true : undefined));
    // And it listens again: a commit is heard.
    await store.transaction(async (trx) => notifyOnCommit(trx, shopB));
    await eventually(() => (heard === 3 ? true : undefined));
  });
});
