import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { type KeySource, readKeySource } from './key-source.js';
import { type MainKey, mainKeyOf } from './main-key.js';

/**
 * Values encrypted at rest (AES-256-GCM) under a main key, in a stored form that says what it is:
 *
 *     enc:v1:<key id>:<base64url of nonce ‖ ciphertext ‖ tag>
 *
 * The key id tells which main key sealed a value (several are loaded while one replaces another);
 * anything else is a legacy plaintext value, read as it is until it is sealed. Every value is
 * sealed with a fresh random 96-bit nonce and with associated data naming its place (table, column,
 * row id), so a sealed value copied into another row or column no longer opens.
 */

/** 96 bits: the nonce size GCM is specified for; random nonces of this size are safe for 2^32 values per key. */
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const VERSION = 'v1';
/** Key ids are 16 hex digits (64 bits of HKDF output, main-key.ts). */
const SEALED = /^enc:v1:([0-9a-f]{16}):([A-Za-z0-9_-]+)$/;
/** A stored value that claims to be sealed (any version), as opposed to legacy plaintext. */
const SEALED_HEAD = /^enc:v\d+:([0-9a-f]{16}):/;

/** Whether a stored value is sealed (else it is legacy plaintext). */
export function isSealed(stored: string): boolean {
  return SEALED_HEAD.test(stored);
}

/** The id of the key a stored value is sealed under; undefined for legacy plaintext. */
export function keyIdOf(stored: string): string | undefined {
  return SEALED_HEAD.exec(stored)?.[1];
}

/** A sealed value that does not open: unknown key, altered, or moved from another place. */
export class SealedValueError extends Error {
  override readonly name = 'SealedValueError';
}

/**
 * The associated data: the format version, the key id (so the header cannot be edited) and the
 * place. A place is `table.column:row id` (or the simulator's equivalent).
 */
function associatedData(keyId: string, place: string): Buffer {
  return Buffer.from(`pos:${VERSION}:${keyId}:${place}`, 'utf8');
}

/**
 * How often one unknown key id may make the keyring read its key file again: a rotation puts the
 * new key there moments before the first value sealed under it appears, and once a second keeps a
 * flood of values under some id nobody has from turning into a flood of file reads. Counted per id,
 * so that a read made for another id just before the new key was written does not hide it.
 */
const RELOAD_MIN_INTERVAL_MS = 1_000;

/**
 * The main keys a process holds, by id, and the primary one new values are sealed under. Opening
 * a value under a key id it does not hold makes it read its key source again (a rotation adds the
 * new key to the key file first): a running process learns a new key without a restart.
 */
export class Keyring {
  readonly #keys = new Map<string, MainKey>();
  /** In the order the source lists them: the first is the newest. */
  #order: string[] = [];
  #primary: MainKey | undefined;
  /** When each unknown key id last made the keyring read its source. */
  readonly #soughtAt = new Map<string, number>();

  constructor(
    readonly source: KeySource,
    materials: readonly Buffer[] = readKeySource(source),
  ) {
    this.#take(materials);
  }

  #take(materials: readonly Buffer[]): void {
    const order: string[] = [];
    for (const material of materials) {
      const key = mainKeyOf(material);
      if (!this.#keys.has(key.id)) this.#keys.set(key.id, key);
      order.push(key.id);
    }
    // Keys that left the source stay known: values under them may still be read until re-sealed.
    this.#order = [...order, ...this.#order.filter((id) => !order.includes(id))];
    // Until told otherwise (the database's primary key), new values go under the source's first key.
    const first = this.#order[0];
    if (!this.#primary && first !== undefined) this.#primary = this.#keys.get(first);
  }

  /** Reads the key source again (a key file may have gained a key); false when nothing could be read. */
  reload(): boolean {
    if (this.source.kind !== 'file') return false;
    try {
      this.#take(readKeySource(this.source));
      return true;
    } catch {
      return false;
    }
  }

  get size(): number {
    return this.#keys.size;
  }

  /** Key ids, newest first as the source lists them. */
  ids(): string[] {
    return [...this.#order];
  }

  has(id: string): boolean {
    return this.#keys.has(id) || (this.#reloadIfDue(id) && this.#keys.has(id));
  }

  #reloadIfDue(id: string): boolean {
    const now = Date.now();
    if (now - (this.#soughtAt.get(id) ?? -Infinity) < RELOAD_MIN_INTERVAL_MS) return false;
    this.#soughtAt.set(id, now);
    return this.reload();
  }

  /** The key new values are sealed under. */
  get primaryId(): string {
    if (!this.#primary) throw new Error('no main key is loaded');
    return this.#primary.id;
  }

  /** Seals new values under `id` from now on; false when this keyring does not hold that key. */
  usePrimary(id: string): boolean {
    if (!this.has(id)) return false;
    this.#primary = this.#keys.get(id);
    return true;
  }

  /** Seals under the primary key, or under the key `keyId` (a key check, a rotation's new key). */
  seal(place: string, plaintext: string, keyId?: string): string {
    const key = keyId === undefined ? this.#primary : this.has(keyId) ? this.#keys.get(keyId) : undefined;
    if (!key) throw new Error(keyId === undefined ? 'no main key is loaded' : `main key ${keyId} is not loaded`);
    return sealWith(key, place, plaintext);
  }

  /** The plaintext of a stored value: opened when sealed, as it is when it is legacy plaintext. */
  open(place: string, stored: string): string {
    if (!SEALED_HEAD.test(stored)) return stored;
    const match = SEALED.exec(stored);
    if (!match) throw new SealedValueError(`${place}: a sealed value of an unknown format (${stored.slice(0, 6)}…)`);
    const id = match[1] as string;
    if (!this.has(id)) throw new SealedValueError(`${place} is encrypted under main key ${id}, which this process does not hold`);
    return openWith(this.#keys.get(id) as MainKey, place, match[2] as string);
  }

  /**
   * A keyed hash (HMAC-SHA256 under a key derived from the primary key) for equality lookups of a
   * sealed value, so the plaintext never has to be stored or compared: `<key id>:<base64url>`.
   */
  lookupHash(purpose: string, value: string): string {
    return lookupHashWith(this.#keys.get(this.primaryId) as MainKey, purpose, value);
  }

  /** The lookup hash under every key held: what to look for while a rotation is re-hashing. */
  lookupHashes(purpose: string, value: string): string[] {
    return [...this.#keys.values()].map((key) => lookupHashWith(key, purpose, value));
  }
}

function sealWith(key: MainKey, place: string, plaintext: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.sealKey, nonce);
  cipher.setAAD(associatedData(key.id, place));
  const body = Buffer.concat([nonce, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `enc:${VERSION}:${key.id}:${body.toString('base64url')}`;
}

function openWith(key: MainKey, place: string, encoded: string): string {
  const body = Buffer.from(encoded, 'base64url');
  if (body.length < NONCE_BYTES + TAG_BYTES) throw new SealedValueError(`${place}: a sealed value too short to be one`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.sealKey, body.subarray(0, NONCE_BYTES));
    decipher.setAAD(associatedData(key.id, place));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    return Buffer.concat([decipher.update(body.subarray(NONCE_BYTES, body.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new SealedValueError(`${place} does not open under main key ${key.id}: it was altered, or moved from another place`);
  }
}

function lookupHashWith(key: MainKey, purpose: string, value: string): string {
  return `${key.id}:${createHmac('sha256', key.hashKey).update(`${purpose}\u0000${value}`, 'utf8').digest('base64url')}`;
}
