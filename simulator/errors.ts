/**
 * The simulator's one error type. Its fields are Stripe's wire fields, so the `stripe` package turns
 * each answer into the same `StripeError` subclass it would raise against Stripe (the SDK picks the
 * class from the HTTP status: 400/404 invalid request, 401 authentication, 402 card, 403 permission,
 * 429 rate limit).
 */
export type StripeErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'card_error'
  | 'idempotency_error'
  | 'rate_limit_error'
  | 'api_error';

export interface StripeErrorBody {
  type: StripeErrorType;
  message: string;
  code?: string;
  decline_code?: string;
  param?: string;
  doc_url?: string;
  charge?: string;
  payment_intent?: unknown;
  payment_method?: unknown;
  request_log_url?: string;
}

export interface StripeErrorOptions {
  code?: string;
  declineCode?: string;
  param?: string;
  /** Extra wire fields Stripe attaches to card errors (the intent, the failed charge id, …). */
  extra?: Pick<StripeErrorBody, 'charge' | 'payment_intent' | 'payment_method'>;
}

export class SimError extends Error {
  override readonly name = 'SimError';
  readonly status: number;
  readonly type: StripeErrorType;
  readonly code: string | undefined;
  readonly declineCode: string | undefined;
  readonly param: string | undefined;
  readonly extra: StripeErrorOptions['extra'];

  constructor(status: number, type: StripeErrorType, message: string, options: StripeErrorOptions = {}) {
    super(message);
    this.status = status;
    this.type = type;
    this.code = options.code;
    this.declineCode = options.declineCode;
    this.param = options.param;
    this.extra = options.extra;
  }

  toBody(): { error: StripeErrorBody } {
    const error: StripeErrorBody = { type: this.type, message: this.message };
    if (this.code !== undefined) {
      error.code = this.code;
      error.doc_url = docUrl(this.code);
    }
    if (this.declineCode !== undefined) error.decline_code = this.declineCode;
    if (this.param !== undefined) error.param = this.param;
    if (this.extra) Object.assign(error, this.extra);
    return { error };
  }
}

export function docUrl(code: string): string {
  return `https://stripe.com/docs/error-codes/${code.replace(/_/g, '-')}`;
}

export function invalidRequest(message: string, param?: string, code?: string): SimError {
  const options: StripeErrorOptions = {};
  if (param !== undefined) options.param = param;
  if (code !== undefined) options.code = code;
  return new SimError(400, 'invalid_request_error', message, options);
}

export function missingParam(param: string): SimError {
  return invalidRequest(`Missing required param: ${param}.`, param, 'parameter_missing');
}

/**
 * Stripe's 404 for an id that does not exist in the caller's scope. When the id exists in the other
 * mode Stripe says so, which is the most common mistake with test and live keys.
 */
export function resourceMissing(
  what: string,
  id: string,
  param: string,
  otherMode?: { livemode: boolean } | undefined,
): SimError {
  let message = `No such ${what}: '${id}'`;
  if (otherMode) {
    const [exists, used] = otherMode.livemode ? ['live', 'test'] : ['test', 'live'];
    message += `; a similar object exists in ${exists} mode, but a ${used} mode key was used to make this request.`;
  }
  return new SimError(404, 'invalid_request_error', message, { code: 'resource_missing', param });
}

export function unexpectedState(message: string, extra?: StripeErrorOptions['extra']): SimError {
  const options: StripeErrorOptions = { code: 'payment_intent_unexpected_state' };
  if (extra) options.extra = extra;
  return new SimError(400, 'invalid_request_error', message, options);
}

export function authentication(message: string): SimError {
  return new SimError(401, 'authentication_error', message);
}

export function idempotencyMismatch(key: string): SimError {
  return new SimError(
    400,
    'idempotency_error',
    `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
  );
}
