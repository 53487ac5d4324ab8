import pg from 'pg';

/**
 * On the PostgreSQL run, every schema of this run starts with a prefix of its own (two runs on one
 * database, two developers say, never touch each other's); at the end the run drops what its
 * tests did not get to clean up (a crashed worker, a SIGKILLed server).
 */
async function dropTestSchemas(prefix: string): Promise<void> {
  const url = process.env.POS_TEST_DATABASE_URL;
  if (!url) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ nspname: string }>('select nspname from pg_namespace where starts_with(nspname, $1)', [prefix]);
    for (const { nspname } of rows) await client.query(`drop schema if exists "${nspname}" cascade`);
  } finally {
    await client.end();
  }
}

let prefix = '';

export function setup(): void {
  // Workers are started after this and inherit the environment.
  prefix = `t${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}_`;
  process.env.POS_TEST_SCHEMA_PREFIX = prefix;
}

export async function teardown(): Promise<void> {
  await dropTestSchemas(prefix);
}
