import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../shared/config.js';
import { keySourceOf, readKeySource, replaceKeyFile } from '../../shared/crypto/key-source.js';
import { isSealed, Keyring, keyIdOf } from '../../shared/crypto/keyring.js';
import { mainKeyOf, newMainKeyMaterial } from '../../shared/crypto/main-key.js';
import { backendFlags } from '../../test/helpers/db.js';
import { type Domain, openDomain } from '../../test/helpers/domain.js';
import { eventually, tempDir } from '../../test/helpers/tmp.js';
import { LEGACY_SEALED_SETTING, openStoreKeyring, readPrimaryKeyId, switchPrimaryKey } from './encryption.js';
import { rotateMainKey, sealLegacyValues } from './reseal.js';
import { openStore, type Store } from './store.js';
import { unpackJson } from './packed-json.js';

const EMAIL = 'ada.lovelace@example.com';

describe('encryption at rest in the store', () => {
  let d: Domain;
  const opened: Store[] = [];
  beforeEach(async () => {
    d = await openDomain();
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    await d.close();
  });

  /** Another connection to the same database: what another process (the admin CLI, an instance) sees. */
  async function another(): Promise<Store> {
    const store = await openStore({ dataDir: d.dataDir, ...backendFlags(d.dataDir) });
    opened.push(store);
    return store;
  }

  const keyFile = () => keySourceOf({ dataDir: d.dataDir });

  async function someSecrets() {
    const customer = await d.services.customers.create(d.scope, { name: 'Ada Lovelace', email: EMAIL, phone: '+44 20 7946 0000' });
    const endpoint = await d.services.webhookEndpoints.create(d.scope, { url: 'http://127.0.0.1:9/hook' });
    const payment = await d.services.transactions.create(
      d.scope,
      { input: { amount: 1500, payment_method_type: 'card', confirm: false, capture_method: 'automatic', receipt_email: EMAIL }, source: 'api', terminalId: null, response: 'transaction' },
      'with-receipt-email',
    );
    return { customer, endpoint, transactionId: payment.state.transactionId ?? '' };
  }

  async function raw<T>(query: string): Promise<T[]> {
    return (await sql.raw<T>(query).execute(d.store.db)).rows;
  }

  it('records the first key with its check; the same key opens again, another or none is refused by name', async () => {
    const primary = await readPrimaryKeyId(d.store.db);
    expect(primary).toBe(d.cipher.primaryId);
    expect(await openStoreKeyring(d.store, new Keyring(keyFile()), { now: 0 })).toBeDefined();

    const wrong = new Keyring({ kind: 'env', keys: [newMainKeyMaterial()] });
    await expect(openStoreKeyring(d.store, wrong, { now: 0 })).rejects.toThrow(new RegExp(`^wrong main key: .* encrypted under main key ${primary}, but POS_MASTER_KEY holds ${wrong.primaryId}`));

    const elsewhere = tempDir('pos-nokey-');
    try {
      const none = new Keyring(keySourceOf({ dataDir: elsewhere.path }));
      const refused = await openStoreKeyring(d.store, none, { now: 0 }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as Error).message).toMatch(new RegExp(`^no main key: .* main key ${primary}, and the key file ${join(elsewhere.path, 'master.key')} does not exist`));
      // A database that has a key never gets a new key file made for it.
      expect(existsSync(join(elsewhere.path, 'master.key'))).toBe(false);
    } finally {
      elsewhere.cleanup();
    }
  });

  it('refuses a key whose check does not open, and a rotation half done without its old key', async () => {
    const material = readKeySource(keyFile());
    const other = await another();
    await sql`update encryption_keys set check_value = ${new Keyring({ kind: 'env', keys: material }).seal('elsewhere', 'pos main key check')}`.execute(other.db);
    await expect(openStoreKeyring(d.store, new Keyring(keyFile()), { now: 0 })).rejects.toThrow(/does not open the database's check of it/);

    const d2 = await openDomain();
    try {
      const fresh = newMainKeyMaterial();
      const both = new Keyring({ kind: 'env', keys: [fresh, ...readKeySource(keySourceOf({ dataDir: d2.dataDir }))] });
      await d2.store.transaction((trx) => switchPrimaryKey(trx, both, mainKeyOf(fresh).id, 0));
      await expect(openStoreKeyring(d2.store, new Keyring({ kind: 'env', keys: [fresh] }), { now: 0 })).rejects.toThrow(/rotation is under way.*does not hold/);
      expect((await openStoreKeyring(d2.store, both, { now: 0 })).primaryId).toBe(mainKeyOf(fresh).id);
    } finally {
      await d2.close();
    }
  });

  it('stores secrets and customer details sealed, and shows them as they were given', async () => {
    const { customer, endpoint, transactionId } = await someSecrets();
    const [c] = await raw<{ name: string; email: string; phone: string }>(`select name, email, phone from customers where id = '${customer.id}'`);
    const [e] = await raw<{ secret: string }>(`select secret from webhook_endpoints where id = '${endpoint.id}'`);
    const [t] = await raw<{ receipt_email: string }>(`select receipt_email from transactions where id = '${transactionId}'`);
    for (const value of [c?.name, c?.email, c?.phone, e?.secret, t?.receipt_email]) expect(isSealed(value ?? '')).toBe(true);
    const events = await raw<{ type: string; data: string }>('select type, data from events order by seq');
    expect(events.map((r) => r.type)).toEqual(['customer.created', 'payment.created']);
    for (const event of events) expect(isSealed(event.data)).toBe(true);
    const keys = await raw<{ state: string | null; response_body: string | null }>('select state, response_body from idempotency_keys');
    // Packed or not, what names the customer is sealed.
    const kept = keys.flatMap((key) => [key.state, key.response_body]).filter((value): value is string => value !== null);
    for (const value of kept) if (!isSealed(value)) expect(unpackJson(value)).not.toContain(EMAIL);
    expect(kept.filter((value) => isSealed(value))).not.toHaveLength(0);

    expect(await d.services.customers.get(d.scope, customer.id)).toMatchObject({ name: 'Ada Lovelace', email: EMAIL, phone: '+44 20 7946 0000' });
    expect(await d.services.transactions.get(d.scope, transactionId)).toMatchObject({ receipt_email: EMAIL });
    expect((await d.services.events.list(d.scope, { page: 1, size: 10 })).data.map((ev) => ev.data)).toEqual(
      expect.arrayContaining([expect.objectContaining({ email: EMAIL }), expect.objectContaining({ receipt_email: EMAIL })]),
    );
    // A payment without a customer's details seals nothing.
    const plain = await d.services.transactions.create(d.scope, { input: { amount: 900, payment_method_type: 'card', confirm: false, capture_method: 'automatic' }, source: 'api', terminalId: null, response: 'transaction' }, 'plain');
    const [event] = await raw<{ data: string }>(`select data from events where object_id = '${plain.state.transactionId}'`);
    expect(JSON.parse(unpackJson(event?.data ?? ''))).toMatchObject({ receipt_email: null });
  });

  it('keeps the previous webhook secret sealed in its own column after a roll', async () => {
    const { endpoint } = await someSecrets();
    const rolled = await d.services.webhookEndpoints.rollSecret(d.scope, endpoint.id);
    const [row] = await raw<{ secret: string; previous_secret: string }>(`select secret, previous_secret from webhook_endpoints where id = '${endpoint.id}'`);
    expect(isSealed(row?.secret ?? '')).toBe(true);
    expect(d.cipher.open('webhook_endpoints.previous_secret', endpoint.id, row?.previous_secret ?? '')).toBe(endpoint.secret);
    expect(d.cipher.open('webhook_endpoints.secret', endpoint.id, row?.secret ?? '')).toBe(rolled.secret);
  });

  it('follows a switch of the primary key made by another process', async () => {
    const fresh = newMainKeyMaterial();
    const source = keyFile();
    if (source.kind !== 'file') throw new Error('expected the data dir key file');
    replaceKeyFile(source.path, [fresh, ...readKeySource(source)]);
    d.cipher.follow();
    const other = await another();
    await other.transaction((trx) => switchPrimaryKey(trx, new Keyring(source), mainKeyOf(fresh).id, 0));
    await eventually(() => (keyIdOf(d.cipher.seal('customers.name', 'x', 'A')) === mainKeyOf(fresh).id ? true : undefined));
    d.cipher.stop();
  });

  it('seals values stored in plaintext before, in batches, and says so once done', async () => {
    const { customer, endpoint, transactionId } = await someSecrets();
    const plainEvent = JSON.stringify({ object: 'customer', id: customer.id, email: EMAIL, is_test: true });
    await raw(`update customers set email = '${EMAIL}', name = 'Ada Lovelace' where id = '${customer.id}'`);
    await raw(`update webhook_endpoints set secret = '${endpoint.secret}' where id = '${endpoint.id}'`);
    await raw(`update transactions set receipt_email = '${EMAIL}' where id = '${transactionId}'`);
    await raw(`update events set data = '${plainEvent}' where type = 'customer.created'`);
    await raw(`delete from encryption_settings where name = '${LEGACY_SEALED_SETTING}'`);
    // Read as they are meanwhile.
    expect(await d.services.customers.get(d.scope, customer.id)).toMatchObject({ email: EMAIL, name: 'Ada Lovelace' });

    const sealed = await sealLegacyValues(d.store, d.cipher, { now: () => 1, batch: 2 });
    expect(sealed).toBe(5);
    const [c] = await raw<{ name: string; email: string }>(`select name, email from customers where id = '${customer.id}'`);
    const [e] = await raw<{ secret: string }>(`select secret from webhook_endpoints where id = '${endpoint.id}'`);
    const [ev] = await raw<{ data: string }>(`select data from events where type = 'customer.created'`);
    for (const value of [c?.name, c?.email, e?.secret, ev?.data]) expect(isSealed(value ?? '')).toBe(true);
    expect(await d.services.customers.get(d.scope, customer.id)).toMatchObject({ email: EMAIL, name: 'Ada Lovelace' });
    expect(await d.services.transactions.get(d.scope, transactionId)).toMatchObject({ receipt_email: EMAIL });
    expect(await raw(`select value from encryption_settings where name = '${LEGACY_SEALED_SETTING}'`)).toHaveLength(1);
    await raw(`update customers set phone = '+1 555 0100' where id = '${customer.id}'`);
    // Done once: later starts skip the scan.
    expect(await sealLegacyValues(d.store, d.cipher, { now: () => 2 })).toBe(0);
  });

  it('rotates every value to a new key and retires the old one', async () => {
    const { customer, endpoint, transactionId } = await someSecrets();
    const old = d.cipher.primaryId;
    const fresh = newMainKeyMaterial();
    const source = keyFile();
    if (source.kind !== 'file') throw new Error('expected the data dir key file');
    replaceKeyFile(source.path, [fresh, ...readKeySource(source)]);
    d.cipher.keyring.reload();
    const report = await rotateMainKey(d.store, d.cipher, mainKeyOf(fresh).id, { now: () => Date.now(), settleMs: 0, batch: 3 });
    expect(report).toMatchObject({ keyId: mainKeyOf(fresh).id, retired: [old] });
    expect(report.resealed).toMatchObject({ 'customers.email': 1, 'webhook_endpoints.secret': 1, 'transactions.receipt_email': 1, 'events.data': 2 });
    for (const [table, column] of [['customers', 'email'], ['webhook_endpoints', 'secret'], ['transactions', 'receipt_email'], ['events', 'data'], ['processor_settings', 'value']] as const) {
      const rows = await raw<{ v: string | null }>(`select ${column} as v from ${table}`);
      for (const row of rows) if (row.v !== null && isSealed(row.v)) expect(keyIdOf(row.v)).toBe(mainKeyOf(fresh).id);
    }
    expect(await raw<{ retired_at: number | null }>(`select retired_at from encryption_keys where id = '${old}'`)).toEqual([{ retired_at: expect.any(Number) }]);
    expect(await d.services.customers.get(d.scope, customer.id)).toMatchObject({ email: EMAIL });
    expect(await d.services.transactions.get(d.scope, transactionId)).toMatchObject({ receipt_email: EMAIL });
    // A new process needs the new key only.
    expect((await openStoreKeyring(await another(), new Keyring({ kind: 'env', keys: [fresh] }), { now: 0 })).primaryId).toBe(mainKeyOf(fresh).id);
    const [row] = await raw<{ secret: string }>(`select secret from webhook_endpoints where id = '${endpoint.id}'`);
    expect(new Keyring({ kind: 'env', keys: [fresh] }).open(`webhook_endpoints.secret:${endpoint.id}`, row?.secret ?? '')).toBe(endpoint.secret);
  });
});
