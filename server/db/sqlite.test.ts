import { type Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seedSqliteDataDir } from '../../test/helpers/template.js';
import { eventually, tempDir } from '../../test/helpers/tmp.js';
import { POS_VERSION } from '../../shared/version.js';
import { notifyOnCommit } from './notify.js';
import { insertRow, insertRows, Prepared, PreparedLists, updateRows } from './prepared.js';
import { openSqliteStore, type BatchReport } from './sqlite.js';
import type { Executor, Store } from './store.js';

interface Scratch {
  kv: { k: string; v: number };
}

// Scratch tables of its own keep these tests independent of the payments schema as it evolves.
async function createScratchTables(store: Store): Promise<void> {
  await sql`create table kv (k text primary key, v integer not null)`.execute(store.db);
  await sql`create table parent (id integer primary key)`.execute(store.db);
  await sql`create table child (id integer primary key, parent_id integer not null references parent(id))`.execute(store.db);
}

async function put(db: Executor, k: string, v: number): Promise<void> {
  await sql`insert into kv (k, v) values (${k}, ${v})`.execute(db);
}

async function get(db: Executor, k: string): Promise<number | undefined> {
  const { rows } = await sql<{ v: number }>`select v from kv where k = ${k}`.execute(db);
  return rows[0]?.v;
}

