import type { z } from 'zod';
import type { CheckoutSessionSchema, PaymentLinkSchema } from '../server/schemas/checkout.js';
import type { ErrorBodySchema } from '../server/schemas/common.js';
import type { MerchantSchema } from '../server/schemas/merchant.js';
import type { LocationSchema, ReaderSchema, TerminalPaymentSchema } from '../server/schemas/terminal.js';
import type { RefundSchema, TransactionSchema } from '../server/schemas/transactions.js';

/**
 * The one client of the `/v1` API, for the CLI, the counter TUI and the agent: the key, JSON in and
 * out, idempotency keys, a timeout, the Server-Sent Events stream, and the API's errors as one
 * error class carrying the wire body. Wire types are the server's own zod schemas, imported as
 * types only, so nothing of the server loads here. Callers that present errors (the CLI's one
 * line, the agent's answer to the counter) map these classes; this module knows none of them.
 */

export type Transaction = z.output<typeof TransactionSchema>;
export type Refund = z.output<typeof RefundSchema>;
export type Reader = z.output<typeof ReaderSchema>;
export type Location = z.output<typeof LocationSchema>;
export type Merchant = z.output<typeof MerchantSchema>;
export type PaymentLink = z.output<typeof PaymentLinkSchema>;
export type CheckoutSession = z.output<typeof CheckoutSessionSchema>;
export type TerminalPayment = z.output<typeof TerminalPaymentSchema>;
/**
 * The error object of every 4xx/5xx answer (`transaction` on a declined create). Its `type` is any
 * string: an answer is data from the network, and a newer server or the agent may name others.
 */
export type ApiErrorBody = Omit<z.output<typeof ErrorBodySchema>['error'], 'type'> & { type: string };

/** The envelope of every list (docs/api-choices.md, "Lists"). */
export type { Page } from '../server/pagination.js';

/**
 * How long one call may take before it is abandoned: a terminal simulate-payment answers after the
 * card's authorisation, a few seconds at most, so 30 s means the server is stuck, and the caller
 * (the counter, a script) gets an error instead of a spinner.
 */
export const REQUEST_TIMEOUT_MS = 30_000;

/** The API answered with an error: its status and its error body as sent. */
export class ApiCallError extends Error {
  override readonly name = 'ApiCallError';
  constructor(
    readonly status: number,
    readonly error: ApiErrorBody,
  ) {
    super(error.message);
  }
}

/** The server could not be reached or did not answer in time. */
export class ApiConnectionError extends Error {
  override readonly name = 'ApiConnectionError';
  /** The most specific reason the platform gave: `ECONNREFUSED`'s message rather than "fetch failed". */
  readonly reason: string;
  constructor(
    readonly server: string,
    cause: unknown,
  ) {
    const reason = cause instanceof Error ? ((cause.cause as Error | undefined)?.message ?? cause.message) : String(cause);
    super(`cannot reach ${server}: ${reason}`, { cause });
    this.reason = reason;
  }
}

export interface RequestOptions {
  body?: unknown;
  idempotencyKey?: string | undefined;
  query?: Record<string, string | number | undefined>;
  headers?: Record<string, string>;
}

export interface StreamMessage {
  id?: string | undefined;
  event: string;
  data: string;
}

export interface ApiClientOptions {
  server: string;
  apiKey: string;
  /** For tests that play an unreachable or odd server; the platform's fetch otherwise. */
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export class ApiClient {
  readonly server: string;
  private readonly apiKey: string;
  private readonly fetchImpl: typeof fetch;
  private readonly timeoutMs: number;

  constructor(options: ApiClientOptions) {
    this.server = options.server.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.fetchImpl = options.fetch ?? fetch;
    this.timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  }

  /** One call; resolves with the whole JSON answer (`{data, …}`), rejects with ApiCallError or ApiConnectionError. */
  async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, options: RequestOptions = {}): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, accept: 'application/json', ...options.headers };
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) query.set(k, String(v));
    const url = `${this.server}${path}${query.size ? `?${query}` : ''}`;
    let res: Response;
    let text: string;
    try {
      res = await this.fetchImpl(url, {
        method,
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      text = await res.text();
    } catch (err) {
      throw new ApiConnectionError(this.server, err);
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // A proxy's HTML error page, say: no API answer at all.
      parsed = undefined;
    }
    if (!res.ok) {
      const error = (parsed as { error?: Partial<ApiErrorBody> } | undefined)?.error;
      throw new ApiCallError(res.status, {
        ...error,
        type: error?.type ?? 'api_error',
        message: error?.message ?? `HTTP ${res.status} from ${url}${parsed === undefined && text ? ' (not an API answer)' : ''}`,
      });
    }
    if (parsed === undefined && text) throw new ApiCallError(res.status, { type: 'api_error', message: `HTTP ${res.status} from ${url} was not JSON` });
    return parsed as T;
  }

  /** The `data` of a single-object answer. */
  async data<T>(method: 'GET' | 'POST' | 'DELETE', path: string, options: RequestOptions = {}): Promise<T> {
    return (await this.request<{ data: T }>(method, path, options)).data;
  }

  /** Reads a Server-Sent Events stream; resolves when it ends (server gone, or `signal` aborted). */
  async stream(path: string, onMessage: (message: StreamMessage) => Promise<void> | void, options: { signal: AbortSignal; lastEventId?: string | undefined }): Promise<void> {
    const { signal, lastEventId } = options;
    let res: Response;
    try {
      res = await this.fetchImpl(this.server + path, {
        headers: { authorization: `Bearer ${this.apiKey}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
        signal,
      });
    } catch (err) {
      if (signal.aborted) return;
      throw new ApiConnectionError(this.server, err);
    }
    if (!res.ok || !res.body) {
      const error = ((await res.json().catch(() => undefined)) as { error?: ApiErrorBody } | undefined)?.error;
      throw new ApiCallError(res.status, error ?? ({ type: 'api_error', message: `HTTP ${res.status}` }));
    }
    const decoder = new TextDecoder();
    let buffer = '';
    let message: StreamMessage = { event: 'message', data: '' };
    try {
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
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
      if (!signal.aborted) throw new ApiConnectionError(this.server, err);
    }
  }
}

/** Resolves a reader named by a person (name, tmr_ id or uuid) among the mode's readers. */
export function findReader<R extends Pick<Reader, 'id' | 'name' | 'processor_terminal_id'>>(readers: readonly R[], wanted: string): R | undefined {
  const w = wanted.trim();
  return (
    readers.find((r) => r.id === w || r.processor_terminal_id === w) ??
    readers.find((r) => r.name === w) ??
    readers.find((r) => r.name.toLowerCase() === w.toLowerCase())
  );
}
