import { setTimeout as sleep } from 'node:timers/promises';
import { ApiConnectionError, ApiRequestError, type ApiClientError } from './errors.js';
import type { ApiErrorBody } from './types.js';

/**
 * The one way to the /v1 API: base URL, bearer key, JSON in and out, Idempotency-Key, timeouts,
 * and errors as `ApiRequestError` (the API answered) or `ApiConnectionError` (nothing answered).
 * The Server-Sent Events stream goes through here too.
 */

/** How long one call may take: a terminal simulate-payment answers after the authorisation, a few seconds at most. */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Pauses between retries: 0.5 s, then 1 s, then 2 s (stripe-node's doubling from 0.5 s), or the
 * server's Retry-After, never past 5 s so a script is not held longer than a person would wait.
 */
const RETRY_BASE_MS = 500;
const RETRY_MAX_DELAY_MS = 5_000;

/** How much of a non-JSON answer an error keeps: enough to recognise a proxy's error page. */
const RAW_EXCERPT_CHARS = 200;

export type Query = Record<string, string | number | undefined>;

export interface TransportOptions {
  baseUrl: string;
  apiKey?: string | undefined;
  /** Per call; null for none (the event stream never has one). */
  timeoutMs?: number | null;
  fetch?: typeof fetch;
  /** Lets a caller present errors its own way (the CLI's exit codes and hints); the default throws them as they are. */
  mapError?: (err: ApiClientError) => Error;
  /**
   * Retries of a call that met a connection error, a 429 or a 5xx (default none). Only calls that
   * are safe to repeat are retried: reads, deletes, and writes that carry an Idempotency-Key, which
   * every retry sends again so the server answers the first one's result.
   */
  maxRetries?: number;
  /** The first pause between retries, doubled each time (tests shorten it). */
  retryBaseMs?: number;
}

export interface SendOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as it is, without a content type unless `headers` give one (for tests of malformed bodies). */
  rawBody?: string;
  headers?: Record<string, string>;
  idempotencyKey?: string | undefined;
  query?: Query;
  signal?: AbortSignal;
}

export interface RawResponse {
  status: number;
  headers: Headers;
  /** The body as text, '' when empty. */
  text: string;
  /** The body parsed, when it was JSON. */
  json: unknown;
  isJson: boolean;
}

export interface StreamMessage {
  id?: string | undefined;
  event: string;
  data: string;
}

export interface StreamOptions {
  /** Ends the stream: the promise then resolves instead of rejecting. */
  signal: AbortSignal;
  lastEventId?: string | undefined;
  query?: Query;
}

export class Transport {
  readonly baseUrl: string;
  readonly apiKey: string | undefined;
  private readonly timeoutMs: number | null;
  private readonly fetchImpl: typeof fetch;
  private readonly mapError: (err: ApiClientError) => Error;
  private readonly maxRetries: number;
  private readonly retryBaseMs: number;

  constructor(options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs === undefined ? REQUEST_TIMEOUT_MS : options.timeoutMs;
    this.fetchImpl = options.fetch ?? fetch;
    this.mapError = options.mapError ?? ((err) => err);
    this.maxRetries = options.maxRetries ?? 0;
    this.retryBaseMs = options.retryBaseMs ?? RETRY_BASE_MS;
  }

