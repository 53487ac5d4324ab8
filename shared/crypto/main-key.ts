import { hkdfSync, randomBytes } from 'node:crypto';

/**
 * Main keys: 32 random bytes an operator keeps (POS_MASTER_KEY, a key file). Nothing is sealed
 * with one directly: HKDF derives the AES key, the key of lookup hashes and the key id from it,
 * once per key (kept in `MainKey`).
 */

/** Bytes of a main key: AES-256 wants 32, and HKDF-SHA256 gives each derived key that many. */
export const MAIN_KEY_BYTES = 32;

export interface MainKey {
  /** Derived from the key: names it in stored values and in the database's key check. */
  readonly id: string;
  readonly sealKey: Buffer;
  readonly hashKey: Buffer;
}

function derive(material: Buffer, info: string, bytes: number): Buffer {
  return Buffer.from(hkdfSync('sha256', material, Buffer.alloc(0), `pos/${info}`, bytes));
}

export function mainKeyOf(material: Buffer): MainKey {
  if (material.length !== MAIN_KEY_BYTES) throw new Error(`a main key is ${MAIN_KEY_BYTES} bytes, not ${material.length}`);
  return { id: derive(material, 'key-id/v1', 8).toString('hex'), sealKey: derive(material, 'seal/v1', 32), hashKey: derive(material, 'lookup-hash/v1', 32) };
}

/** A new random main key. */
export function newMainKeyMaterial(): Buffer {
  return randomBytes(MAIN_KEY_BYTES);
}

/**
 * A main key as text: 32 bytes in base64 or base64url (what `openssl rand -base64 32` prints, and
 * what key files hold) or in 64 hex digits. Throws a message fit for the operator.
 */
export function parseMainKey(text: string): Buffer {
  const value = text.trim();
  let bytes: Buffer | undefined;
  if (/^[0-9a-fA-F]{64}$/.test(value)) bytes = Buffer.from(value, 'hex');
  else if (/^[A-Za-z0-9+/_-]{43}={0,1}$/.test(value)) bytes = Buffer.from(value.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''), 'base64url');
  if (!bytes || bytes.length !== MAIN_KEY_BYTES) throw new Error(`a main key is ${MAIN_KEY_BYTES} random bytes in base64 (openssl rand -base64 32) or 64 hex digits`);
  return bytes;
}

export function formatMainKey(material: Buffer): string {
  return material.toString('base64url');
}
