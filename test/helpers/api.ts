/** A thin fetch wrapper for tests: real HTTP, JSON in and out, headers kept for assertions. */
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
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Non-JSON answers are returned as text so a test can say what it got.
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

export function client(baseUrl: string, key?: string) {
  return {
    get: <T = Json>(path: string, headers?: Record<string, string>) => call<T>(baseUrl, 'GET', path, { key, ...(headers ? { headers } : {}) }),
    post: <T = Json>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>(baseUrl, 'POST', path, { key, body: body ?? {}, ...(headers ? { headers } : {}) }),
    delete: <T = Json>(path: string) => call<T>(baseUrl, 'DELETE', path, { key }),
    raw: <T = Json>(method: string, path: string, options: Parameters<typeof call>[3] = {}) => call<T>(baseUrl, method, path, { key, ...options }),
  };
}