async function count(db: Executor): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*) as n from kv`.execute(db);
  return Number(rows[0]?.n);
}

describe('SQLite store group commit', () => {
  let dir: ReturnType<typeof tempDir>;
  let store: Store;
  let batches: BatchReport[];

  const open = async (): Promise<Store> => openSqliteStore(dir.path, { onBatch: (report) => batches.push(report), checkNesting: true });

  beforeEach(async () => {
    dir = tempDir('pos-store-');
    // Starts as the run's migrated template: migrating per test took most of this file's time.
    seedSqliteDataDir(dir.path);
    batches = [];
    store = await open();
    await createScratchTables(store);
  });

  afterEach(async () => {
    await store.close();
    dir.cleanup();
  });

  it('keeps the pragmas and migrations of the embedded store', async () => {
    const pragma = async (name: string): Promise<unknown> => {
      const { rows } = await sql.raw<Record<string, unknown>>(`pragma ${name}`).execute(store.db);
      return Object.values(rows[0] ?? {})[0];
    };
    expect(await pragma('journal_mode')).toBe('wal');
    expect(await pragma('synchronous')).toBe(2); // FULL
    expect(await pragma('busy_timeout')).toBe(5_000);
    expect(await pragma('foreign_keys')).toBe(1);
    const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(store.db);
    expect(rows.map((r) => r.name)).toContain('0004_payments');
  });

  it('refuses to open a database a newer version migrated, naming both versions', async () => {
    await sql`insert into kysely_migration (name, timestamp) values ('9999_from_a_newer_version', '2030-01-01T00:00:00.000Z')`.execute(store.db);
    await sql`insert into store_versions (version, migrated_at, last_migration) values ('9.1.0', 0, '9999_from_a_newer_version')`.execute(store.db);
    await store.close();
    await expect(open()).rejects.toThrow(new RegExp(`migrated by pos 9\\.1\\.0, newer than this pos ${POS_VERSION.replace(/\./g, '\\.')}.*9999_from_a_newer_version`));
  });

  it('rolls back a throwing unit and runs the unit before it again: its neighbours in the same batch persist', async () => {
    let runsOfA = 0;
    const a = store.transaction(async (trx) => {
      runsOfA++;
      await put(trx, 'a', 1);
    });
    const b = store.transaction(async (trx) => {
      await put(trx, 'b', 2);
      throw new Error('b failed');
    });
    const c = store.transaction(async (trx) => put(trx, 'c', 3));
    // Heard at once: `b` is rejected a batch before `a` and `c` settle.
    const failure = expect(b).rejects.toThrow('b failed');
    await expect(a).resolves.toBeUndefined();
    await failure;
    await expect(c).resolves.toBeUndefined();
    expect(batches).toEqual([
      { units: 2, failed: 1, requeued: 1, committed: false, contained: false },
      { units: 2, failed: 0, requeued: 0, committed: true, contained: true },
    ]);
    expect(runsOfA).toBe(2);
    expect(await get(store.db, 'a')).toBe(1);
    expect(await get(store.db, 'b')).toBeUndefined();
    expect(await get(store.db, 'c')).toBe(3);
  });

  it('contains failures in the batch after one that threw, so a burst of failures runs no unit more than twice', async () => {
    const runs = new Map<string, number>();
    const unit = (k: string, fail: boolean) =>
      store.transaction(async (trx) => {
        runs.set(k, (runs.get(k) ?? 0) + 1);
        await put(trx, k, 1);
        if (fail) throw new Error(`${k} failed`);
      });
    const settled = await Promise.allSettled([unit('a', false), unit('b', true), unit('c', false), unit('d', true), unit('e', false)]);
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
    expect(Object.fromEntries(runs)).toEqual({ a: 2, b: 1, c: 1, d: 1, e: 1 });
    expect(batches).toEqual([
      { units: 2, failed: 1, requeued: 1, committed: false, contained: false },
      { units: 4, failed: 1, requeued: 0, committed: true, contained: true },
    ]);
    expect([await get(store.db, 'a'), await get(store.db, 'b'), await get(store.db, 'c'), await get(store.db, 'd'), await get(store.db, 'e')]).toEqual([1, undefined, 1, undefined, 1]);
    // Batches stay contained for a while after the last failure (`d`'s: 16 batches), then run
    // without savepoints again.
    for (let i = 0; i < 17; i++) await store.transaction(async (trx) => put(trx, `f${i}`, 1));
    expect(batches.slice(2).map((b) => b.contained)).toEqual([...Array(16).fill(true), false]);
  });

  it('delivers the notices of every unit of a committed batch once, and none of a batch rolled back', async () => {
    const heard = { fanout: 0, deliveries: 0 };
    const stops = [store.notifications.subscribe({ topic: 'webhook_fanout' }, () => heard.fanout++), store.notifications.subscribe({ topic: 'webhook_deliveries' }, () => heard.deliveries++)];
    try {
      // Two units of one batch, each with its notice: neither may lose the other's.
      await Promise.all([
        store.transaction(async (trx) => notifyOnCommit(trx, { topic: 'webhook_fanout' })),
        store.transaction(async (trx) => notifyOnCommit(trx, { topic: 'webhook_deliveries' })),
      ]);
      expect(batches).toHaveLength(1);
      await eventually(() => (heard.fanout === 1 && heard.deliveries === 1 ? true : undefined));
      // A unit that ran before a thrower runs again: its notice is heard once, after the commit that kept it.
      const settled = await Promise.allSettled([
        store.transaction(async (trx) => notifyOnCommit(trx, { topic: 'webhook_fanout' })),
        store.transaction(async (trx) => {
          notifyOnCommit(trx, { topic: 'webhook_deliveries' });
          throw new Error('thrown');
        }),
      ]);
      expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(heard).toEqual({ fanout: 2, deliveries: 1 });
    } finally {
      for (const stop of stops) stop();
    }
  });

  it('rolls back a failing statement and keeps the unit’s earlier writes out too', async () => {
    await store.transaction(async (trx) => put(trx, 'dup', 1));
    const failing = store.transaction(async (trx) => {
      await put(trx, 'x', 1);
      await put(trx, 'dup', 2); // primary key violation
    });
    const next = store.transaction(async (trx) => put(trx, 'y', 1));
    await expect(failing).rejects.toThrow(/UNIQUE constraint failed/);
    await next;
    expect(await get(store.db, 'x')).toBeUndefined();
    expect(await get(store.db, 'dup')).toBe(1);
    expect(await get(store.db, 'y')).toBe(1);
  });

  it('never lets a unit see the writes of a unit that failed before it', async () => {
    const failing = store.transaction(async (trx) => {
      await put(trx, 'ghost', 1);
      throw new Error('nope');
    });
    const reader = store.transaction(async (trx) => get(trx, 'ghost'));
    await expect(failing).rejects.toThrow('nope');
    await expect(reader).resolves.toBeUndefined();
    expect(batches.map((b) => b.committed)).toEqual([false, true]);
  });

  it('delivers results, runs units in arrival order, and resolves them in that order', async () => {
    const ran: number[] = [];
    const resolved: number[] = [];
    const units = Array.from({ length: 20 }, (_, i) =>
      store
        .transaction(async (trx) => {
          ran.push(i);
          await put(trx, `k${i}`, i);
          return { i, seen: await count(trx) };
        })
        .then((result) => {
          resolved.push(i);
          return result;
        }),
    );
    const results = await Promise.all(units);
    expect(ran).toEqual([...Array(20).keys()]);
    expect(resolved).toEqual([...Array(20).keys()]);
    // Each unit sees the uncommitted writes of the units before it in its batch, as it would see
    // them committed had they run one by one.
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => ({ i, seen: i + 1 })));
  });

  it('gives a failing unit its error before the batch commits, and the others after', async () => {
    const order: string[] = [];
    store = await reopenWithHook((report) => order.push(`${report.committed ? 'commit' : 'rollback'} ${report.units}`));
    const ok1 = store.transaction(async (trx) => put(trx, 'p', 1)).then(() => order.push('ok1'));
    const bad = store
      .transaction(async () => {
        throw new Error('bad');
      })
      .catch(() => order.push('bad'));
    const ok2 = store
      .transaction(async (trx) => {
        // Enough work after the failure for its rejection to have been delivered meanwhile.
        for (let i = 0; i < 20; i++) await put(trx, `q${i}`, i);
      })
      .then(() => order.push('ok2'));
    await Promise.all([ok1, bad, ok2]);
    // The batch is rolled back under `bad`; `ok1`, which ran before it, runs again with `ok2`.
    expect(order).toEqual(['bad', 'rollback 2', 'commit 2', 'ok1', 'ok2']);
  });

  it('commits 2,000 concurrent units with far fewer COMMITs than units', async () => {
    const n = 2_000;
    const results = await Promise.all(Array.from({ length: n }, (_, i) => store.transaction(async (trx) => (await put(trx, `u${i}`, i), i))));
    expect(results).toEqual([...Array(n).keys()]);
    expect(await count(store.db)).toBe(n);
    const commits = batches.filter((b) => b.committed).length;
    expect(batches.reduce((sum, b) => sum + b.units, 0)).toBe(n);
    // All 2,000 arrive before the first batch starts, so they fill batches of the cap (128).
    expect(commits).toBe(Math.ceil(n / 128));
    expect(Math.max(...batches.map((b) => b.units))).toBe(128);
  });

  it('batches units that arrive while a batch is running into the next one', async () => {
    // Each caller runs several units in a row, like a request walking its recovery points.
    const callers = 50;
    const steps = 4;
    await Promise.all(
      Array.from({ length: callers }, async (_, c) => {
        for (let s = 0; s < steps; s++) await store.transaction(async (trx) => put(trx, `c${c}s${s}`, s));
      }),
    );
    expect(await count(store.db)).toBe(callers * steps);
    expect(batches.filter((b) => b.committed).length).toBeLessThanOrEqual(steps + 1);
  });

  it('rejects every unit of the batch when the COMMIT fails, and recovers for the next batch', async () => {
    await store.transaction(async (trx) => sql`insert into parent (id) values (1)`.execute(trx));
    batches = [];
    const innocent = store.transaction(async (trx) => put(trx, 'innocent', 1));
    // A deferred foreign key is checked only at COMMIT: the one portable way to make COMMIT fail.
    const poison = store.transaction(async (trx) => {
      await sql`pragma defer_foreign_keys = on`.execute(trx);
      await sql`insert into child (id, parent_id) values (1, 999)`.execute(trx);
    });
    const after = store.transaction(async (trx) => put(trx, 'after', 1));
    await expect(innocent).rejects.toThrow(/FOREIGN KEY constraint failed/);
    await expect(poison).rejects.toThrow(/FOREIGN KEY constraint failed/);
    await expect(after).rejects.toThrow(/FOREIGN KEY constraint failed/);
    expect(batches).toEqual([{ units: 3, failed: 0, requeued: 0, committed: false, contained: false }]);
    expect(await count(store.db)).toBe(0);

    await store.transaction(async (trx) => put(trx, 'later', 1));
    expect(await get(store.db, 'later')).toBe(1);
  });

  it('runs the innocent units again when SQLite abandons the whole transaction under them', async () => {
    await store.transaction(async (trx) => put(trx, 'taken', 0));
    batches = [];
    const before = store.transaction(async (trx) => put(trx, 'before', 1));
    // OR ROLLBACK ends the entire transaction, not just the statement or the savepoint.
    const wrecker = store.transaction(async (trx) => sql`insert or rollback into kv (k, v) values ('taken', 1)`.execute(trx));
    const afterIt = store.transaction(async (trx) => put(trx, 'after', 1));
    await expect(wrecker).rejects.toThrow(/UNIQUE constraint failed/);
    await before;
    await afterIt;
    expect(await get(store.db, 'before')).toBe(1);
    expect(await get(store.db, 'after')).toBe(1);
    expect(batches).toEqual([
      { units: 2, failed: 1, requeued: 1, committed: false, contained: false },
      { units: 2, failed: 0, requeued: 0, committed: true, contained: true },
    ]);
  });

  // No savepoint holds OR ROLLBACK: it ends the transaction it is in, whichever way it is sent.
  const wreckViaPrepared = new Prepared<{ k: string }, never>((db, arg) => ({ compile: () => sql<never>`insert or rollback into kv (k, v) values (${arg('k')}, 1)`.compile(db) }));
  it.each([
    ['through the driver', (trx: Executor) => sql`insert or rollback into kv (k, v) values ('taken', 1)`.execute(trx)],
    ['as a compiled statement, run straight on the connection', (trx: Executor) => wreckViaPrepared.execute(trx, { k: 'taken' })],
  ] as const)('runs the innocent units again when SQLite abandons the transaction under a unit in a contained batch (sent %s)', async (_way, wreck) => {
    await store.transaction(async (trx) => put(trx, 'taken', 0));
    // A failure first, so the batches after it run each unit in a savepoint.
    await expect(
      store.transaction(async () => {
        throw new Error('first');
      }),
    ).rejects.toThrow('first');
    batches = [];
    let runsBefore = 0;
    const before = store.transaction(async (trx) => {
      runsBefore++;
      await put(trx, 'before', 1);
    });
    const wrecker = store.transaction((trx) => wreck(trx));
    const afterIt = store.transaction(async (trx) => put(trx, 'after', 1));
    await expect(wrecker).rejects.toThrow(/UNIQUE constraint failed/);
    await before;
    await afterIt;
    expect(runsBefore).toBe(2);
    expect([await get(store.db, 'before'), await get(store.db, 'after'), await get(store.db, 'taken')]).toEqual([1, 1, 0]);
    // The first failure's batch reports after its thrower heard of it: the last two are these units'.
    expect(batches.slice(-2)).toEqual([
      { units: 2, failed: 1, requeued: 1, committed: false, contained: true },
      { units: 2, failed: 0, requeued: 0, committed: true, contained: true },
    ]);
  });

  it('refuses a nested transaction with a clear error instead of deadlocking', async () => {
    const nested = store.transaction(async () => store.transaction(async (trx) => put(trx, 'inner', 1)));
    await expect(nested).rejects.toThrow(/cannot nest/);
    // The store is still usable.
    await store.transaction(async (trx) => put(trx, 'fine', 1));
    expect(await get(store.db, 'fine')).toBe(1);
  });

  it('never answers a compiled read with writes that are not committed yet', async () => {
    const byKey = new Prepared<{ k: string }, { v: number }>((db, arg) => (db as unknown as Kysely<Scratch>).selectFrom('kv').select('v').where('k', '=', arg('k')));
    await store.transaction(async (trx) => put(trx, 'seen', 1));
    expect(await byKey.first(store.db, { k: 'seen' })).toEqual({ v: 1 });
    // Reads started while a unit's write is uncommitted: one unit rolls back, the other commits.
    let rolledBack: Promise<unknown> | undefined;
    let committed: Promise<unknown> | undefined;
    const failing = store.transaction(async (trx) => {
      await put(trx, 'dirty', 2);
      rolledBack = byKey.first(store.db, { k: 'dirty' });
      throw new Error('roll back');
    });
    const passing = store.transaction(async (trx) => {
      await put(trx, 'later', 3);
      committed = byKey.first(store.db, { k: 'later' });
    });
    await expect(failing).rejects.toThrow('roll back');
    await passing;
    expect(await rolledBack).toBeUndefined();
    expect(await committed).toEqual({ v: 3 });
  });

  it('answers a compiled read with the rows the driver gives: every column in order, null, text, integers, a duplicate name taking the later value', async () => {
    await store.transaction(async (trx) => {
      await put(trx, 'a', 1);
      await put(trx, 'b', 9_007_199_254_740_991);
    });
    await sql`create table wide (id integer primary key, "weird name" text, "it's" text, note text)`.execute(store.db);
    await sql`insert into wide (id, "weird name", "it's", note) values (1, ${'x"y'}, ${'p'}, null)`.execute(store.db);
    const direct = new Prepared<{ min: number }, unknown>((db, arg) =>
      (db as unknown as Kysely<Scratch>)
        .selectFrom('kv')
        .selectAll()
        .select(['v as k', sql<string>`'lit'`.as('a b')])
        .where('v', '>=', arg('min'))
        .orderBy('k'),
    );
    const driver = await sql`select "kv".*, "v" as "k", 'lit' as "a b" from "kv" where "v" >= ${0} order by "k"`.execute(store.db);
    const rows = (await direct.execute(store.db, { min: 0 })).rows;
    expect(rows).toEqual(driver.rows);
    expect(rows.map((row) => Object.keys(row as object))).toEqual(driver.rows.map((row) => Object.keys(row as object)));
    expect(rows).toEqual([{ k: 1, v: 1, 'a b': 'lit' }, { k: 9_007_199_254_740_991, v: 9_007_199_254_740_991, 'a b': 'lit' }]);
    // Names any text can be are fields of the row as they are.
    const wide = new Prepared<{ id: number }, Record<string, unknown>>((db, arg) => (db as unknown as Kysely<{ wide: { id: number } }>).selectFrom('wide').selectAll().where('id', '=', arg('id')) as never);
    const row = await wide.first(store.db, { id: 1 });
    expect(Object.entries(row!)).toEqual([['id', 1], ['weird name', 'x"y'], ["it's", 'p'], ['note', null]]);
  });

  it('answers a compiled statement inside a unit as the driver does, rolls its writes back with the unit, and leaves a finished unit to the driver', async () => {
    const db = (e: Executor) => e as unknown as Kysely<Scratch>;
    const byKey = new Prepared<{ k: string }, { k: string; v: number }>((d, arg) => db(d).selectFrom('kv').selectAll().where('k', '=', arg('k')));
    const insert = new Prepared<{ k: string; v: number }, never>((d, arg) => db(d).insertInto('kv').values({ k: arg('k'), v: arg('v') }) as never);
    const insertReturning = new Prepared<{ k: string; v: number }, { k: string; v: number }>((d, arg) => db(d).insertInto('kv').values({ k: arg('k'), v: arg('v') }).returning(['k', 'v']) as never);
    const bump = new Prepared<{ min: number }, never>((d, arg) => db(d).updateTable('kv').set((eb) => ({ v: eb('v', '+', 1) })).where('v', '>=', arg('min')) as never);
    let leaked: Executor | undefined;
    await store.transaction(async (trx) => {
      leaked = trx;
      const direct = await insert.execute(trx, { k: 'a', v: 1 });
      const driver = await db(trx).insertInto('kv').values({ k: 'b', v: 2 }).executeTakeFirstOrThrow();
      expect(direct).toEqual({ numAffectedRows: 1n, insertId: driver.insertId! - 1n, rows: [] });
      expect((await insertReturning.execute(trx, { k: 'c', v: 3 })).rows).toEqual(await db(trx).insertInto('kv').values({ k: 'd', v: 4 }).returning(['k', 'v']).execute().then((rows) => rows.map((row) => ({ ...row, k: 'c', v: 3 }))));
      expect(await byKey.first(trx, { k: 'd' })).toEqual(await db(trx).selectFrom('kv').selectAll().where('k', '=', 'd').executeTakeFirst());
      const bumped = await bump.execute(trx, { min: 3 });
      const driverBump = await db(trx).updateTable('kv').set((eb) => ({ v: eb('v', '+', 1) })).where('v', '>=', 4).executeTakeFirstOrThrow();
      expect(bumped.numAffectedRows).toBe(2n);
      expect(driverBump.numUpdatedRows).toBe(2n);
      // A constraint error is SQLite's own, as through the driver.
      const directError = await insert.execute(trx, { k: 'a', v: 9 }).catch((err: unknown) => err);
      const driverError = await db(trx).insertInto('kv').values({ k: 'a', v: 9 }).execute().catch((err: unknown) => err);
      expect(directError).toBeInstanceOf(Error);
      expect((directError as { code?: string }).code).toBe('SQLITE_CONSTRAINT_PRIMARYKEY');
      expect((directError as { code?: string }).code).toBe((driverError as { code?: string }).code);
    });
    expect(await count(store.db)).toBe(4);
    // A trx kept past its unit reaches the driver again, which refuses a finished transaction.
    await expect(insert.execute(leaked!, { k: 'late', v: 1 })).rejects.toThrow(/committed|rolled back/i);
    // A unit that throws takes its compiled writes with it.
    await expect(
      store.transaction(async (trx) => {
        await insert.execute(trx, { k: 'gone', v: 1 });
        expect(await byKey.first(trx, { k: 'gone' })).toEqual({ k: 'gone', v: 1 });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await byKey.first(store.db, { k: 'gone' })).toBeUndefined();
    expect(await count(store.db)).toBe(4);
  });

  it('inserts rows in chunks of any count, each row once with its own values', async () => {
    // 300 rows go as 128 + 128 + 32 + 8 + 4: chunks of several compiled sizes, all in one unit.
    const rows = Array.from({ length: 300 }, (_, i) => ({ name: `lease-${i}`, holder: i % 2 === 0 ? 'even' : 'odd', expires_at: 1_000 + i }));
    await store.transaction((trx) => insertRows(trx, 'leases', rows));
    const stored = await store.db.selectFrom('leases').select(['name', 'holder', 'expires_at']).where('name', 'like', 'lease-%').execute();
    expect(stored.sort((a, b) => a.expires_at - b.expires_at)).toEqual(rows);
  });

  it('inserts and updates single rows with each value in its own column, a column both set and matched', async () => {
    await store.transaction(async (trx) => {
      await insertRow(trx, 'leases', { name: 'one-a', holder: 'first', expires_at: 10 });
      await insertRow(trx, 'leases', { name: 'one-b', holder: 'first', expires_at: 20 });
      await insertRow(trx, 'leases', { name: 'one-c', holder: 'other', expires_at: 30 });
    });
    // `holder` is set and matched; `expires_at` left undefined is not written.
    const changed = await store.transaction((trx) => updateRows(trx, 'leases', { holder: 'second', expires_at: undefined }, { holder: 'first', name: 'one-b' }));
    expect(changed).toBe(1);
    const again = await store.transaction((trx) => updateRows(trx, 'leases', { expires_at: 99, holder: 'third' }, { holder: 'first' }));
    expect(again).toBe(1);
    const stored = await store.db.selectFrom('leases').select(['name', 'holder', 'expires_at']).where('name', 'like', 'one-%').orderBy('name').execute();
    expect(stored).toEqual([
      { name: 'one-a', holder: 'third', expires_at: 99 },
      { name: 'one-b', holder: 'second', expires_at: 20 },
      { name: 'one-c', holder: 'other', expires_at: 30 },
    ]);
  });

  it('matches a padded IN list exactly as the list given, whatever its length', async () => {
    await store.transaction(async (trx) => {
      for (let i = 0; i < 20; i++) await put(trx, `k${i}`, i);
    });
    const sumOf = new PreparedLists<{ min: number }, 'keys', { n: number }>((db, arg, list) =>
      (db as unknown as Kysely<Scratch>)
        .selectFrom('kv')
        .select((eb) => eb.fn.count<number>('v').as('n'))
        .where('k', 'in', list('keys'))
        .where('v', '>=', arg('min')),
    );
    // 5 keys bind as 8 (the last repeated), 3 as 4, 1 as 1: each counts only the rows it names.
    expect((await sumOf.execute(store.db, { min: 0 }, { keys: ['k1', 'k2', 'k3', 'k4', 'k5'] })).rows[0]?.n).toBe(5);
    expect((await sumOf.execute(store.db, { min: 0 }, { keys: ['k1', 'k2', 'missing'] })).rows[0]?.n).toBe(2);
    expect((await sumOf.execute(store.db, { min: 2 }, { keys: ['k1', 'k2', 'k3'] })).rows[0]?.n).toBe(2);
    expect((await sumOf.execute(store.db, { min: 0 }, { keys: ['k19'] })).rows[0]?.n).toBe(1);
    await expect(sumOf.execute(store.db, { min: 0 }, { keys: [] })).rejects.toThrow('empty');
  });

  it('keeps committed data across closing and reopening', async () => {
    await Promise.all(Array.from({ length: 300 }, (_, i) => store.transaction(async (trx) => put(trx, `d${i}`, i))));
    await store.close();
    store = await open();
    expect(await count(store.db)).toBe(300);
    expect(await get(store.db, 'd299')).toBe(299);
  });

  it('lets queued units commit on close and refuses new ones after', async () => {
    const pending = Array.from({ length: 10 }, (_, i) => store.transaction(async (trx) => put(trx, `z${i}`, i)));
    await store.close();
    await Promise.all(pending);
    await expect(store.transaction(async (trx) => put(trx, 'late', 1))).rejects.toThrow(/closed/);
    store = await open();
    expect(await count(store.db)).toBe(10);
  });

  async function reopenWithHook(hook: (report: BatchReport) => void): Promise<Store> {
    await store.close();
    return openSqliteStore(dir.path, { onBatch: hook });
  }
});
