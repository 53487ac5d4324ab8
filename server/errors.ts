/**
 * The one error type of the API. Its fields are the wire fields of spec §7:
 * `{ "error": { "type", "message", "code"?, "param"? } }`. Status and type follow Stripe.
 */
export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'card_error'
  | 'permission_error'
  | 'rate_limit_error'
  | 'idempotency_error'
  | 'api_error';

export interface ErrorBody {
  type: ErrorType;
  message: string;
  code?: string;
  param?: string;
  decline_code?: string;
  /** On a 403 to a restricted key: the permission it lacks. */
  required_scope?: string;
}

/**
 * Every error code the API answers, by status: the one catalogue the constructors below take their
 * codes from (a code not listed here does not compile) and the OpenAPI document's code enums come
 * from (server/http/route-table.ts). A route declares which of its statuses' codes it can raise.
 * Codes a processor passes through (a card decline, a refused request) are kept when listed here and
 * otherwise answered as the generic one (`card_declined`, `processor_invalid_request`): the list holds
 * every code the simulator answers to the calls pos makes, and Stripe documents its own codes as a
 * list that grows, so a code it adds later is answered as the generic one rather than an
 * undocumented value (docs/api-choices.md, "Errors").
 */
export const ERROR_CODES = {
  400: [
    'parameter_invalid',
    'parameter_missing',
    'parameter_unknown',
    'resource_missing',
    'invalid_json',
    'invalid_url',
    'invalid_characters',
    'signature_invalid',
    'signature_missing',
    'ach_unavailable',
    'webhook_endpoint_limit',
    'url_invalid',
    'country_unsupported',
    'currency_unsupported',
    'charges_not_enabled',
    'payouts_not_enabled',
    'ach_not_enabled',
    'live_mode_unavailable',
    'livemode_not_allowed',
    'location_required',
    'api_key_not_rollable',
    'api_key_not_revocable',
    'processor_idempotency_error',
    'processor_request_unsendable',
    'processor_invalid_request',
    // Stripe's codes for a request it refused, passed through as the processor gave them.
    'amount_too_small',
    'amount_too_large',
    'invalid_currency',
    'parameter_invalid_integer',
    'parameter_invalid_empty',
    'payment_intent_unexpected_state',
    'payment_intent_canceled',
    'balance_insufficient',
    'account_invalid',
    'terminal_reader_offline',
    'terminal_reader_busy',
    'charge_already_refunded',
    'charge_already_captured',
    'charge_not_refundable',
    'charge_disputed',
    'terminal_reader_invalid_state',
    'terminal_reader_already_registered',
    'email_invalid',
    'phone_number_invalid',
    'account_number_invalid',
    'routing_number_invalid',
    'bank_account_unusable',
  ],
  401: ['api_key_invalid'],
  402: [
    'card_declined',
    'expired_card',
    'incorrect_cvc',
    'incorrect_number',
    'incorrect_zip',
    'invalid_cvc',
    'invalid_expiry_month',
    'invalid_expiry_year',
    'invalid_number',
    'insufficient_funds',
    'processing_error',
    'authentication_required',
    'card_decline_rate_limit_exceeded',
    'payment_intent_authentication_failure',
    'customer_canceled',
    'debit_not_authorized',
    'account_closed',
    'no_account',
    'processor_invalid_request',
  ],
  403: ['missing_scope', 'secret_key_required'],
  404: ['resource_missing'],
  409: [
    'idempotency_key_in_use',
    'already_refunded',
    'already_captured',
    'transaction_not_refundable',
    'transaction_not_capturable',
    'transaction_not_processable',
    'transaction_being_created',
    'transaction_disputed',
    'authorization_in_progress',
    'dispute_closed',
    'dispute_under_review',
    'reader_busy',
    'reader_offline',
    'reader_idle',
    'agent_id_in_use',
    'agent_limit_reached',
    'checkout_session_complete',
    'endpoint_disabled',
    'event_mode_unknown',
    'api_key_limit',
    'api_key_inactive',
  ],
  410: ['checkout_session_expired', 'payment_link_deactivated', 'payment_link_expired'],
  413: ['body_too_large'],
  415: ['unsupported_media_type'],
  426: ['upgrade_required'],
  429: ['rate_limit', 'rate_limited'],
  502: ['processor_unavailable', 'processor_misconfigured'],
  503: ['processor_not_configured', 'retries_exhausted'],
} as const satisfies Record<number, readonly string[]>;

export type CodedStatus = keyof typeof ERROR_CODES;
export type ErrorCode<S extends CodedStatus> = (typeof ERROR_CODES)[S][number];

