import type { Mode } from '../db/schema.js';
import type { Context } from '@opentelemetry/api';
import type { RequestOrigin } from '../audit/origin.js';

/** Every read and write happens inside one merchant's one mode; the API key decides which. */
export interface Scope {
  merchantId: string;
  mode: Mode;
  /** The HTTP request acting in this scope (its Request-Id), when there is one: named in logs of work it leaves behind. */
  requestId?: string;
  /** Who acts and through which request (key, Request-Id, Idempotency-Key): for events and the audit trail. */
  origin?: RequestOrigin;
  /**
   * The trace context work in this scope continues (the request's span, or the idempotent
   * operation's inside one): carried here because nothing follows it across an `await`
   * (server/operations/trace-context.ts). Absent when traces are off.
   */
  trace?: Context;
}
