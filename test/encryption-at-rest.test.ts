import { existsSync, readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadServerConfig } from '../shared/config.js';
import { keySourceOf, readKeySource } from '../shared/crypto/key-source.js';
import { isSealed, keyIdOf } from '../shared/crypto/keyring.js';
import { mainKeyOf, newMainKeyMaterial } from '../shared/crypto/main-key.js';
import { createMerchant, type CreatedMerchant } from '../server/accounts/merchants.js';
import { SEALED_COLUMNS, sealedPlace } from '../server/db/encryption.js';
import { openStore } from '../server/db/store.js';
import { startStack, type Stack } from '../cli/stack.js';
import { systemClock } from '../shared/time.js';
import { call, client, type Json } from './helpers/api.js';
import { pos, runCli } from './helpers/cli.js';
import { backendEnv, backendFlags, openTestDb, releaseDataDir, seedDataDir, TEST_DATABASE_URL } from './helpers/db.js';
import { type Receiver, startReceiver } from './helpers/receiver.js';
import { eventually, tempDir } from './helpers/tmp.js';

/**
 * Secrets and customers' details are encrypted at rest (docs/keys.md): whoever can read the
 * database (the SQLite file, a PostgreSQL dump) learns no webhook secret to forge deliveries with
 * and no customer's name, email, phone or address, while the API and the deliveries work as before.
 */

const CUSTOMER = { name: 'Zebulon Quackenbush', email: 'zebulon.q@example.org', phone: '+1 555 010 4242' };
const RECEIPT_EMAIL = 'receipt.only@example.org';
const CHECKOUT = { customer_email: 'checkout.buyer@example.org', customer_name: 'Ottilie Checkoutperson' };
const PAGE_DETAILS = { email: 'page.payer@example.org', name: 'Bartholomew Pagefiller', phone: '+44 20 7946 0321', address: { line1: '77 Sunset Strip', city: 'Springfield', postal_code: '12345', country: 'US' } };
const LINK_EMAIL = 'link.buyer@example.org';
const PERSONAL = [CUSTOMER.name, CUSTOMER.email, CUSTOMER.phone, RECEIPT_EMAIL, CHECKOUT.customer_email, CHECKOUT.customer_name, PAGE_DETAILS.email, PAGE_DETAILS.name, PAGE_DETAILS.phone, PAGE_DETAILS.address.line1, LINK_EMAIL];

