import Stripe from 'stripe';
import { ApiError } from '../errors.js';

/**
 * Maps what the processor raised to our error body. Card errors keep their code and decline code
 * (spec §7); failures of the processor itself are 502s that are safe to retry.
 */
export function fromProcessorError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof Stripe.errors.StripeCardError) {
    return new ApiError(402, 'card_error', err.message, {
      code: err.code ?? 'card_declined',
      ...(err.decline_code ? { declineCode: err.decline_code } : {}),
    });
  }
  if (err instanceof Stripe.errors.StripeRateLimitError || err instanceof Stripe.errors.StripeConnectionError || err instanceof Stripe.errors.StripeAPIError) {
    return new ApiError(502, 'api_error', 'The payment processor is unavailable; the request is safe to retry', { code: 'processor_unavailable' });
  }
  if (err instanceof Stripe.errors.StripeAuthenticationError || err instanceof Stripe.errors.StripePermissionError) {
    return new ApiError(502, 'api_error', 'The platform is misconfigured: the processor refused its credentials', { code: 'processor_misconfigured' });
  }
  if (err instanceof Stripe.errors.StripeInvalidRequestError) {
    return new ApiError(400, 'invalid_request_error', err.message, {
      code: err.code ?? 'processor_invalid_request',
      ...(err.param ? { param: err.param } : {}),
    });
  }
  throw err;
}

/**
 * What the processor (or the SDK, before sending) refused for good, as the answer to keep: the same
 * request would be refused again, so it is final and never retried. Undefined for failures that may
 * pass (network errors and timeouts, 5xx, 429, a 409 on a key in use at the processor) and for a
 * refused platform key (401/403, fixed by the operator): those are retried with backoff
 * (server/services/recovery-schedule.ts). Only for an error thrown by an SDK call: anything that is
 * not a Stripe error was thrown by the SDK itself before a byte went out (its form encoder refuses a
 * lone UTF-16 surrogate, for one), and sending the same request again fails the same way.
 */
export function permanentProcessorRefusal(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return undefined;
  if (err instanceof Stripe.errors.StripeCardError || err instanceof Stripe.errors.StripeInvalidRequestError) return fromProcessorError(err);
  if (err instanceof Stripe.errors.StripeIdempotencyError) {
    return new ApiError(400, 'invalid_request_error', `The payment processor refused the request: ${err.message}`, { code: 'processor_idempotency_error' });
  }
  if (err instanceof Stripe.errors.StripeError) {
    const status = err.statusCode;
    if (status === undefined || status < 400 || status >= 500 || [401, 403, 409, 429].includes(status)) return undefined;
    return new ApiError(400, 'invalid_request_error', err.message, { code: err.code ?? 'processor_invalid_request', ...(err.param ? { param: err.param } : {}) });
  }
  const message =
    err instanceof URIError
      ? 'The request could not be sent to the payment processor: a field holds text that cannot be encoded (such as a lone UTF-16 surrogate)'
      : 'The request could not be sent to the payment processor: its client refused it before sending';
  return new ApiError(400, 'invalid_request_error', message, { code: 'processor_request_unsendable' });
}

/** The processor's error code, when it is a Stripe error. */
export function processorErrorCode(err: unknown): string | undefined {
  return err instanceof Stripe.errors.StripeError ? err.code : undefined;
}

/** The processor's error classes the domain tells apart (with `instanceof`). */
export const ProcessorError = Stripe.errors.StripeError;
export const ProcessorCardError = Stripe.errors.StripeCardError;
export const ProcessorInvalidRequestError = Stripe.errors.StripeInvalidRequestError;
