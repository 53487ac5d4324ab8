import type { Logger } from 'pino';
import { ConfigError } from '../../shared/config.js';
import { describeKeySource, makeDefaultKeyFile } from '../../shared/crypto/key-source.js';
import type { Keyring } from '../../shared/crypto/keyring.js';
import { notifyOnCommit } from './notify.js';
import { type Executor, openStore, type Store, type StoreOptions, type Trx } from './store.js';

/**
 * Encryption at rest of the store (docs/keys.md). What an attacker holding a copy of the database
 * could abuse or would learn about people is sealed (shared/crypto/keyring.ts) column by column:
 * merchants' webhook signing secrets, the processor's webhook secrets, and customers' names,
 * emails, phones and addresses wherever they are kept, including the event log and the stored
 * answers of idempotent requests that carry them. Rows in memory hold what is stored; whoever
 * shows or uses a sealed value opens it (`FieldCipher.open`), so nothing else pays for it: a payment
 * without a customer's details seals and opens nothing.
 *
 * The database records which main key new values are sealed under (`encryption_settings`
 * `primary_key`) and a key check per key, so a process given another key refuses to start; a
 * rotation switches the primary key there, and every process follows it (`StoreKeyring`).
 */

/** Every sealed column as `table.column`: the place a value is bound to is this and its row's key. */
export const SEALED_COLUMNS = [
  'webhook_endpoints.secret',
  'webhook_endpoints.previous_secret',
  'processor_settings.value',
  'customers.name',
  'customers.email',
  'customers.phone',
  'transactions.receipt_email',
  'checkout_sessions.customer_email',
  'checkout_sessions.customer_name',
  'checkout_sessions.customer_details',
  'payment_links.customer_email',
  'events.data',
  'idempotency_keys.state',
  'idempotency_keys.response_body',
] as const;

export type SealedColumn = (typeof SEALED_COLUMNS)[number];

/** The place a sealed value is bound to (its associated data): its column and its row's key. */
export function sealedPlace(column: SealedColumn, rowId: string): string {
  return `${column}:${rowId}`;
}

/** Seals and opens the values of sealed columns, each bound to its column and row. */
export interface FieldCipher {
  seal(column: SealedColumn, rowId: string, plaintext: string): string;
  seal(column: SealedColumn, rowId: string, plaintext: string | null): string | null;
  /** The plaintext of a stored value; a legacy plaintext value (stored before encryption) as it is. */
  open(column: SealedColumn, rowId: string, stored: string): string;
  open(column: SealedColumn, rowId: string, stored: string | null): string | null;
}

/** The known value sealed under each key as its check. */
const KEY_CHECK = 'pos main key check';
const KEY_CHECK_PLACE = (id: string) => `encryption_keys.check_value:${id}`;

const PRIMARY_SETTING = 'primary_key';
export const LEGACY_SEALED_SETTING = 'legacy_sealed_at';

export async function readPrimaryKeyId(db: Executor): Promise<string | undefined> {
  const row = await db.selectFrom('encryption_settings').select('value').where('name', '=', PRIMARY_SETTING).executeTakeFirst();
  return row?.value;
}

/** A key's check value: the known value sealed under it. */
export function keyCheckOf(keyring: Keyring, id: string): string {
  return keyring.seal(KEY_CHECK_PLACE(id), KEY_CHECK, id);
}

/**
 * Records `id` as the key new values are sealed under (with its check, if it is new) and tells
 * every process on the database: they follow it at once (`StoreKeyring`).
 */
export async function switchPrimaryKey(trx: Trx, keyring: Keyring, id: string, now: number): Promise<void> {
  await trx.insertInto('encryption_keys').values({ id, check_value: keyCheckOf(keyring, id), created_at: now, retired_at: null }).onConflict((oc) => oc.column('id').doNothing()).execute();
  await trx.updateTable('encryption_keys').set({ retired_at: null }).where('id', '=', id).execute();
  await trx
    .insertInto('encryption_settings')
    .values({ name: PRIMARY_SETTING, value: id })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: id }))
    .execute();
  notifyOnCommit(trx, { topic: 'main_key' });
}

