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

/** The processor's error code, when it is a Stripe error. */
export function processorErrorCode(err: unknown): string | undefined {
  return err instanceof Stripe.errors.StripeError ? err.code : undefined;
}

/** The processor's error classes the domain tells apart (with `instanceof`). */
export const ProcessorError = Stripe.errors.StripeError;
export const ProcessorCardError = Stripe.errors.StripeCardError;
export const ProcessorInvalidRequestError = Stripe.errors.StripeInvalidRequestError;
