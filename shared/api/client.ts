import { randomUUID } from 'node:crypto';
import { Transport, type Query, type SendOptions, type StreamMessage, type StreamOptions, type TransportOptions } from './transport.js';
import type {
  ApiKey,
  AuditLog,
  OnboardingLink,
  OnboardingLinkParams,
  Balance,
  BankAccount,
  CancelActionResult,
  CancelParams,
  CancelTransactionResponse,
  CaptureParams,
  CheckoutSession,
  CreateApiKeyParams,
  CreateCheckoutSessionParams,
  CreateCustomerParams,
  CreateLocationParams,
  UpdateLocationParams,
  CreatePaymentLinkParams,
  CreatePayoutParams,
  CreateRefundParams,
  CreateTerminalPaymentParams,
  CreateTransactionParams,
  CreateTransactionResponse,
  CreateWebhookEndpointParams,
  Customer,
  CustomerList,
  Data,
  DeletedCustomer,
  DeletedWebhookEndpoint,
  Dispute,
  DisputeList,
  EventDetail,
  EventList,
  Location,
  Merchant,
  PaymentLink,
  PaymentLinkList,
  Payout,
  PayoutList,
  Reader,
  ReaderAction,
  Device,
  Refund,
  RegisterReaderParams,
  RollApiKeyParams,
  ResendEventParams,
  SimulatePaymentParams,
  SetBankAccountParams,
  SimulateResult,
  SubmitEvidenceParams,
  TerminalPayment,
  Receipt,
  Transaction,
  TransactionList,
  UpdateCustomerParams,
  WebhookEndpoint,
  WebhookEndpointList,
  UpdateWebhookEndpointParams,
} from './types.js';

/**
 * The typed /v1 client the CLI, the counter TUI, the agent and the tests share: one method per
 * operation over the one `Transport`. Creates that the server makes idempotent get a fresh
 * Idempotency-Key unless the caller brings its own (the agent derives one per counter request).
 */

/** Filters of the audit trail; `created_gte`/`created_lte` go out as `created[gte]`/`created[lte]`. */
export interface AuditLogQuery {
  page?: number;
  size?: number;
  object_id?: string | undefined;
  key_id?: string | undefined;
  created_gte?: string | undefined;
  created_lte?: string | undefined;
}

export interface PosApiOptions extends Omit<TransportOptions, 'baseUrl'> {
  server: string;
}

const id = (value: string) => encodeURIComponent(value);

export class PosApi {
  readonly transport: Transport;

  constructor(options: PosApiOptions) {
    const { server, ...rest } = options;
    this.transport = new Transport({ baseUrl: server, ...rest });
  }

  get server(): string {
    return this.transport.baseUrl;
  }

  /** The key's mode, read from its prefix (sk_, rk_ or pk_). */
  get mode(): 'test' | 'live' | undefined {
    const key = this.transport.apiKey;
    if (key?.includes('_test_')) return 'test';
    if (key?.includes('_live_')) return 'live';
    return undefined;
  }

  request<T>(method: string, path: string, options?: SendOptions): Promise<T> {
    return this.transport.request<T>(method, path, options);
  }

  stream(path: string, onMessage: (message: StreamMessage) => Promise<void> | void, options: StreamOptions): Promise<void> {
    return this.transport.stream(path, onMessage, options);
  }

  merchant = () => this.request<Data<Merchant>>('GET', '/v1/merchant');
  onboardingLink = (body: OnboardingLinkParams = {}) => this.request<Data<OnboardingLink>>('POST', '/v1/merchant/onboarding-link', { body });

  /** Keys: the secret key's job only (restricted keys get 403). */
  createApiKey = (body: CreateApiKeyParams) => this.request<Data<ApiKey>>('POST', '/v1/api-keys', { body });
  listApiKeys = () => this.request<Data<ApiKey[]>>('GET', '/v1/api-keys');
  rollApiKey = (key: string, body: RollApiKeyParams = {}) => this.request<Data<ApiKey>>('POST', `/v1/api-keys/${id(key)}/roll`, { body });
  revokeApiKey = (key: string) => this.request<Data<ApiKey>>('POST', `/v1/api-keys/${id(key)}/revoke`, { body: {} });

  /** The audit trail, newest first: the secret key's job only (restricted keys get 403). */
  listAuditLog = (query: AuditLogQuery = {}) => {
    const { created_gte, created_lte, ...rest } = query;
    return this.request<AuditLog>('GET', '/v1/audit-log', { query: { ...rest, 'created[gte]': created_gte, 'created[lte]': created_lte } });
  };

