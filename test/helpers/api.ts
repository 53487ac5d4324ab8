import { Transport } from '../../shared/api/transport.js';
import { checkAnswer, uncheckedFetch } from './contract.js';

/**
 * The tests' view of the /v1 API: real HTTP through the shared client's transport, every answer
 * returned as it came (status, headers, body) so tests can assert on errors as well as successes, and
 * checked against the OpenAPI document on the way (a status or body it does not declare throws, and
 * fails the test: helpers/contract.ts).
 */
export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

export type Json = Record<string, unknown>;

export async function call<T = Json>(
  baseUrl: string,
  method: string,
  path: string,
  options: { key?: string | undefined; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  // No timeout: the test runner's own timeout says when a test has waited too long.
  const transport = new Transport({ baseUrl, apiKey: options.key, timeoutMs: null, fetch: uncheckedFetch });
  const res = await transport.send(method, path, {
    ...(options.body !== undefined ? { body: options.body } : {}),
    ...(options.rawBody !== undefined ? { rawBody: options.rawBody } : {}),
    ...(options.headers ? { headers: options.headers } : {}),
  });
  // Non-JSON answers are returned as text so a test can say what it got.
  const body = res.isJson ? res.json : res.text || undefined;
  checkAnswer(method, path, res.status, res.headers.get('content-type'), body);
  return { status: res.status, headers: res.headers, body: body as T };
}

export function client(baseUrl: string, key?: string) {
  return {
    get: <T = Json>(path: string, headers?: Record<string, string>) => call<T>(baseUrl, 'GET', path, { key, ...(headers ? { headers } : {}) }),
    post: <T = Json>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>(baseUrl, 'POST', path, { key, body: body ?? {}, ...(headers ? { headers } : {}) }),
    delete: <T = Json>(path: string) => call<T>(baseUrl, 'DELETE', path, { key }),
    raw: <T = Json>(method: string, path: string, options: Parameters<typeof call>[3] = {}) => call<T>(baseUrl, method, path, { key, ...options }),
  };
}
