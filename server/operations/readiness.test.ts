import Database from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Tables } from '../db/schema.js';
import { migrateToLatest } from '../db/store.js';
import { ProcessorFailure } from '../processor/errors.js';
import { Readiness } from './readiness.js';

const logger = pino({ level: 'silent' });
const database = (): Kysely<Tables> => new Kysely<Tables>({ dialect: new SqliteDialect({ database: new Database(':memory:') }) });

describe('readiness', () => {
  it('is not ready before the migrations, and ready once they ran', async () => {
    const db = database();
    const readiness = new Readiness({ db, processor: null, logger });
    const before = await readiness.check();
    expect(before).toMatchObject({ ready: false, checks: { database: 'ok', migrations: 'pending' } });
    expect(before.reasons.join()).toContain('migrations');
    await migrateToLatest(db);
    expect(await readiness.check()).toEqual({ ready: true, checks: { database: 'ok', migrations: 'current', processor: 'ok', draining: false }, reasons: [] });
    await db.destroy();
  });

  it('is not ready with the database gone', async () => {
    const db = database();
    await migrateToLatest(db);
    const readiness = new Readiness({ db, processor: null, logger });
    expect((await readiness.check()).ready).toBe(true);
    await db.destroy();
    const gone = await readiness.check();
    expect(gone).toMatchObject({ ready: false, checks: { database: 'unreachable' } });
    expect(gone.reasons.join()).toContain('database is unreachable');
  });

  it('follows the processor’s last check: an outage is not ready, a 429 is an answer', async () => {
    const db = database();
    await migrateToLatest(db);
    let failure: ProcessorFailure | undefined;
    const readiness = new Readiness({ db, processor: { ping: () => (failure ? Promise.reject(failure) : Promise.resolve()) }, logger });
    expect((await readiness.check()).checks.processor).toBe('unchecked');
    await readiness.start();
    expect((await readiness.check()).ready).toBe(true);
    failure = new ProcessorFailure('connection', 'connect ECONNREFUSED');
    await readiness.refreshProcessor();
    expect(await readiness.check()).toMatchObject({ ready: false, checks: { processor: 'unreachable' } });
    failure = new ProcessorFailure('rate_limit', 'Too many requests', { status: 429 });
    await readiness.refreshProcessor();
    expect((await readiness.check()).ready).toBe(true);
    readiness.drain();
    expect(await readiness.check()).toMatchObject({ ready: false, checks: { draining: true } });
    readiness.stop();
    await db.destroy();
  });
});
