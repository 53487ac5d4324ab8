import type { KeyKind } from '../accounts/api-keys.js';
import type { Trx } from '../db/store.js';

/** The API key that acted, as the audit trail names it: never the key itself. */
export interface ActingKey {
  id: string;
  type: KeyKind;
  last4: string;
}

/**
 * Who asked for a change and through which request: made at the HTTP edge (or for an agent's
 * report) and carried on the `Scope`, so the outbox can stamp events with the request and the
 * audit trail can name the key. The domain reads it and never learns where it came from.
 */
export interface RequestOrigin {
  /** The request's Request-Id; null for what an agent reported over its websocket. */
  requestId: string | null;
  idempotencyKey: string | null;
  key: ActingKey;
  /** `POST /v1/transactions/{id}/refunds`: the method and the route as documented. */
  operation: string;
  /** The id in the request's path, as the client wrote it. */
  targetId: string | null;
  /**
   * Set when the idempotency engine takes the request: its entry is then written in the
   * transaction that stores the request's answer (or not at all, for a replay), never by the edge.
   */
  engine?: boolean;
  /**
   * Work done on behalf of another change of the same request (the payment a checkout session
   * makes): its events name the request, and the request's one entry is the outer change's.
   */
  nested?: boolean;
}

/** The origin for work done on behalf of the request's own change (see `nested`). */
export function nestedOrigin(origin: RequestOrigin | undefined): RequestOrigin | undefined {
  return origin ? { ...origin, nested: true } : undefined;
}

/**
 * Origins of units of work the idempotency engine runs for a request. A status move's listeners
 * and a refund's settlement rebuild their scope from a row; they find the request here, by the
 * unit's transaction, as notices are found (server/db/notify.ts). A WeakMap, not
 * AsyncLocalStorage: on Node 20 that turns on promise hooks for every request (a tenth of a
 * payment's CPU, measured for the store's nesting check), and the SQLite group committer runs a
 * unit in the async context of whichever unit opened the batch, not its caller's.
 */
const origins = new WeakMap<object, RequestOrigin>();

export function bindOrigin(trx: Trx, origin: RequestOrigin | undefined): void {
  if (origin) origins.set(trx, origin);
}

/** The origin a scope carries, else the one its unit of work was bound to. */
export function originOf(trx: Trx, scope?: { origin?: RequestOrigin | undefined }): RequestOrigin | undefined {
  return scope?.origin ?? origins.get(trx);
}

/** What the idempotency engine keeps of an origin on its key row (JSON), for the recovery pass. */
export function storedOrigin(origin: RequestOrigin | undefined): string | null {
  if (!origin) return null;
  const { requestId, idempotencyKey, key, operation, targetId, nested } = origin;
  return JSON.stringify({ requestId, idempotencyKey, key, operation, targetId, ...(nested ? { nested } : {}) });
}

export function parseStoredOrigin(text: string | null): RequestOrigin | undefined {
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<RequestOrigin>;
    if (typeof parsed.operation !== 'string' || !parsed.key || typeof parsed.key.id !== 'string') return undefined;
    return {
      requestId: parsed.requestId ?? null,
      idempotencyKey: parsed.idempotencyKey ?? null,
      key: parsed.key,
      operation: parsed.operation,
      targetId: parsed.targetId ?? null,
      ...(parsed.nested ? { nested: true } : {}),
    };
  } catch {
    return undefined;
  }
}
