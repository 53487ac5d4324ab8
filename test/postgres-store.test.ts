import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { dropPostgresSchema, openPostgresStore } from '../server/db/postgres.js';
import { TEST_DATABASE_URL } from './helpers/db.js';

/**
 * The PostgreSQL store among other tenants of one database. Runs on the PostgreSQL pass only.
 */
describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL store beside other schemas', () => {
  const url = TEST_DATABASE_URL!;
  const prefix = `${process.env.POS_TEST_SCHEMA_PREFIX || 't_'}churn_`;

  it('migrates its own schema while other schemas are dropped around it', async () => {
    // Other tenants' schemas, with serial columns like ours, dropped while we start: our migration
    // must not trip over a schema that vanishes under a catalog-wide query.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const others = Array.from({ length: 60 }, (_, i) => `${prefix}other${i}`);
      for (const name of others) await admin.query(`create schema "${name}"; create table "${name}".t (id serial primary key, a int, b text, c bigint)`);
      const droppers = [0, 1, 2].map(async (lane) => {
        const c = new pg.Client({ connectionString: url });
        await c.connect();
        try {
          for (let i = lane; i < others.length; i += 3) await c.query(`drop schema "${others[i]}" cascade`);
        } finally {
          await c.end();
        }
      });
      const ours = Array.from({ length: 6 }, (_, i) => `${prefix}ours${i}`);
      const opened = ours.map(async (schema) => {
        const store = await openPostgresStore(url, { schema });
        try {
          // Migrated: the ledger's tables are there and usable.
          const merchants = await store.db.selectFrom('merchants').select('id').execute();
          return merchants.length;
        } finally {
          await store.close();
        }
      });
      const [results] = await Promise.all([Promise.allSettled(opened), Promise.all(droppers)]);
      const failures = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
      expect(failures).toEqual([]);
      // A second start finds everything applied and changes nothing.
      const again = await openPostgresStore(url, { schema: ours[0] });
      await again.close();
      for (const schema of ours) await dropPostgresSchema(url, schema);
    } finally {
      await admin.query(`select 1`);
      await admin.end();
    }
  }, 60_000);
});