  url(path: string, query: Query = {}): string {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) qs.set(k, String(v));
    return `${this.baseUrl}${path}${qs.size ? `${path.includes('?') ? '&' : '?'}${qs}` : ''}`;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { ...extra, ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}) };
  }

  /**
   * One HTTP exchange, whatever its status: the answer as it came, after the retries the transport
   * allows (see `maxRetries`). Throws only when nothing answered.
   */
  async send(method: string, path: string, options: SendOptions = {}): Promise<RawResponse> {
    const keyed = options.idempotencyKey !== undefined || Object.keys(options.headers ?? {}).some((h) => h.toLowerCase() === 'idempotency-key');
    const repeatable = ['GET', 'HEAD', 'DELETE'].includes(method.toUpperCase()) || keyed;
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.maxRetries || !repeatable;
      let res: RawResponse;
      try {
        res = await this.#exchange(method, path, options);
      } catch (err) {
        if (last || options.signal?.aborted) throw this.mapError(new ApiConnectionError(this.baseUrl, err));
        await sleep(this.#retryDelay(attempt, null));
        continue;
      }
      if (last || (res.status !== 429 && res.status < 500)) return res;
      await sleep(this.#retryDelay(attempt, res.headers.get('retry-after')));
    }
  }

  #retryDelay(attempt: number, retryAfter: string | null): number {
    const asked = retryAfter === null ? Number.NaN : Number(retryAfter) * 1000;
    const wait = Number.isFinite(asked) && asked >= 0 ? asked : this.retryBaseMs * 2 ** attempt;
    return Math.min(wait, RETRY_MAX_DELAY_MS);
  }

  async #exchange(method: string, path: string, options: SendOptions): Promise<RawResponse> {
    const headers = this.headers(options.headers);
    let body: string | undefined;
    if (options.rawBody !== undefined) body = options.rawBody;
    else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
    }
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const signals = [options.signal, this.timeoutMs === null ? undefined : AbortSignal.timeout(this.timeoutMs)].filter((s): s is AbortSignal => s !== undefined);
    const res = await this.fetchImpl(this.url(path, options.query), {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      ...(signals.length ? { signal: AbortSignal.any(signals) } : {}),
    });
    const text = await res.text();
    let json: unknown;
    let isJson = false;
    try {
      json = text ? JSON.parse(text) : undefined;
      isJson = text !== '';
    } catch {
      // Not JSON: `isJson` stays false and callers decide what that means.
    }
    return { status: res.status, headers: res.headers, text, json, isJson };
  }

  /** A JSON call: the parsed answer on 2xx, otherwise an `ApiRequestError`. */
  async request<T>(method: string, path: string, options: SendOptions = {}): Promise<T> {
    const res = await this.send(method, path, { ...options, headers: { accept: 'application/json', ...options.headers } });
    if (res.status >= 200 && res.status < 300 && res.isJson) return res.json as T;
    throw this.mapError(errorOf(res, this.url(path, options.query)));
  }

  /** Opens a Server-Sent Events stream and hands over each message; resolves when the server ends it or `signal` aborts. */
  async stream(path: string, onMessage: (message: StreamMessage) => Promise<void> | void, options: StreamOptions): Promise<void> {
    const { signal, lastEventId } = options;
    const url = this.url(path, options.query);
    let res: Response;
    try {
      res = await this.fetchImpl(url, { headers: this.headers({ accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) }), signal });
    } catch (err) {
      if (signal.aborted) return;
      throw this.mapError(new ApiConnectionError(this.baseUrl, err));
    }
    if (!res.ok || !res.body) {
      const text = await res.text().catch(() => '');
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      throw this.mapError(errorOf({ status: res.status, text, json, isJson: json !== undefined }, url));
    }
    const decoder = new TextDecoder();
    let buffer = '';
    let message: StreamMessage = { event: 'message', data: '' };
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let newline = buffer.indexOf('\n');
        while (newline >= 0) {
          const line = buffer.slice(0, newline).replace(/\r$/, '');
          buffer = buffer.slice(newline + 1);
          newline = buffer.indexOf('\n');
          if (line === '') {
            if (message.data !== '' || message.event !== 'message') await onMessage(message);
            message = { event: 'message', data: '' };
          } else if (!line.startsWith(':')) {
            const colon = line.indexOf(':');
            const field = colon < 0 ? line : line.slice(0, colon);
            const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
            if (field === 'event') message.event = value;
            else if (field === 'data') message.data = message.data ? `${message.data}\n${value}` : value;
            else if (field === 'id') message.id = value;
          }
        }
      }
    } catch (err) {
      if (!signal.aborted) throw this.mapError(new ApiConnectionError(this.baseUrl, err, 'stream'));
    }
  }
}

function isErrorBody(value: unknown): value is ApiErrorBody {
  if (typeof value !== 'object' || value === null) return false;
  const { type, message } = value as Record<string, unknown>;
  return typeof type === 'string' && typeof message === 'string';
}

/** The error for an answer that is not a success: the API's own body when it sent one. */
function errorOf(res: Pick<RawResponse, 'status' | 'text' | 'json' | 'isJson'>, url: string): ApiRequestError {
  const body = res.isJson && typeof res.json === 'object' && res.json !== null ? (res.json as { error?: unknown }).error : undefined;
  if (res.status >= 400 && isErrorBody(body)) return new ApiRequestError(res.status, body);
  const what = res.isJson ? 'not an API answer' : res.text ? 'not JSON' : 'empty';
  return new ApiRequestError(res.status, { type: 'api_error', message: `HTTP ${res.status} from ${url} (${what})` }, { raw: res.text.slice(0, RAW_EXCERPT_CHARS) });
}