/**
 * The store's cipher: a keyring that seals under the database's primary key and follows it when
 * a rotation (another process, `pos admin rotate-master-key`) switches it.
 * - SQLite: before each seal, whether another process committed is one cached pragma read; only
 *   then is the primary key read again, at once, on the store's connection. A write unit holds the
 *   write lock, so no value is sealed under the old key once the switch committed.
 * - PostgreSQL: the switch's notice reaches every instance (LISTEN/NOTIFY), which reads the primary
 *   key again; a rotation keeps re-sealing until none is left under the old one (server/db/reseal.ts).
 */
export class StoreKeyring implements FieldCipher {
  #changes: number | undefined;
  #unfollow: (() => void) | undefined;
  /** Keys the database switched to that this process does not hold: said once each. */
  readonly #missing = new Set<string>();

  constructor(
    readonly keyring: Keyring,
    private readonly store: Store,
    private readonly logger?: Logger,
  ) {
    this.#changes = store.externalChanges?.();
  }

  seal(column: SealedColumn, rowId: string, plaintext: string): string;
  seal(column: SealedColumn, rowId: string, plaintext: string | null): string | null;
  seal(column: SealedColumn, rowId: string, plaintext: string | null): string | null {
    if (plaintext === null) return null;
    this.#checkPrimaryNow();
    return this.keyring.seal(sealedPlace(column, rowId), plaintext);
  }

  open(column: SealedColumn, rowId: string, stored: string): string;
  open(column: SealedColumn, rowId: string, stored: string | null): string | null;
  open(column: SealedColumn, rowId: string, stored: string | null): string | null {
    return stored === null ? null : this.keyring.open(sealedPlace(column, rowId), stored);
  }

  get primaryId(): string {
    return this.keyring.primaryId;
  }

  #checkPrimaryNow(): void {
    const changes = this.store.externalChanges?.();
    if (changes === undefined || changes === this.#changes || !this.store.readNow) return;
    const [row] = this.store.readNow('select value from encryption_settings where name = ?', [PRIMARY_SETTING]) as { value: string }[];
    // Until the switch succeeds (the key may reach this process's key file late), every seal looks again.
    if (!row || this.#use(row.value)) this.#changes = changes;
  }

  /** Seals under `id` from now on; false when this process does not hold that key. */
  #use(id: string): boolean {
    if (id === this.keyring.primaryId) return true;
    const previous = this.keyring.primaryId;
    // A switch is rare and must not wait out the keyring's pause between reads of its key file.
    if (!this.keyring.has(id)) this.keyring.reload();
    if (this.keyring.usePrimary(id)) {
      this.logger?.info({ key_id: id, previous_key_id: previous }, 'main key switched: new values are sealed under the new key');
      return true;
    }
    if (this.#missing.has(id)) return false;
    this.#missing.add(id);
    this.logger?.error(
      { key_id: id, kept_key_id: previous, key_source: describeKeySource(this.keyring.source) },
      'the database now seals under a main key this process does not hold: it keeps sealing under its own and cannot read values under the new one (docs/keys.md, "Rotating the key")',
    );
    return false;
  }

  /** Follows the primary key through notices of a switch (and any wake-up after notices may have been lost). */
  follow(): void {
    this.#unfollow ??= this.store.notifications.subscribe({ topic: 'main_key' }, () => {
      readPrimaryKeyId(this.store.db).then(
        (id) => {
          if (id !== undefined) this.#use(id);
        },
        (err: unknown) => this.logger?.warn({ err }, 'reading the primary main key failed; the next notice reads it again'),
      );
    });
  }

  stop(): void {
    this.#unfollow?.();
    this.#unfollow = undefined;
  }
}

function wrongKey(keyring: Keyring, primary: string): ConfigError {
  const source = describeKeySource(keyring.source);
  if (keyring.size === 0) {
    return new ConfigError(
      `no main key: this database's secrets and customer details are encrypted under main key ${primary}, and ${source} ${keyring.source.kind === 'file' ? 'does not exist' : 'is empty'}. Give that key with POS_MASTER_KEY or --master-key-file, or restore the key file from its backup (docs/keys.md)`,
    );
  }
  return new ConfigError(
    `wrong main key: this database's secrets and customer details are encrypted under main key ${primary}, but ${source} holds ${keyring.ids().join(', ')}. Start with the key they were encrypted with (docs/keys.md)`,
  );
}