  createTransaction = (body: CreateTransactionParams, options: { idempotencyKey?: string } = {}) =>
    this.request<CreateTransactionResponse>('POST', '/v1/transactions', { body, idempotencyKey: options.idempotencyKey ?? randomUUID() });
  listTransactions = (query: { status?: string | undefined; channel?: 'counter' | 'online' | undefined; page?: number; size?: number } = {}) => this.request<TransactionList>('GET', '/v1/transactions', { query });
  getTransaction = (txn: string) => this.request<Data<Transaction>>('GET', `/v1/transactions/${id(txn)}`);
  getReceipt = (txn: string) => this.request<Data<Receipt>>('GET', `/v1/transactions/${id(txn)}/receipt`);
  captureTransaction = (txn: string, body: CaptureParams = {}) => this.request<Data<Transaction>>('POST', `/v1/transactions/${id(txn)}/capture`, { body });
  cancelTransaction = (txn: string, body: CancelParams = {}) => this.request<CancelTransactionResponse>('POST', `/v1/transactions/${id(txn)}/cancel`, { body });
  refund = (txn: string, body: CreateRefundParams = {}, options: { idempotencyKey?: string } = {}) =>
    this.request<Data<Refund>>('POST', `/v1/transactions/${id(txn)}/refunds`, { body, idempotencyKey: options.idempotencyKey ?? randomUUID() });

  listDisputes = (query: { page?: number; size?: number; transaction_id?: string | undefined; status?: string | undefined } = {}) => this.request<DisputeList>('GET', '/v1/disputes', { query });
  getDispute = (dispute: string) => this.request<Data<Dispute>>('GET', `/v1/disputes/${id(dispute)}`);
  submitDisputeEvidence = (dispute: string, body: SubmitEvidenceParams) => this.request<Data<Dispute>>('POST', `/v1/disputes/${id(dispute)}/evidence`, { body });
  acceptDispute = (dispute: string) => this.request<Data<Dispute>>('POST', `/v1/disputes/${id(dispute)}/close`, { body: {} });

  balance = () => this.request<Data<Balance>>('GET', '/v1/balance');
  createPayout = (body: CreatePayoutParams = {}, options: { idempotencyKey?: string } = {}) =>
    this.request<Data<Payout>>('POST', '/v1/payouts', { body, idempotencyKey: options.idempotencyKey ?? randomUUID() });
  listPayouts = (query: { page?: number; size?: number; status?: string | undefined } = {}) => this.request<PayoutList>('GET', '/v1/payouts', { query });
  getPayout = (payout: string) => this.request<Data<Payout>>('GET', `/v1/payouts/${id(payout)}`);
  bankAccount = () => this.request<Data<BankAccount>>('GET', '/v1/merchant/bank-account');
  setBankAccount = (body: SetBankAccountParams) => this.request<Data<BankAccount>>('POST', '/v1/merchant/bank-account', { body });

  createCustomer = (body: CreateCustomerParams) => this.request<Data<Customer>>('POST', '/v1/customers', { body });
  listCustomers = (query: { page?: number; size?: number } = {}) => this.request<CustomerList>('GET', '/v1/customers', { query });
  getCustomer = (customer: string) => this.request<Data<Customer>>('GET', `/v1/customers/${id(customer)}`);
  updateCustomer = (customer: string, body: UpdateCustomerParams) => this.request<Data<Customer>>('POST', `/v1/customers/${id(customer)}`, { body });
  deleteCustomer = (customer: string) => this.request<Data<DeletedCustomer>>('DELETE', `/v1/customers/${id(customer)}`);

