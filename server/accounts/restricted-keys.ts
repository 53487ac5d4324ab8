import { toIsoOrNull, toIsoTimestamp, type Clock } from '../../shared/time.js';
import type { ApiKeysTable } from '../db/schema.js';
import { notifyOnCommit } from '../db/notify.js';
import type { Store } from '../db/store.js';
import { conflict, invalid, notFound } from '../errors.js';
import type { ApiKeyView, CreateApiKeyInput } from '../../shared/contract/api-keys.js';
import { DEFAULT_ROLL_GRACE_MS, issueKey, keysChanged, parsePermissions } from './api-keys.js';
import { PRESETS, type Permission } from '../../shared/contract/permissions.js';
import { normalizePermissions } from './permissions.js';
import type { Scope } from './scope.js';

/** More than any shop needs (a counter per till, a few integrations); stops a loop from minting keys without end. */
export const MAX_ACTIVE_RESTRICTED_KEYS = 100;

function statusOf(row: ApiKeysTable, now: number): ApiKeyView['status'] {
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at === null) return 'active';
  return Number(row.expires_at) <= now ? 'expired' : 'expiring';
}

function present(row: ApiKeysTable, now: number): ApiKeyView {
  return {
    id: row.id,
    object: 'api_key',
    type: row.kind,
    name: row.name,
    mode: row.mode,
    scopes: row.kind === 'restricted' ? parsePermissions(row.scopes) : null,
    last4: row.last4,
    status: statusOf(row, now),
    created_at: toIsoTimestamp(Number(row.created_at)),
    expires_at: toIsoOrNull(row.expires_at),
    revoked_at: toIsoOrNull(row.revoked_at),
  };
}

/**
 * The merchant's own management of its keys through the API (the secret key's job only: the
 * routes say `scope: 'secret'`). Keys are per mode: a key made, listed, rolled or revoked is of
 * the calling key's mode. Plaintext keys are returned once and never stored.
 */
export class ApiKeyService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  async create(scope: Scope, input: CreateApiKeyInput): Promise<ApiKeyView> {
    const wanted: Permission[] = [...(input.scopes ?? []), ...(input.preset ? PRESETS[input.preset] : [])];
    if (wanted.length === 0) throw invalid('scopes', 'A restricted key needs permissions: give `scopes`, a `preset`, or both', 'parameter_missing');
    const permissions = normalizePermissions(wanted);
    const now = this.clock.now();
    const issued = await this.store.transaction(async (trx) => {
      const active = await trx
        .selectFrom('api_keys')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('merchant_id', '=', scope.merchantId)
        .where('mode', '=', scope.mode)
        .where('kind', '=', 'restricted')
        .where('revoked_at', 'is', null)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .executeTakeFirstOrThrow();
      if (Number(active.n) >= MAX_ACTIVE_RESTRICTED_KEYS) {
        throw conflict('api_key_limit', `This mode already has ${MAX_ACTIVE_RESTRICTED_KEYS} working restricted keys: revoke some first`);
      }
      return issueKey(trx, scope.merchantId, 'restricted', scope.mode, now, { name: input.name, permissions });
    });
    const row = await this.row(scope, issued.id);
    return { ...present(row, now), secret: issued.key };
  }

  /** Every key of the mode, newest first: working ones, rolled ones in their grace, expired and revoked ones. */
  async list(scope: Scope): Promise<ApiKeyView[]> {
    const now = this.clock.now();
    const rows = await this.store.db
      .selectFrom('api_keys')
      .selectAll()
      .where('merchant_id', '=', scope.merchantId)
      .where('mode', '=', scope.mode)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .execute();
    return rows.map((r) => present(r, now));
  }

  /**
   * A new key with the same name and permissions; the old one keeps working for `graceMs` (never
   * longer than it already would). Secret and restricted keys roll; publishable keys have no use yet.
   */
  async roll(scope: Scope, id: string, graceMs = DEFAULT_ROLL_GRACE_MS): Promise<ApiKeyView> {
    const now = this.clock.now();
    const expiresAt = now + graceMs;
    keysChanged();
    try {
      const issued = await this.store.transaction(async (trx) => {
        const row = await trx.selectFrom('api_keys').selectAll().where('id', '=', id).where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode).executeTakeFirst();
        if (!row) throw notFound('id', 'API key');
        if (row.kind === 'publishable') throw invalid('id', 'Publishable keys are not rolled: only secret (sk_) and restricted (rk_) keys are', 'api_key_not_rollable');
        if (row.revoked_at !== null || (row.expires_at !== null && Number(row.expires_at) <= now)) {
          throw conflict('api_key_inactive', 'This key no longer works (revoked or expired): create a new one instead');
        }
        // Conditional on the key still being in force, so two rolls at once cannot both succeed.
        const moved = await trx
          .updateTable('api_keys')
          .set({ expires_at: row.expires_at === null ? expiresAt : Math.min(row.expires_at, expiresAt) })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .where((eb) => (row.expires_at === null ? eb('expires_at', 'is', null) : eb('expires_at', '=', row.expires_at)))
          .executeTakeFirst();
        if (Number(moved.numUpdatedRows) !== 1) throw conflict('api_key_inactive', 'This key was rolled or revoked meanwhile: list the keys and try again');
        // Every instance's key watch re-reads the old key's expiry and ends its connections then.
        notifyOnCommit(trx, { topic: 'keys', merchantId: scope.merchantId, mode: scope.mode });
        const grant = { name: row.name, ...(row.kind === 'restricted' ? { permissions: parsePermissions(row.scopes) } : {}) };
        const fresh = await issueKey(trx, scope.merchantId, row.kind, scope.mode, now, grant);
        return { fresh, replacedExpiresAt: row.expires_at === null ? expiresAt : Math.min(row.expires_at, expiresAt) };
      });
      const row = await this.row(scope, issued.fresh.id);
      return { ...present(row, now), secret: issued.fresh.key, replaced: { id, expires_at: toIsoTimestamp(issued.replacedExpiresAt) } };
    } finally {
      keysChanged();
    }
  }

  /**
   * Stops a restricted key at once, on every instance: the key lookup ignores revoked rows, the
   * per-process key cache starts over (here, and on SQLite in other processes at their next request),
   * and the commit's notice closes the event streams and agent sockets it opened (key-watch.ts).
   * Secret keys are rolled instead, so a merchant cannot lock itself out of its own account.
   */
  async revoke(scope: Scope, id: string): Promise<ApiKeyView> {
    const now = this.clock.now();
    keysChanged();
    try {
      await this.store.transaction(async (trx) => {
        const row = await trx.selectFrom('api_keys').select(['kind', 'revoked_at']).where('id', '=', id).where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode).executeTakeFirst();
        if (!row) throw notFound('id', 'API key');
        if (row.kind !== 'restricted') {
          throw invalid('id', 'Only restricted keys (rk_) are revoked; stop a secret key by rolling it with grace_hours 0', 'api_key_not_revocable');
        }
        // Revoking twice is harmless and keeps the first time.
        await trx.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
        // Every instance's key watch ends the streams and agent sockets this key opened.
        notifyOnCommit(trx, { topic: 'keys', merchantId: scope.merchantId, mode: scope.mode });
      });
    } finally {
      keysChanged();
    }
    return present(await this.row(scope, id), now);
  }

  private async row(scope: Scope, id: string): Promise<ApiKeysTable> {
    const row = await this.store.db.selectFrom('api_keys').selectAll().where('id', '=', id).where('merchant_id', '=', scope.merchantId).where('mode', '=', scope.mode).executeTakeFirst();
    if (!row) throw notFound('id', 'API key');
    return row;
  }
}
