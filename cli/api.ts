import { PosApi } from '../shared/api/client.js';
import { ApiConnectionError, type ApiClientError } from '../shared/api/errors.js';
import type { SendOptions } from '../shared/api/transport.js';
import type { ClientConfig } from '../shared/config.js';
import { CliError, usageError } from './errors.js';

/**
 * The CLI's two presentations of the shared /v1 client (shared/api/). Both exit 1 on an API or
 * connection error (cli/exit-codes.ts); they differ in the one line printed.
 */

const NO_KEY = 'no API key: run `pos login --api-key sk_test_…`, pass --api-key, or set POS_API_KEY';

/** Resource commands and the TUI: "type code: message" (the ApiRequestError's own line), and a hint when the server is down. */
function resourceError(err: ApiClientError): Error {
  if (err instanceof ApiConnectionError) return new CliError(`${err.message} (is \`pos server\` or \`pos up\` running?)`);
  return err;
}

export interface PosClientOptions {
  server: string;
  apiKey: string | undefined;
  fetch?: typeof fetch;
}

/** The client of `ctx.api`: the profile's server and key; without a key every call is a usage error. */
export class PosClient extends PosApi {
  constructor(options: PosClientOptions) {
    super({ ...options, mapError: resourceError });
  }

  override request<T>(method: string, path: string, options?: SendOptions): Promise<T> {
    if (!this.transport.apiKey) return Promise.reject(usageError(NO_KEY));
    return super.request<T>(method, path, options);
  }
}

/** `pos events`, `pos listen`, `pos trigger`: "message (code)", as the Stripe CLI prints them. */
function eventsError(err: ApiClientError): Error {
  if (err instanceof ApiConnectionError) {
    return new CliError(err.during === 'stream' ? `the event stream broke: ${err.detail}` : `cannot reach the server at ${err.server}: ${err.code ?? err.detail}`);
  }
  if (err.raw !== undefined) return new CliError(`unexpected answer: ${err.error.message}`);
  return new CliError(`${err.error.message}${err.error.code ? ` (${err.error.code})` : ''}`);
}

export function createApiClient(config: ClientConfig): PosApi {
  return new PosApi({ server: config.serverUrl, apiKey: config.apiKey, mapError: eventsError });
}
