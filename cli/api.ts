import { randomUUID } from 'node:crypto';
import type { ClientConfig } from '../shared/config.js';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';

/**
 * Two clients share this file: `PosClient`, a typed method per operation for the payments, terminal,
 * links, report and TUI commands, and `createApiClient`, the generic get/post/delete plus the
 * Server-Sent Events stream that `pos listen`, `pos events` and `pos trigger` use.
 *
 * PosClient: a small typed client for the /v1 API: one request layer (auth, JSON, idempotency keys, errors)
 * and one method per operation the CLI and the TUI use. API errors become `ApiRequestError`, a
 * CliError whose one line is "type code: message", exit code 1.
 */

export interface ApiErrorBody {
  type: string;
  code?: string;
  message: string;
  param?: string;
}

export class ApiRequestError extends CliError {
  constructor(
    readonly status: number,
    readonly error: ApiErrorBody,
  ) {
    super(`${error.type}${error.code ? ` ${error.code}` : ''}: ${error.message}`, ExitCode.apiError);
  }
}

/** The server could not be reached at all (refused, DNS, timeout). */
export class ConnectionError extends CliError {
  constructor(
    readonly server: string,
    cause: unknown,
  ) {
    super(`cannot reach ${server}: ${cause instanceof Error ? ((cause.cause as Error | undefined)?.message ?? cause.message) : String(cause)} (is \`pos server\` or \`pos up\` running?)`, ExitCode.apiError);
  }
}

export interface Transaction {
  id: string;
  reference: string;
  status: string;
  status_badge?: string;
  amount: number;
  amount_captured?: number;
  amount_refunded: number;
  currency: string;
  payment_method_type: string;
  description: string | null;
  is_test: boolean;
  card_brand: string | null;
  card_last_four: string | null;
  platform_fee_cents: number;
  tip_amount: number;
  failure_code: string | null;
  failure_message?: string | null;
  receipt_url: string | null;
  terminal_id: string | null;
  reader_id: string | null;
  created_at: string;
  [key: string]: unknown;
}

export interface Reader {
  id: string;
  name: string;
  serial_number: string;
  model: string;
  status: 'online' | 'offline';
  processor_terminal_id: string;
  location_id: string;
  last_seen_at: string | null;
  is_test: boolean;
  [key: string]: unknown;
}

export interface Location {
  id: string;
  display_name: string;
  address: Record<string, string>;
  is_test: boolean;
  [key: string]: unknown;
}

export interface Merchant {
  id: string;
  business_name: string;
  default_currency: string;
  is_test: boolean;
  processor: { name: string; publishable_key: string | null; connected_account_id: string | null };
}

export interface Page<T> {
  data: T[];
  totalCount: number;
  page: number;
  size: number;
  lastPage: number;
}

export interface PaymentLink {
  id: string;
  reference: string;
  url: string;
  amount: number;
  currency: string;
  status: string;
  is_test: boolean;
  expires_at: string;
  created_at: string;
  [key: string]: unknown;
}

export type Json = Record<string, unknown>;

/** How long one API call may take: a terminal simulate-payment answers after the authorisation, a few seconds at most. */
const REQUEST_TIMEOUT_MS = 30_000;

export interface PosClientOptions {
  server: string;
  apiKey: string | undefined;
  fetch?: typeof fetch;
}

export class PosClient {
  readonly server: string;
  private readonly apiKey: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(options: PosClientOptions) {
    this.server = options.server.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.fetchImpl = options.fetch ?? fetch;
  }

  get mode(): 'test' | 'live' | undefined {
    if (this.apiKey?.includes('_test_')) return 'test';
    if (this.apiKey?.includes('_live_')) return 'live';
    return undefined;
  }

