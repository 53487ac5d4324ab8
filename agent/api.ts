import { ApiCallError, ApiClient, ApiConnectionError } from '../shared/api-client.js';

export { ApiCallError };

/**
 * The agent's view of the server's /v1 API (payments, readers), over the one client in
 * shared/api-client.ts with the shop's secret key. Every failure is an ApiCallError with the API's
 * own `{type, code, message}`, an unreachable server included (status 0, `server_unreachable`), so
 * the agent can hand any of them to the counter as they are.
 */
export class ServerApi {
  private readonly client: ApiClient;

  constructor(baseUrl: string, apiKey: string) {
    this.client = new ApiClient({ server: baseUrl, apiKey });
  }

  async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    try {
      return await this.client.data<T>(method, path, { ...(body !== undefined ? { body } : {}), headers });
    } catch (err) {
      if (err instanceof ApiConnectionError) {
        throw new ApiCallError(0, { type: 'api_connection_error', code: 'server_unreachable', message: `The server is unreachable: ${err.reason}` });
      }
      throw err;
    }
  }

  get<T>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  post<T>(path: string, body: unknown, headers?: Record<string, string>): Promise<T> {
    return this.request<T>('POST', path, body, headers);
  }
}