  listReaders = () => this.request<Data<Reader[]>>('GET', '/v1/terminal/readers');
  listDevices = () => this.request<Data<Device[]>>('GET', '/v1/terminal/devices');
  /** Every reader's live processor state (what the agent polls). */
  registerReader = (body: RegisterReaderParams) => this.request<Data<Reader>>('POST', '/v1/terminals', { body });
  deleteReader = (reader: string) => this.request<Data<Reader>>('DELETE', `/v1/terminal/readers/${id(reader)}`);
  listLocations = () => this.request<Data<Location[]>>('GET', '/v1/terminal/locations');
  createLocation = (body: CreateLocationParams) => this.request<Data<Location>>('POST', '/v1/terminal/locations', { body });
  updateLocation = (location: string, body: UpdateLocationParams) => this.request<Data<Location>>('POST', `/v1/terminal/locations/${id(location)}`, { body });
  createTerminalPayment = (body: CreateTerminalPaymentParams, options: { idempotencyKey?: string } = {}) =>
    this.request<Data<TerminalPayment>>('POST', '/v1/terminal/create-payment', { body, idempotencyKey: options.idempotencyKey ?? randomUUID() });
  processPayment = (paymentIntentId: string, readerId: string) =>
    this.request<Data<ReaderAction>>('POST', '/v1/terminal/process-payment', { body: { payment_intent_id: paymentIntentId, reader_id: readerId } });
  simulatePayment = (body: SimulatePaymentParams) => this.request<Data<SimulateResult>>('POST', '/v1/terminal/simulate-payment', { body });
  cancelReaderAction = (readerId: string) => this.request<Data<CancelActionResult>>('POST', '/v1/terminal/cancel-action', { body: { reader_id: readerId } });

  createPaymentLink = (body: CreatePaymentLinkParams) => this.request<Data<PaymentLink>>('POST', '/v1/payment-links', { body, idempotencyKey: randomUUID() });
  listPaymentLinks = (query: { limit?: number; starting_after?: string } = {}) => this.request<PaymentLinkList>('GET', '/v1/payment-links', { query });
  getPaymentLink = (link: string) => this.request<Data<PaymentLink>>('GET', `/v1/payment-links/${id(link)}`);
  deactivatePaymentLink = (link: string) => this.request<Data<PaymentLink>>('DELETE', `/v1/payment-links/${id(link)}`);

  createCheckoutSession = (body: CreateCheckoutSessionParams) => this.request<Data<CheckoutSession>>('POST', '/v1/checkout/sessions', { body });
  getCheckoutSession = (session: string) => this.request<Data<CheckoutSession>>('GET', `/v1/checkout/sessions/${id(session)}`);

  createWebhookEndpoint = (body: CreateWebhookEndpointParams) => this.request<Data<WebhookEndpoint>>('POST', '/v1/webhook-endpoints', { body });
  listWebhookEndpoints = (query: { page?: number; size?: number } = {}) => this.request<WebhookEndpointList>('GET', '/v1/webhook-endpoints', { query });
  getWebhookEndpoint = (endpoint: string) => this.request<Data<WebhookEndpoint>>('GET', `/v1/webhook-endpoints/${id(endpoint)}`);
  updateWebhookEndpoint = (endpoint: string, body: UpdateWebhookEndpointParams) => this.request<Data<WebhookEndpoint>>('POST', `/v1/webhook-endpoints/${id(endpoint)}`, { body });
  rollWebhookEndpointSecret = (endpoint: string) => this.request<Data<WebhookEndpoint>>('POST', `/v1/webhook-endpoints/${id(endpoint)}/roll-secret`, { body: {} });
  deleteWebhookEndpoint = (endpoint: string) => this.request<DeletedWebhookEndpoint>('DELETE', `/v1/webhook-endpoints/${id(endpoint)}`);

  listEvents = (query: { page?: number; size?: number; type?: string | undefined } = {}) => this.request<EventList>('GET', '/v1/events', { query });
  getEvent = (event: string) => this.request<Data<EventDetail>>('GET', `/v1/events/${id(event)}`);
  resendEvent = (event: string, body: ResendEventParams) => this.request<Data<EventDetail>>('POST', `/v1/events/${id(event)}/resend`, { body });
  /** The live event stream (`GET /v1/events/stream`): a `ready` message, then one message per event. */
  streamRequestLog = (onMessage: (message: StreamMessage) => Promise<void> | void, options: StreamOptions) => this.stream('/v1/request-log/stream', onMessage, options);

  streamEvents = (onMessage: (message: StreamMessage) => Promise<void> | void, options: StreamOptions & { types?: string[] | undefined }) => {
    const { types, ...rest } = options;
    const query: Query = types?.length ? { types: types.join(',') } : {};
    return this.stream('/v1/events/stream', onMessage, { ...rest, query });
  };
}

/** Resolves a reader named by a person (name, tmr_ id or uuid) among the mode's readers. */
export function findReader<R extends Pick<Reader, 'id' | 'processor_terminal_id' | 'name'>>(readers: readonly R[], wanted: string): R | undefined {
  const w = wanted.trim();
  return (
    readers.find((r) => r.id === w || r.processor_terminal_id === w) ??
    readers.find((r) => r.name === w) ??
    readers.find((r) => r.name.toLowerCase() === w.toLowerCase())
  );
}