interface Running {
  dir: string;
  stack: Stack;
  url: string;
  stop(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A data dir whose ledger starts migrated (helpers/db.ts): what is sealed is made by the servers started on it. */
function newDataDir(): string {
  const dir = tempDir('pos-at-rest-');
  seedDataDir(dir.path);
  cleanups.push(async () => {
    await releaseDataDir(dir.path);
    dir.cleanup();
  });
  return dir.path;
}

async function start(dir: string, env: Record<string, string> = {}): Promise<Running> {
  const config = loadServerConfig({ port: 0, dataDir: dir, logLevel: 'silent', ...backendFlags(dir) }, env);
  const stack = await startStack(config, { logger: pino({ level: 'silent' }) });
  let stopping: Promise<void> | undefined;
  const running: Running = { dir, stack, url: stack.server.url, stop: () => (stopping ??= stack.close()) };
  cleanups.push(() => running.stop());
  return running;
}

async function receiver(): Promise<Receiver> {
  const r = await startReceiver();
  cleanups.push(() => r.close());
  return r;
}

/** Every byte SQLite keeps of a database: the file and its write-ahead log. */
function bytesOf(file: string): Buffer {
  return Buffer.concat([file, `${file}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f)));
}

/** Every row of the tables that hold sealed columns, as a raw `select` shows them. */
async function rawRows(dir: string): Promise<string> {
  const db = await openTestDb(dir);
  try {
    const tables = [...new Set(SEALED_COLUMNS.map((c) => c.split('.')[0]))];
    const rows = await Promise.all(tables.map((table) => db.all(`select * from ${table}`)));
    return JSON.stringify(rows);
  } finally {
    await db.close();
  }
}

/** Sealed column values as stored: `[column, row key, value]`. */
async function sealedValues(dir: string): Promise<[string, string, string][]> {
  const db = await openTestDb(dir);
  try {
    const out: [string, string, string][] = [];
    for (const column of SEALED_COLUMNS) {
      const [table, name] = column.split('.') as [string, string];
      const key = table === 'processor_settings' ? 'name' : 'id';
      for (const row of await db.all<{ k: string; v: string | null }>(`select ${key} as k, ${name} as v from ${table}`)) if (row.v !== null) out.push([column, row.k, row.v]);
    }
    return out;
  } finally {
    await db.close();
  }
}

/** What a shop does that stores secrets and customers' details: an endpoint, a customer, payments, a checkout and a link paid through their pages. */
async function shopActivity(s: Running, m: CreatedMerchant, r: Receiver): Promise<{ endpointSecret: string; customerId: string }> {
  const api = client(s.url, m.keys.sk_test);
  const endpoint = await api.post<{ data: { id: string; secret: string } }>('/v1/webhook-endpoints', { url: r.url });
  expect(endpoint.status).toBe(201);
  const customer = await api.post<{ data: { id: string } }>('/v1/customers', CUSTOMER);
  expect(customer.status).toBe(201);
  const paid = await api.post<{ data: { id: string; receipt_email: string } }>('/v1/transactions', { amount: 2300, payment_method: 'pm_card_visa', confirm: true, receipt_email: RECEIPT_EMAIL, customer_id: customer.body.data.id });
  expect(paid.status, JSON.stringify(paid.body)).toBe(201);
  const session = await api.post<{ data: { url: string } }>('/v1/checkout/sessions', { amount: 2500, ...CHECKOUT, collect_phone: true, collect_address: true });
  expect(session.status, JSON.stringify(session.body)).toBe(201);
  expect((await call(session.body.data.url, 'POST', '/start', { body: PAGE_DETAILS })).status).toBe(200);
  const link = await api.post<{ data: { url: string } }>('/v1/payment-links', { amount: 1500, customer_email: LINK_EMAIL }, { 'Idempotency-Key': 'link-1' });
  expect(link.status).toBe(201);
  expect((await call(link.body.data.url, 'POST', '/start', { body: { email: LINK_EMAIL } })).status).toBe(200);
  // The API shows what was given.
  expect((await api.get<{ data: Json }>(`/v1/customers/${customer.body.data.id}`)).body.data).toMatchObject(CUSTOMER);
  expect((await api.get<{ data: Json }>(`/v1/transactions/${paid.body.data.id}`)).body.data).toMatchObject({ receipt_email: RECEIPT_EMAIL });
  return { endpointSecret: endpoint.body.data.secret, customerId: customer.body.data.id };
}

/** The simulator's platform secret keys: what the server calls the processor with. */
function platformKeys(s: Running): string[] {
  const sim = s.stack.simulator;
  if (!sim) throw new Error('no simulator');
  return [sim.keys.secretTest, sim.keys.secretLive];
}

describe('encryption at rest', () => {
  it('keeps no webhook secret and no customer detail readable in the database, the simulator store or the log of events, and deliveries still verify', async () => {
    const dir = newDataDir();
    const s = await start(dir);
    const m = await createMerchant(s.stack.server.store, systemClock, { businessName: 'At Rest Shop' });
    const r = await receiver();
    const { endpointSecret } = await shopActivity(s, m, r);
    const delivered = await eventually(() => {
      const types = r.received.map((x) => x.type);
      return types.includes('customer.created') && types.includes('payment.succeeded') ? r.received : undefined;
    }, 20_000);
    for (const received of delivered) expect(() => r.verify(endpointSecret, received)).not.toThrow();
    expect(delivered.find((x) => x.type === 'customer.created')?.event.data).toMatchObject(CUSTOMER);
    expect(delivered.find((x) => x.type === 'payment.succeeded')?.event.data).toMatchObject({ receipt_email: RECEIPT_EMAIL });

    const processorHookSecrets = (await openTestDb(dir).then(async (db) => {
      try {
        return await db.all<{ name: string; value: string }>('select name, value from processor_settings');
      } finally {
        await db.close();
      }
    })).map((row) => (JSON.parse(s.stack.server.cipher.open('processor_settings.value', row.name, row.value)) as { secret: string }).secret);
    expect(processorHookSecrets.length).toBeGreaterThan(0);
    const secrets = [endpointSecret, endpointSecret.slice('whsec_'.length), ...processorHookSecrets];

    const rows = await rawRows(dir);
    for (const value of [...secrets, ...PERSONAL]) expect(rows, value).not.toContain(value);
    if (!TEST_DATABASE_URL) {
      // Whatever a checkpoint has or has not copied yet, the file and its log together hold no plaintext.
      const bytes = bytesOf(join(dir, 'pos.db'));
      for (const value of [...secrets, ...PERSONAL]) expect(bytes.includes(value), value).toBe(false);
    }
    const simulatorBytes = bytesOf(join(dir, 'simulator', 'simulator.db'));
    expect(simulatorBytes.length).toBeGreaterThan(0);
    for (const value of [...platformKeys(s), ...processorHookSecrets]) expect(simulatorBytes.includes(value), value).toBe(false);
  });

  it('rotates the main key while a server keeps serving: every secret stays usable, every delivery verifiable, and no value is left under the old key', async () => {
    const dir = newDataDir();
    const s = await start(dir);
    const m = await createMerchant(s.stack.server.store, systemClock, { businessName: 'Rotation Shop' });
    const r = await receiver();
    const { endpointSecret, customerId } = await shopActivity(s, m, r);
    const api = client(s.url, m.keys.sk_test);
    const oldKey = s.stack.server.cipher.primaryId;

    // Traffic that keeps writing and reading sealed values all through the rotation.
    const made: { id: string; email: string }[] = [];
    const failures: string[] = [];
    let rotating = true;
    const traffic = (async () => {
      for (let i = 0; rotating; i++) {
        const email = `during.${i}@example.org`;
        const c = await api.post<{ data: { id: string } }>('/v1/customers', { name: `During ${i}`, email });
        if (c.status !== 201) failures.push(`create ${c.status}`);
        else made.push({ id: c.body.data.id, email });
        const p = await api.post('/v1/transactions', { amount: 1000 + i, payment_method: 'pm_card_visa', confirm: true, receipt_email: email });
        if (p.status !== 201) failures.push(`pay ${p.status} ${JSON.stringify(p.body)}`);
        const first = await api.get<{ data: Json }>(`/v1/customers/${customerId}`);
        if (first.body.data?.email !== CUSTOMER.email) failures.push(`read ${first.status} ${JSON.stringify(first.body)}`);
      }
    })();
    // Two seconds for the server here to hear of the switch, which it does within milliseconds.
    const rotated = await runCli(['admin', 'rotate-master-key', '--data-dir', dir, '--json', '--settle-ms', '2000'], { env: backendEnv(dir) });
    rotating = false;
    await traffic;
    expect(rotated.status, rotated.stderr).toBe(0);
    const report = JSON.parse(rotated.stdout) as { key_id: string; previous_key_id: string; retired_key_ids: string[]; simulator_resealed: boolean; key_file: string };
    expect(report).toMatchObject({ previous_key_id: oldKey, retired_key_ids: [oldKey], simulator_resealed: true, key_file: join(dir, 'master.key') });
    expect(report.key_id).not.toBe(oldKey);
    expect(failures).toEqual([]);
    expect(made.length).toBeGreaterThan(0);

    // The key file keeps the new key only; the server seals under it.
    expect(readKeySource(keySourceOf({ dataDir: dir })).map((k) => mainKeyOf(k).id)).toEqual([report.key_id]);
    expect(s.stack.server.cipher.primaryId).toBe(report.key_id);
    const after = await api.post<{ data: { id: string } }>('/v1/customers', { name: 'After', email: 'after@example.org' });
    expect(after.status).toBe(201);
    const stored = await sealedValues(dir);
    const personalOnly = new Set(['events.data', 'idempotency_keys.state', 'idempotency_keys.response_body']);
    for (const [column, key, value] of stored) {
      if (isSealed(value)) expect(keyIdOf(value), `${column} ${key}`).toBe(report.key_id);
      else expect(personalOnly.has(column), `${column} ${key} in plaintext`).toBe(true);
    }
    // The simulator's secrets too.
    const sim = new Database(join(dir, 'simulator', 'simulator.db'), { readonly: true });
    try {
      const simValues = [
        ...(sim.prepare("select value as v from meta where key in ('platform_keys', 'key_check')").all() as { v: string }[]),
        ...(sim.prepare("select internal as v from objects where type = 'webhook_endpoint'").all() as { v: string }[]),
      ];
      expect(simValues.length).toBeGreaterThan(2);
      for (const { v } of simValues) expect(keyIdOf(v)).toBe(report.key_id);
    } finally {
      sim.close();
    }

    // Everything reads as it was written, and deliveries keep verifying with the same endpoint secret.
    for (const c of made) expect((await api.get<{ data: Json }>(`/v1/customers/${c.id}`)).body.data).toMatchObject({ email: c.email });
    const late = await api.post<{ data: { id: string } }>('/v1/transactions', { amount: 4200, payment_method: 'pm_card_visa', confirm: true, receipt_email: 'late@example.org' });
    expect(late.status).toBe(201);
    await eventually(() => r.received.find((x) => x.type === 'payment.succeeded' && x.event.data.id === late.body.data.id), 20_000);
    await eventually(() => (made.every((c) => r.received.some((x) => x.type === 'customer.created' && x.event.data.id === c.id)) ? true : undefined), 20_000);
    for (const received of r.received) expect(() => r.verify(endpointSecret, received)).not.toThrow();

    // A server started afresh with just the new key reads it all.
    await s.stop();
    const again = await start(dir);
    expect((await client(again.url, m.keys.sk_test).get<{ data: Json }>(`/v1/customers/${customerId}`)).body.data).toMatchObject(CUSTOMER);
  });

  it('seals values stored in plaintext by an older version at start, reading them meanwhile', async () => {
    const dir = newDataDir();
    const s = await start(dir);
    const m = await createMerchant(s.stack.server.store, systemClock, { businessName: 'Legacy Shop' });
    const r = await receiver();
    const { endpointSecret, customerId } = await shopActivity(s, m, r);
    await s.stop();

    // What a data dir written before encryption at rest holds: plaintext, and no record of a sealing pass.
    const store = await openStore({ dataDir: dir, ...backendFlags(dir) });
    try {
      const customer = (await sql<{ id: string }>`select id from customers where id = ${customerId}`.execute(store.db)).rows[0];
      expect(customer).toBeDefined();
      await sql`update customers set name = ${CUSTOMER.name}, email = ${CUSTOMER.email}, phone = ${CUSTOMER.phone} where id = ${customerId}`.execute(store.db);
      await sql`update webhook_endpoints set secret = ${endpointSecret}`.execute(store.db);
      await sql`update transactions set receipt_email = ${RECEIPT_EMAIL} where receipt_email is not null and customer_id = ${customerId}`.execute(store.db);
      await sql`delete from encryption_settings where name = 'legacy_sealed_at'`.execute(store.db);
    } finally {
      await store.close();
    }
    expect(await rawRows(dir)).toContain(CUSTOMER.email);

    const again = await start(dir);
    const api = client(again.url, m.keys.sk_test);
    expect((await api.get<{ data: Json }>(`/v1/customers/${customerId}`)).body.data).toMatchObject(CUSTOMER);
    await eventually(async () => {
      const rows = await rawRows(dir);
      return [CUSTOMER.name, CUSTOMER.email, CUSTOMER.phone, RECEIPT_EMAIL, endpointSecret].every((v) => !rows.includes(v)) ? true : undefined;
    }, 10_000);
    expect((await api.get<{ data: Json }>(`/v1/customers/${customerId}`)).body.data).toMatchObject(CUSTOMER);
    if (!TEST_DATABASE_URL) {
      // Nor does the file keep the old plaintext in the space the sealed values replaced, once checkpointed.
      const db = new Database(join(dir, 'pos.db'));
      try {
        db.pragma('wal_checkpoint(TRUNCATE)');
      } finally {
        db.close();
      }
      const bytes = bytesOf(join(dir, 'pos.db'));
      for (const value of [CUSTOMER.email, endpointSecret]) expect(bytes.includes(value), value).toBe(false);
    }
    const paid = await api.post('/v1/transactions', { amount: 1200, payment_method: 'pm_card_visa', confirm: true });
    expect(paid.status).toBe(201);
    const sealed = (await sealedValues(dir)).filter(([column]) => column === 'webhook_endpoints.secret');
    expect(sealed.map(([, key, value]) => again.stack.server.cipher.keyring.open(sealedPlace('webhook_endpoints.secret', key), value))).toEqual([endpointSecret]);
  });

  it('rotates a main key given in POS_MASTER_KEY once the new one is put first, and then needs only the new one', async () => {
    const dir = newDataDir();
    const [old, fresh] = [newMainKeyMaterial(), newMainKeyMaterial()];
    const s = await start(dir, { POS_MASTER_KEY: old.toString('base64') });
    const m = await createMerchant(s.stack.server.store, systemClock, { businessName: 'Env Key Shop' });
    const customer = await client(s.url, m.keys.sk_test).post<{ data: { id: string } }>('/v1/customers', CUSTOMER);
    await s.stop();
    expect(existsSync(join(dir, 'master.key'))).toBe(false);

    const alone = await runCli(['admin', 'rotate-master-key', '--data-dir', dir], { env: { ...backendEnv(dir), POS_MASTER_KEY: old.toString('base64') } });
    expect(alone.status).toBe(2);
    expect(alone.stderr).toMatch(/POS_MASTER_KEY holds only the current key: put a new one first/);
    const both = `${fresh.toString('base64')},${old.toString('hex')}`;
    const badSettle = await runCli(['admin', 'rotate-master-key', '--data-dir', dir, '--settle-ms', '-1'], { env: { ...backendEnv(dir), POS_MASTER_KEY: both } });
    expect(badSettle.status).toBe(2);
    expect(badSettle.stderr).toMatch(/--settle-ms must be a whole number of milliseconds from 0 to 60000/);
    // No server runs to switch keys: nothing to wait for.
    const rotated = await runCli(['admin', 'rotate-master-key', '--data-dir', dir, '--json', '--settle-ms', '0'], { env: { ...backendEnv(dir), POS_MASTER_KEY: both } });
    expect(rotated.status, rotated.stderr).toBe(0);
    expect(JSON.parse(rotated.stdout)).toMatchObject({ key_id: mainKeyOf(fresh).id, previous_key_id: mainKeyOf(old).id, retired_key_ids: [mainKeyOf(old).id], key_file: null });

    const again = await start(dir, { POS_MASTER_KEY: fresh.toString('base64') });
    expect((await client(again.url, m.keys.sk_test).get<{ data: Json }>(`/v1/customers/${customer.body.data.id}`)).body.data).toMatchObject(CUSTOMER);
  });

  it('refuses to start with a wrong or missing main key, saying which key the data needs (exit 2)', async () => {
    // The real `pos server`: the exit code and the one line an operator (or systemd) sees.
    const dir = newDataDir();
    const s = await start(dir);
    const primary = s.stack.server.cipher.primaryId;
    await s.stop();

    const wrong = newMainKeyMaterial();
    const refused = await pos(['server', '--port', '0', '--data-dir', dir], { ...backendEnv(dir), POS_MASTER_KEY: wrong.toString('base64') });
    expect(refused.status).toBe(2);
    expect(refused.stderr).toMatch(new RegExp(`^pos: wrong main key.*encrypted under main key ${primary}, but POS_MASTER_KEY holds ${mainKeyOf(wrong).id}`, 'm'));

    renameSync(join(dir, 'master.key'), join(dir, 'master.key.moved'));
    const missing = await pos(['server', '--port', '0', '--data-dir', dir], backendEnv(dir));
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(new RegExp(`^pos: no main key.*main key ${primary}`, 'm'));
    expect(existsSync(join(dir, 'master.key'))).toBe(false);

    const malformed = await pos(['server', '--port', '0', '--data-dir', dir], { ...backendEnv(dir), POS_MASTER_KEY: 'not-a-key' });
    expect(malformed.status).toBe(2);
    expect(malformed.stderr).toMatch(/POS_MASTER_KEY: a main key is 32 random bytes/);
  });
});
