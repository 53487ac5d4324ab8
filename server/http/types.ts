import type { Context } from '@opentelemetry/api';
import type { Principal } from '../accounts/api-keys.js';
import type { RequestOrigin } from '../audit/origin.js';

declare global {
  // Express's request type is extended by declaration merging; this is the one place it is done.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set for every request by the request-id middleware. */
      requestId: string;
      /** `performance.now()` when the request reached the app (set by the request-context middleware). */
      startedAt: number;
      /** The authenticated key's merchant and mode; undefined when no valid key was presented. */
      principal?: Principal | undefined;
      /** Whether the audit trail still holds this write's answer back for its entry (server/http/audit.ts). */
      auditPending?: boolean;
      /** The Idempotency-Key header once checked (server/http/idempotency.ts `headerKeyOf`): the key, null without one, false when invalid. */
      idempotencyHeader?: string | null | false;
      /** A write's origin for the audit trail and its events (server/http/audit.ts); undefined for reads. */
      origin?: RequestOrigin | undefined;
      /** The request span's trace context when traces are exported (server/http/telemetry.ts), carried on its scope. */
      trace?: Context | undefined;
      /** Counted among the requests in flight and not yet done (server/http/in-flight.ts). */
      counted?: boolean;
      /** The route handler's work, while a stopping server waits for it (server/http/in-flight.ts). */
      handling?: Promise<unknown> | undefined;
    }
  }
}

export {};
