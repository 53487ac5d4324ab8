import type { ApiErrorBody } from './types.js';

/**
 * The API answered with an error: its HTTP status and the `error` body as it came (type, code,
 * message, param and any extra field). An answer that is not the API's JSON (a proxy's HTML 502,
 * a truncated body) is one too, with type `api_error` and the start of what came in `raw`.
 */
export class ApiRequestError extends Error {
  override readonly name = 'ApiRequestError';
  /** What came instead of the API's JSON, cut short; undefined when the body was the API's own. */
  readonly raw: string | undefined;

  constructor(
    readonly status: number,
    readonly error: ApiErrorBody,
    options: { raw?: string | undefined } = {},
  ) {
    super(`${error.type}${error.code ? ` ${error.code}` : ''}: ${error.message}`);
    this.raw = options.raw;
  }

  get type(): string {
    return this.error.type;
  }

  get code(): string | undefined {
    return this.error.code;
  }

  get param(): string | undefined {
    return this.error.param;
  }
}

/** No answer at all: refused, DNS, reset, timed out, or an event stream cut midway. */
export class ApiConnectionError extends Error {
  override readonly name = 'ApiConnectionError';
  /** The system error code (ECONNREFUSED, ENOTFOUND…) when there is one. */
  readonly code: string | undefined;
  /** The most specific description at hand: "connect ECONNREFUSED 127.0.0.1:4242" rather than "fetch failed". */
  readonly detail: string;

  constructor(
    readonly server: string,
    cause: unknown,
    readonly during: 'request' | 'stream' = 'request',
  ) {
    const inner = cause instanceof Error && cause.cause instanceof Error ? cause.cause : undefined;
    const detail = inner?.message ?? (cause instanceof Error ? cause.message : String(cause));
    super(during === 'stream' ? `the event stream from ${server} broke: ${detail}` : `cannot reach ${server}: ${detail}`, { cause });
    this.detail = detail;
    const code = (inner as { code?: unknown } | undefined)?.code;
    this.code = typeof code === 'string' ? code : undefined;
  }
}

export type ApiClientError = ApiRequestError | ApiConnectionError;
