import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../../shared/ids.js';
import type { Mode } from '../db/schema.js';
import { Prepared } from '../db/prepared.js';
import { notifyOnCommit } from '../db/notify.js';
import type { Executor, Store, Trx } from '../db/store.js';

export type KeyKind = 'secret' | 'publishable' | 'restricted';

/** 43 base62 characters carry 43 × log2(62) ≈ 256 bits of randomness. */
const KEY_RANDOM_LENGTH = 43;

/**
 * A rolled secret keeps working this long unless the operator says otherwise, so deployed
 * integrations can switch to the new key without an outage. 24 hours matches the webhook secret
 * roll and leaves a full business day to redeploy.
 */
export const DEFAULT_ROLL_GRACE_MS = 24 * 60 * 60 * 1000;

const PREFIX: Record<KeyKind, string> = { secret: 'sk', publishable: 'pk', restricted: 'rk' };

export interface IssuedKey {
  kind: KeyKind;
  mode: Mode;
  /** The plaintext key: shown to the caller once and never stored. */
  key: string;
}

export interface Principal {
  merchantId: string;
  mode: Mode;
  kind: KeyKind;
  keyId: string;
  /** The key's last four characters: how the audit trail names it next to its id. */
  last4: string;
  /** A restricted key's permissions (shared/contract/permissions.ts); empty for the others. */
  permissions: ReadonlySet<string>;
}

const NO_PERMISSIONS: ReadonlySet<string> = new Set();

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function generateKey(kind: KeyKind, mode: Mode): string {
  return `${PREFIX[kind]}_${mode}_${randomBase62(KEY_RANDOM_LENGTH)}`;
}

const KEY_SHAPE = /^(sk|pk|rk)_(test|live)_[0-9A-Za-z]{1,200}$/;

/** A key's name, and a restricted key's permissions. */
export interface KeyGrant {
  name: string | null;
  permissions?: readonly string[];
}

export async function issueKey(db: Executor, merchantId: string, kind: KeyKind, mode: Mode, now: number, grant?: KeyGrant): Promise<IssuedKey & { id: string }> {
  const key = generateKey(kind, mode);
  const id = randomUUID();
  await db
    .insertInto('api_keys')
    .values({
      id,
      merchant_id: merchantId,
      kind,
      mode,
      key_hash: hashKey(key),
      last4: key.slice(-4),
      created_at: now,
      expires_at: null,
      name: grant?.name ?? null,
      scopes: grant?.permissions ? JSON.stringify(grant.permissions) : null,
      revoked_at: null,
    })
    .execute();
  return { id, kind, mode, key };
}

/**
 * Resolves a presented key to its merchant and mode, or null. The lookup is by SHA-256 digest
 * (the key itself is never stored); the digest found is compared again in constant time so the
 * answer's timing says nothing about how much of a guess matched.
 */
const keyByHash = new Prepared<
  { digest: string },
  { id: string; merchant_id: string; kind: KeyKind; mode: Mode; key_hash: string; last4: string; expires_at: number | null; scopes: string | null; revoked_at: number | null }
>((db, arg) => db.selectFrom('api_keys').select(['id', 'merchant_id', 'kind', 'mode', 'key_hash', 'last4', 'expires_at', 'scopes', 'revoked_at']).where('key_hash', '=', arg('digest')));

export async function authenticateKey(db: Executor, presented: string, now: number): Promise<Principal | null> {
  const found = await lookUpKey(db, presented);
  if (!found || (found.expiresAt !== null && found.expiresAt <= now)) return null;
  return found.principal;
}

/** Resolves presented keys for the request gate. */
export interface KeyAuthenticator {
  authenticate(presented: string, now: number): Principal | null | Promise<Principal | null>;
}

/** Bumped whenever this process changes existing keys, so every cache of them starts over. */
let keyWrites = 0;

/** Says that keys changed in this process (a roll or revoke itself, and again once its unit has settled). */
export function keysChanged(): void {
  keyWrites += 1;
}

