import { randomUUID } from 'node:crypto';
import {
  ApiCallError,
  ApiClient as V1Client,
  ApiConnectionError,
  type ApiErrorBody,
  type CheckoutSession,
  type Location,
  type Merchant,
  type Page,
  type PaymentLink,
  type Reader,
  type RequestOptions,
  type StreamMessage,
  type TerminalPayment,
  type Transaction,
} from '../shared/api-client.js';
import type { ClientConfig } from '../shared/config.js';
import { CliError } from './errors.js';
import { ExitCode } from './exit-codes.js';

export { findReader } from '../shared/api-client.js';
export type { ApiErrorBody, Location, Merchant, Page, PaymentLink, Reader, StreamMessage, Transaction };

/**
 * The CLI's and the TUI's view of the /v1 API, over the one client in shared/api-client.ts:
 * `PosClient`, a typed method per operation for the payments, terminal, links, report and TUI
 * commands, and `createApiClient`, the generic get/post/delete plus the Server-Sent Events stream
 * that `pos listen`, `pos events` and `pos trigger` use. Both turn the client's errors into
 * CliErrors: API errors into `ApiRequestError` ("type code: message", exit code 1).
 */

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

export type Json = Record<string, unknown>;

export interface PosClientOptions {
  server: string;
  apiKey: string | undefined;
  fetch?: typeof fetch;
}

export class PosClient {
  readonly server: string;
  private readonly apiKey: string | undefined;
  private readonly client: V1Client | undefined;

  constructor(options: PosClientOptions) {
    this.server = options.server.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.client = options.apiKey ? new V1Client({ server: options.server, apiKey: options.apiKey, ...(options.fetch ? { fetch: options.fetch } : {}) }) : undefined;
  }

  get mode(): 'test' | 'live' | undefined {
    if (this.apiKey?.includes('_test_')) return 'test';
    if (this.apiKey?.includes('_live_')) return 'live';
    return undefined;
  }

  async request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown, options: Omit<RequestOptions, 'body'> = {}): Promise<T> {
    if (!this.client) throw new CliError('no API key: run `pos login --api-key sk_test_…`, pass --api-key, or set POS_API_KEY', ExitCode.usage);
    try {
      return await this.client.request<T>(method, path, { ...options, ...(body !== undefined ? { body } : {}) });
    } catch (err) {
      if (err instanceof ApiCallError) throw new ApiRequestError(err.status, err.error);
      if (err instanceof ApiConnectionError) throw new ConnectionError(this.server, err.cause);
      throw err;
    }
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
  createTerminalPayment = (body: Json) => this.request<{ data: TerminalPayment }>('POST', '/v1/terminal/create-payment', body, { idempotencyKey: randomUUID() });
  /** `paymentIntentId` as a terminal create answered it: null (no PaymentIntent) is the server's to refuse. */
  processPayment = (paymentIntentId: string | null, readerId: string) =>
    this.request<{ data: { reader_id: string; status: string; action_type: string } }>('POST', '/v1/terminal/process-payment', { payment_intent_id: paymentIntentId, reader_id: readerId });
  simulatePayment = (body: Json) =>
    this.request<{ data: { reader_id: string; status: string; transaction_id: string | null; failure_code: string | null } }>('POST', '/v1/terminal/simulate-payment', body);
  cancelReaderAction = (readerId: string) => this.request<{ data: Json }>('POST', '/v1/terminal/cancel-action', { reader_id: readerId });

  createPaymentLink = (body: Json) => this.request<{ data: PaymentLink }>('POST', '/v1/payment-links', body, { idempotencyKey: randomUUID() });
  listPaymentLinks = (query: { limit?: number }) => this.request<{ data: PaymentLink[]; has_more?: boolean }>('GET', '/v1/payment-links', undefined, { query });
  getPaymentLink = (id: string) => this.request<{ data: PaymentLink }>('GET', `/v1/payment-links/${encodeURIComponent(id)}`);
  deactivatePaymentLink = (id: string) => this.request<{ data: PaymentLink }>('DELETE', `/v1/payment-links/${encodeURIComponent(id)}`);

  createCheckoutSession = (body: Json) => this.request<{ data: CheckoutSession }>('POST', '/v1/checkout/sessions', body);
  getCheckoutSession = (id: string) => this.request<{ data: CheckoutSession }>('GET', `/v1/checkout/sessions/${encodeURIComponent(id)}`);

  createWebhookEndpoint = (body: Json) => this.request<{ data: Json }>('POST', '/v1/webhook-endpoints', body);
  listWebhookEndpoints = () => this.request<{ data: Json[] }>('GET', '/v1/webhook-endpoints');
  deleteWebhookEndpoint = (id: string) => this.request<{ data: Json }>('DELETE', `/v1/webhook-endpoints/${encodeURIComponent(id)}`);
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

export function createApiClient(config: ClientConfig): ApiClient {
  const client = new V1Client({ server: config.serverUrl, apiKey: config.apiKey });
  const base = client.server;
  /** One line per failure, in the words `pos listen` and `pos events` have always used. */
  const oneLine = (err: unknown, path: string): unknown => {
    if (err instanceof ApiConnectionError) {
      const cause = err.cause as { cause?: { code?: string }; message?: string } | undefined;
      return new CliError(`cannot reach the server at ${base}: ${cause?.cause?.code ?? cause?.message ?? err.reason}`);
    }
    if (err instanceof ApiCallError) {
      if (err.error.message.endsWith('was not JSON')) return new CliError(`unexpected answer from ${base}${path}: HTTP ${err.status}`);
      return new CliError(`${err.error.message}${err.error.code ? ` (${err.error.code})` : ''}`);
    }
    return err;
  };
  const call = async <T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> => {
    try {
      return await client.request<T>(method, path, body === undefined ? {} : { body });
    } catch (err) {
      throw oneLine(err, path);
    }
  };
  return {
    serverUrl: base,
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body ?? {}),
    delete: (path) => call('DELETE', path),
    async stream(path, onMessage, options) {
      try {
        await client.stream(path, onMessage, options);
      } catch (err) {
        if (err instanceof ApiConnectionError && options.signal.aborted) return;
        throw err instanceof ApiConnectionError && err.reason && !/fetch failed|ECONNREFUSED/.test(err.reason) ? new CliError(`the event stream broke: ${err.reason}`) : oneLine(err, path);
      }
    },
  };
}