/** A code a processor passed through, as the catalogue knows it: itself when listed, else the status's generic one. */
export function knownCode<S extends CodedStatus>(status: S, code: string | undefined, generic: ErrorCode<S>): ErrorCode<S> {
  return code !== undefined && (ERROR_CODES[status] as readonly string[]).includes(code) ? (code as ErrorCode<S>) : generic;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly type: ErrorType;
  readonly code: string | undefined;
  readonly param: string | undefined;
  readonly declineCode: string | undefined;
  readonly requiredScope: string | undefined;
  /** Extra response headers (e.g. Retry-After on 429). */
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    type: ErrorType,
    message: string,
    options: { code?: string; param?: string; declineCode?: string; requiredScope?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.status = status;
    this.type = type;
    this.code = options.code;
    this.param = options.param;
    this.declineCode = options.declineCode;
    this.requiredScope = options.requiredScope;
    this.headers = options.headers ?? {};
  }

  toBody(): { error: ErrorBody } {
    const error: ErrorBody = { type: this.type, message: this.message };
    if (this.code !== undefined) error.code = this.code;
    if (this.param !== undefined) error.param = this.param;
    if (this.declineCode !== undefined) error.decline_code = this.declineCode;
    if (this.requiredScope !== undefined) error.required_scope = this.requiredScope;
    return { error };
  }
}

export function notFound(param: string, what = 'object'): ApiError {
  return new ApiError(404, 'invalid_request_error', `No such ${what}`, { code: 'resource_missing', param });
}

/** A 404 whose message says more than "No such …": how to find the right id. */
export function missing(message: string, param?: string): ApiError {
  return new ApiError(404, 'invalid_request_error', message, param === undefined ? { code: 'resource_missing' } : { code: 'resource_missing', param });
}

export function routeNotFound(method: string, path: string): ApiError {
  return new ApiError(404, 'invalid_request_error', `Unrecognized request URL (${method}: ${path})`, {
    code: 'resource_missing',
  });
}

export function invalid(param: string | undefined, message: string, code: ErrorCode<400> = 'parameter_invalid'): ApiError {
  return new ApiError(400, 'invalid_request_error', message, param === undefined ? { code } : { code, param });
}

/** A client error of the request as a whole, with the status that names it (a body parser's 4xx). */
export function badRequest(status: number, message: string): ApiError {
  return new ApiError(status, 'invalid_request_error', message);
}

export function conflict(code: ErrorCode<409>, message: string): ApiError {
  return new ApiError(409, 'invalid_request_error', message, { code });
}

/** A resource that existed and is over for good (an expired session, a deactivated link). */
export function gone(code: ErrorCode<410>, message: string): ApiError {
  return new ApiError(410, 'invalid_request_error', message, { code });
}

export function bodyTooLarge(message: string): ApiError {
  return new ApiError(413, 'invalid_request_error', message, { code: 'body_too_large' });
}

export function unsupportedMediaType(message: string): ApiError {
  return new ApiError(415, 'invalid_request_error', message, { code: 'unsupported_media_type' });
}

export function upgradeRequired(message: string): ApiError {
  return new ApiError(426, 'invalid_request_error', message, { code: 'upgrade_required' });
}

/**
 * A payment the card or the processor refused (Stripe's `card_error`): `code` says why
 * (`card_declined`, `processing_error`, …), `declineCode` the issuer's reason when it gave one.
 */
export function cardError(given: string, message: string, declineCode?: string): ApiError {
  const code = knownCode(402, given, 'card_declined');
  return new ApiError(402, 'card_error', message, declineCode === undefined ? { code } : { code, declineCode });
}

export function unauthenticated(message: string): ApiError {
  return new ApiError(401, 'authentication_error', message, { code: 'api_key_invalid' });
}

/** No usable key on a websocket upgrade, answered before any route: the message alone says what to send. */
export function keyRequired(message: string): ApiError {
  return new ApiError(401, 'authentication_error', message);
}

export function forbidden(code: ErrorCode<403>, message: string): ApiError {
  return new ApiError(403, 'permission_error', message, { code });
}

/** A restricted key used outside its permissions: the answer names the one it lacks. */
export function missingScope(scope: string): ApiError {
  return new ApiError(403, 'permission_error', `This key lacks the \`${scope}\` permission: use a key that has it, or a secret key`, {
    code: 'missing_scope',
    requiredScope: scope,
  });
}

export function rateLimited(retryAfterSeconds: number): ApiError {
  return new ApiError(429, 'rate_limit_error', 'Too many requests: slow down and retry after the Retry-After delay', {
    code: 'rate_limit',
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
}

/** A 429 of another limit than the request rate (agent connections): its message names the limit. */
export function limitReached(code: ErrorCode<429>, message: string): ApiError {
  return new ApiError(429, 'rate_limit_error', message, { code });
}

export function internal(): ApiError {
  return new ApiError(500, 'api_error', 'Something went wrong on our side; the request is safe to retry');
}

/** A refusal its operation's declaration does not list: a defect in pos, answered as one (500) and named. */
export function undeclaredRefusal(operationId: string, status: number, code: string | undefined): ApiError {
  return new ApiError(500, 'api_error', `${operationId} raised ${status} ${code ?? '(no code)'}, which its declaration in the route table does not list`);
}

/** The processor failed or refused the platform itself (502): nothing the caller sent is wrong. */
export function upstreamFailure(code: ErrorCode<502>, message: string): ApiError {
  return new ApiError(502, 'api_error', message, { code });
}

/** This server cannot serve the request now (503): shutting down, or missing configuration. */
export function unavailable(message: string, code?: ErrorCode<503>): ApiError {
  return new ApiError(503, 'api_error', message, code === undefined ? {} : { code });
}