  async request<T>(method: string, path: string, body?: unknown, options: { idempotencyKey?: string; query?: Record<string, string | number | undefined> } = {}): Promise<T> {
    if (!this.apiKey) throw new CliError('no API key: run `pos login --api-key sk_test_…`, pass --api-key, or set POS_API_KEY', ExitCode.usage);
    const headers: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const url = `${this.server}${path}${qs.size ? `?${qs}` : ''}`;
    let res: Response;
    try {
      res = await this.fetchImpl(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (err) {
      throw new ConnectionError(this.server, err);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const error = (parsed as { error?: ApiErrorBody } | undefined)?.error;
      throw new ApiRequestError(res.status, error ?? { type: 'api_error', message: `HTTP ${res.status} from ${url}` });
    }
    return parsed as T;
  }

  merchant = () => this.request<{ data: Merchant }>('GET', '/v1/merchant');

  createTransaction = (body: Json) => this.request<{ data: Transaction; client_secret: string }>('POST', '/v1/transactions', body, { idempotencyKey: randomUUID() });
  listTransactions = (query: { status?: string; page?: number; size?: number }) => this.request<Page<Transaction>>('GET', '/v1/transactions', undefined, { query });
  getTransaction = (id: string) => this.request<{ data: Transaction }>('GET', `/v1/transactions/${encodeURIComponent(id)}`);
  captureTransaction = (id: string, body: Json) => this.request<{ data: Transaction }>('POST', `/v1/transactions/${encodeURIComponent(id)}/capture`, body);
  cancelTransaction = (id: string, body: Json = {}) =>
    this.request<{ data: Transaction; reader_reset?: boolean | null; warning?: string }>('POST', `/v1/transactions/${encodeURIComponent(id)}/cancel`, body);
  refund = (id: string, body: Json) => this.request<{ data: Json }>('POST', `/v1/transactions/${encodeURIComponent(id)}/refunds`, body, { idempotencyKey: randomUUID() });

  listReaders = () => this.request<{ data: Reader[] }>('GET', '/v1/terminal/readers');
  registerReader = (body: Json) => this.request<{ data: Reader }>('POST', '/v1/terminals', body);
  deleteReader = (id: string) => this.request<{ data: Reader }>('DELETE', `/v1/terminal/readers/${encodeURIComponent(id)}`);
  listLocations = () => this.request<{ data: Location[] }>('GET', '/v1/terminal/locations');
  createLocation = (body: Json) => this.request<{ data: Location }>('POST', '/v1/terminal/locations', body);
  createTerminalPayment = (body: Json) =>
    this.request<{ data: { id: string; reference: string; payment_intent_id: string; amount: number; currency: string; status: string } }>('POST', '/v1/terminal/create-payment', body, {
      idempotencyKey: randomUUID(),
    });
  processPayment = (paymentIntentId: string, readerId: string) =>
    this.request<{ data: { reader_id: string; status: string; action_type: string } }>('POST', '/v1/terminal/process-payment', { payment_intent_id: paymentIntentId, reader_id: readerId });
  simulatePayment = (body: Json) =>
    this.request<{ data: { reader_id: string; status: string; transaction_id: string | null; failure_code: string | null } }>('POST', '/v1/terminal/simulate-payment', body);
  cancelReaderAction = (readerId: string) => this.request<{ data: Json }>('POST', '/v1/terminal/cancel-action', { reader_id: readerId });

  createPaymentLink = (body: Json) => this.request<{ data: PaymentLink }>('POST', '/v1/payment-links', body, { idempotencyKey: randomUUID() });
  listPaymentLinks = (query: { limit?: number }) => this.request<{ data: PaymentLink[]; has_more?: boolean }>('GET', '/v1/payment-links', undefined, { query });
  getPaymentLink = (id: string) => this.request<{ data: PaymentLink }>('GET', `/v1/payment-links/${encodeURIComponent(id)}`);
  deactivatePaymentLink = (id: string) => this.request<{ data: PaymentLink }>('DELETE', `/v1/payment-links/${encodeURIComponent(id)}`);

  createCheckoutSession = (body: Json) => this.request<{ data: Json & { url: string } }>('POST', '/v1/checkout/sessions', body);
  getCheckoutSession = (id: string) => this.request<{ data: Json }>('GET', `/v1/checkout/sessions/${encodeURIComponent(id)}`);

  createWebhookEndpoint = (body: Json) => this.request<{ data: Json }>('POST', '/v1/webhook-endpoints', body);
  listWebhookEndpoints = () => this.request<{ data: Json[] }>('GET', '/v1/webhook-endpoints');
  deleteWebhookEndpoint = (id: string) => this.request<{ data: Json }>('DELETE', `/v1/webhook-endpoints/${encodeURIComponent(id)}`);
}

/** Resolves a reader named by the user (name, tmr_ id or uuid) among the mode's readers. */
export function findReader(readers: readonly Reader[], wanted: string): Reader | undefined {
  const w = wanted.trim();
  return (
    readers.find((r) => r.id === w || r.processor_terminal_id === w) ??
    readers.find((r) => r.name === w) ??
    readers.find((r) => r.name.toLowerCase() === w.toLowerCase())
  );
}

/**
 * The CLI's one transport to the /v1 API: the key, JSON in and out, and API errors turned into
 * one-line CliErrors (exit code 1). Commands never call fetch themselves.
 */
export interface ApiClient {
  readonly serverUrl: string;
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  delete<T>(path: string): Promise<T>;
  /** Opens a Server-Sent Events stream; resolves when it ends (server gone, or `signal` aborted). */
  stream(path: string, onMessage: (message: StreamMessage) => Promise<void> | void, options: { signal: AbortSignal; lastEventId?: string | undefined }): Promise<void>;
}

export interface StreamMessage {
  id?: string | undefined;
  event: string;
  data: string;
}

interface ErrorBody {
  error?: { message?: string; code?: string; param?: string };
}

export function createApiClient(config: ClientConfig): ApiClient {
  const base = config.serverUrl;
  const headers = { authorization: `Bearer ${config.apiKey}` };

  async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(base + path, {
        method,
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new CliError(`cannot reach the server at ${base}: ${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message}`);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      throw new CliError(`unexpected answer from ${base}${path}: HTTP ${res.status}`);
    }
    if (!res.ok) {
      const e = (parsed as ErrorBody | undefined)?.error;
      throw new CliError(`${e?.message ?? `HTTP ${res.status}`}${e?.code ? ` (${e.code})` : ''}`);
    }
    return parsed as T;
  }

  return {
    serverUrl: base,
    get: (path) => request('GET', path),
    post: (path, body) => request('POST', path, body ?? {}),
    delete: (path) => request('DELETE', path),
    async stream(path, onMessage, { signal, lastEventId }) {
      let res: Response;
      try {
        res = await fetch(base + path, { headers: { ...headers, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) }, signal });
      } catch (err) {
        if (signal.aborted) return;
        throw new CliError(`cannot reach the server at ${base}: ${(err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message}`);
      }
      if (!res.ok || !res.body) {
        const e = ((await res.json().catch(() => undefined)) as ErrorBody | undefined)?.error;
        throw new CliError(`${e?.message ?? `HTTP ${res.status}`}${e?.code ? ` (${e.code})` : ''}`);
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
        if (!signal.aborted) throw new CliError(`the event stream broke: ${(err as Error).message}`);
      }
    },
  };
}