/** Keys remembered at most; past it the cache starts over (a real merchant uses a handful). */
const KEY_CACHE_SIZE = 10_000;

interface CachedKey {
  principal: Principal;
  expiresAt: number | null;
}

/**
 * Every request presents a key, and its lookup (a SHA-256 and an indexed read) was a tenth of a
 * GET's cost. Where the store can say cheaply whether another process wrote since (SQLite's
 * data_version), keys found are remembered until then, or until this process rolls or revokes keys; expiry
 * is still checked on every request against the remembered `expires_at`. Keys not found are never
 * remembered. Where it can't (PostgreSQL: other instances roll keys too), every request looks up.
 */
export function keyAuthenticator(store: Store): KeyAuthenticator {
  const externalChanges = store.externalChanges;
  if (!externalChanges) return { authenticate: (presented, now) => authenticateKey(store.db, presented, now) };
  const cache = new Map<string, CachedKey>();
  let seenExternal = externalChanges();
  let seenWrites = keyWrites;
  const live = (entry: CachedKey, now: number): Principal | null => (entry.expiresAt !== null && entry.expiresAt <= now ? null : entry.principal);
  return {
    authenticate(presented, now) {
      const external = externalChanges();
      const writes = keyWrites;
      if (external !== seenExternal || writes !== seenWrites) {
        cache.clear();
        seenExternal = external;
        seenWrites = writes;
      }
      const hit = cache.get(presented);
      if (hit) return live(hit, now);
      return lookUpKey(store.db, presented).then((found) => {
        if (!found) return null;
        // Remembered only if nothing changed keys while the lookup awaited.
        if (external === externalChanges() && writes === keyWrites) {
          if (cache.size >= KEY_CACHE_SIZE) cache.clear();
          cache.set(presented, found);
        }
        return live(found, now);
      });
    },
  };
}

async function lookUpKey(db: Executor, presented: string): Promise<CachedKey | null> {
  if (!KEY_SHAPE.test(presented)) return null;
  const digest = hashKey(presented);
  const row = await keyByHash.first(db, { digest });
  if (!row || row.revoked_at !== null) return null;
  if (!timingSafeEqual(Buffer.from(row.key_hash, 'hex'), Buffer.from(digest, 'hex'))) return null;
  const permissions = row.kind === 'restricted' ? new Set(parsePermissions(row.scopes)) : NO_PERMISSIONS;
  return { principal: { merchantId: row.merchant_id, mode: row.mode, kind: row.kind, keyId: row.id, last4: row.last4, permissions }, expiresAt: row.expires_at };
}

export interface RolledKey extends IssuedKey {
  /** When the keys it replaces stop working (epoch ms). */
  previousExpiresAt: number;
}

/**
 * Issues a new secret key for each mode and gives the current ones `graceMs` more life. Keys that
 * already had an earlier expiry keep it: a roll never extends an old key. Its commit tells every
 * instance's key watch, which ends the old keys' streams and agent sockets when their grace is over.
 */
export async function rollSecretKeys(
  trx: Trx,
  merchantId: string,
  modes: readonly Mode[],
  graceMs: number,
  now: number,
): Promise<RolledKey[]> {
  const expiresAt = now + graceMs;
  const rolled: RolledKey[] = [];
  keysChanged();
  for (const mode of modes) {
    await trx
      .updateTable('api_keys')
      .set({ expires_at: expiresAt })
      .where('merchant_id', '=', merchantId)
      .where('kind', '=', 'secret')
      .where('mode', '=', mode)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', expiresAt)]))
      .execute();
    notifyOnCommit(trx, { topic: 'keys', merchantId, mode });
    const issued = await issueKey(trx, merchantId, 'secret', mode, now);
    rolled.push({ ...issued, previousExpiresAt: expiresAt });
  }
  return rolled;
}

/** A stored permission list; anything unreadable grants nothing. */
export function parsePermissions(stored: string | null): string[] {
  if (!stored) return [];
  try {
    const parsed: unknown = JSON.parse(stored);
    return Array.isArray(parsed) ? parsed.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}
