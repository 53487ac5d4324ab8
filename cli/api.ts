import { PosApi } from '../shared/api/client.js';
import type { SendOptions } from '../shared/api/transport.js';
import { usageError } from './errors.js';

/**
 * The CLI's clients of the shared /v1 client (shared/api/). Errors come out as the client throws
 * them (ApiRequestError, ApiConnectionError) and become one line in one place, `errorLine` in
 * cli/errors.ts; both exit 1 (cli/exit-codes.ts).
 */

export interface PosClientOptions {
  server: string;
  apiKey: string | undefined;
  fetch?: typeof fetch;
  /** What a call without a key says (a missing profile names itself); default: how to give a key. */
  noKey?: string;
  /** Retries of a call that is safe to repeat (default CLI_RETRIES; shared/api/transport.ts says which). */
  maxRetries?: number;
  retryBaseMs?: number;
}

/** As stripe-node's scripts are told to set: two retries ride out a restart or a dropped connection. */
export const CLI_RETRIES = 2;

/** The client of `ctx.api`: the profile's server and key; without a key every call is a usage error. */
export class PosClient extends PosApi {
  readonly #noKey: string;

  constructor(options: PosClientOptions) {
    super({ ...options, maxRetries: options.maxRetries ?? CLI_RETRIES });
    this.#noKey = options.noKey ?? 'no API key: run `pos login --api-key sk_test_…`, pass --api-key, or set POS_API_KEY';
  }

  /** The key calls are made with; without one, the usage error every call would end in. */
  requireKey(): string {
    if (!this.transport.apiKey) throw usageError(this.#noKey);
    return this.transport.apiKey;
  }

  override request<T>(method: string, path: string, options?: SendOptions): Promise<T> {
    if (!this.transport.apiKey) return Promise.reject(usageError(this.#noKey));
    return super.request<T>(method, path, options);
  }
}
