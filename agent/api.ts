/**
 * The agent's client for the server's /v1 API (payments, readers): JSON over HTTP with the shop's
 * secret key. Errors come back as the API's own `{type, code, message}`.
 */

/** A /v1 call that hangs this long is abandoned: the counter gets an error instead of a spinner. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface ErrorInfo {
  type: string;
  code?: string;
  message: string;
}

export class ApiCallError extends Error {
  override readonly name = 'ApiCallError';
  constructor(
    readonly status: number,
    readonly info: ErrorInfo,
  ) {
    super(info.message);
  }
}

export class ServerApi {
  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
  ) {}

  async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    let res: Response;
    try {
      res = await fetch(this.baseUrl + path, {
        method,
        headers: { authorization: `Bearer ${this.apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (err) {
      throw new ApiCallError(0, { type: 'api_connection_error', code: 'server_unreachable', message: `The server is unreachable: ${err instanceof Error ? err.message : String(err)}` });
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const error = (parsed as { error?: ErrorInfo } | undefined)?.error;
      throw new ApiCallError(res.status, {
        type: error?.type ?? 'api_error',
        ...(error?.code ? { code: error.code } : {}),
        message: error?.message ?? `HTTP ${res.status}`,
      });
    }
    return (parsed as { data: T }).data;
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T>(path: string, body: unknown, headers?: Record<string, string>): Promise<T> {
    return this.request<T>('POST', path, body, headers);
  }
}