export interface OpenKeyringOptions {
  now: number;
  logger?: Logger | undefined;
}

/**
 * The store's keyring, checked against the database: its primary key must be held and must open
 * its key check, or this throws a ConfigError saying what is wrong (a process starts with the
 * right key or not at all). A database that has no key yet takes the first key of the source; with
 * no key given, the data dir's key file is made first (mode 0600).
 */
export async function openStoreKeyring(store: Store, keyring: Keyring, options: OpenKeyringOptions): Promise<StoreKeyring> {
  let primary = await readPrimaryKeyId(store.db);
  if (primary === undefined) {
    if (keyring.size === 0) await makeKeyFile(store, keyring, options.logger);
    const first = keyring.ids()[0];
    if (first === undefined) throw new ConfigError(`no main key in ${describeKeySource(keyring.source)}`);
    await store.transaction(async (trx) => {
      // Of two instances starting at once on a new database, the first to commit decides the key;
      // the other's key is not recorded at all (and it refuses to start below unless it is the same).
      const recorded = await trx.insertInto('encryption_settings').values({ name: PRIMARY_SETTING, value: first }).onConflict((oc) => oc.column('name').doNothing()).executeTakeFirst();
      if (Number(recorded.numInsertedOrUpdatedRows ?? 0n) !== 1) return;
      await trx.insertInto('encryption_keys').values({ id: first, check_value: keyCheckOf(keyring, first), created_at: options.now, retired_at: null }).onConflict((oc) => oc.column('id').doNothing()).execute();
    });
    primary = await readPrimaryKeyId(store.db);
    if (primary === undefined) throw new Error('the primary main key was not recorded');
  }
  if (!keyring.has(primary)) throw wrongKey(keyring, primary);
  const keys = await store.db.selectFrom('encryption_keys').select(['id', 'check_value']).where('retired_at', 'is', null).execute();
  for (const key of keys) {
    if (!keyring.has(key.id)) {
      throw new ConfigError(
        `a main key rotation is under way: values are sealed under main key ${primary} and still under ${key.id}, but ${describeKeySource(keyring.source)} does not hold ${key.id}. Give both keys until \`pos admin rotate-master-key\` has finished (docs/keys.md)`,
      );
    }
    let opened: string | undefined;
    try {
      opened = keyring.open(KEY_CHECK_PLACE(key.id), key.check_value);
    } catch {
      opened = undefined;
    }
    if (opened !== KEY_CHECK) throw new ConfigError(`main key ${key.id} does not open the database's check of it: the key or the database was altered (docs/keys.md)`);
  }
  keyring.usePrimary(primary);
  return new StoreKeyring(keyring, store, options.logger);
}

async function makeKeyFile(store: Store, keyring: Keyring, logger: Logger | undefined): Promise<void> {
  const source = keyring.source;
  if (makeDefaultKeyFile(source) && source.kind === 'file') {
    const fields = { key_file: source.path };
    if (store.dialect === 'postgres') {
      logger?.warn(fields, 'made a new main key file (mode 0600): every instance on this database needs this same key, so copy the file to them or give each the key (POS_MASTER_KEY or --master-key-file), and back it up apart from the database (docs/keys.md)');
    } else {
      logger?.info(fields, 'made a new main key file (mode 0600): back it up apart from the database, which cannot be read without it (docs/keys.md)');
    }
  }
  // Made here or by another process starting at the same moment: read it.
  keyring.reload();
}

/** The store the configuration names, opened with its keyring checked: either both, or a ConfigError and nothing left open. */
export async function openStoreWithKeys(
  config: StoreOptions,
  keyring: Keyring,
  options: OpenKeyringOptions,
  storeOptions: Parameters<typeof openStore>[1] = {},
): Promise<{ store: Store; cipher: StoreKeyring }> {
  const store = await openStore(config, storeOptions);
  try {
    return { store, cipher: await openStoreKeyring(store, keyring, options) };
  } catch (err) {
    await store.close();
    throw err;
  }
}
