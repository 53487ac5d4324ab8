import { ApiError, cardError, invalid, knownCode, upstreamFailure } from '../errors.js';

/** What kind of refusal or failure a processor call ended in. */
export type ProcessorFailureKind =
  /** The card was declined (402). */
  | 'card'
  /** The processor refused the request as invalid (400/404). */
  | 'invalid_request'
  /** The idempotency key was reused with other parameters. */
  | 'idempotency'
  /** Throttled (429). */
  | 'rate_limit'
  /** The network failed or timed out: the request may or may not have arrived. */
  | 'connection'
  /** The processor failed (5xx). */
  | 'api'
  /** The platform's key was refused (401/403). */
  | 'credentials'
  /** The client refused to send the request (a field it cannot encode): the same request fails again. */
  | 'unsendable'
  /** Any other answer from the processor, told apart by its status. */
  | 'other';

export interface ProcessorFailureDetails {
  status?: number;
  code?: string;
  declineCode?: string;
  param?: string;
  /** The PaymentIntent a card error belongs to. */
  paymentIntent?: string;
  requestId?: string;
}

/**
 * The one error a `PaymentProcessor` throws. Implementations translate their client's errors into
 * it, so the domain tells failures apart without knowing the processor's SDK.
 */
export class ProcessorFailure extends Error {
  readonly status: number | undefined;
  readonly code: string | undefined;
  readonly declineCode: string | undefined;
  readonly param: string | undefined;
  readonly paymentIntent: string | undefined;
  readonly requestId: string | undefined;

  constructor(
    readonly kind: ProcessorFailureKind,
    message: string,
    details: ProcessorFailureDetails = {},
  ) {
    super(message);
    this.name = 'ProcessorFailure';
    this.status = details.status;
    this.code = details.code;
    this.declineCode = details.declineCode;
    this.param = details.param;
    this.paymentIntent = details.paymentIntent;
    this.requestId = details.requestId;
  }
}

/**
 * Maps what a processor call raised to our error body. Card errors keep their code and decline code
 * (spec §7); failures of the processor itself are 502s that are safe to retry. Anything that is not
 * a processor failure is rethrown.
 */
export function fromProcessorError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (!(err instanceof ProcessorFailure)) throw err;
  switch (err.kind) {
    case 'card':
      return cardError(err.code ?? 'card_declined', err.message, err.declineCode || undefined);
    case 'rate_limit':
    case 'connection':
    case 'api':
      return unavailable();
    case 'credentials':
      return upstreamFailure('processor_misconfigured', 'The platform is misconfigured: the processor refused its credentials');
    case 'invalid_request':
      return invalid(err.param || undefined, err.message, knownCode(400, err.code, 'processor_invalid_request'));
    default:
      throw err;
  }
}

/**
 * What the processor (or its client, before sending) refused for good, as the answer to keep: the
 * same request would be refused again, so it is final and never retried. Undefined for failures that
 * may pass (network errors and timeouts, 5xx, 429, a 409 on a key in use at the processor) and for a
 * refused platform key (401/403, fixed by the operator): those are retried with backoff
 * (server/idempotency/recovery-schedule.ts).
 */
export function permanentProcessorRefusal(err: unknown): ApiError | undefined {
  if (!(err instanceof ProcessorFailure)) return undefined;
  switch (err.kind) {
    case 'card':
    case 'invalid_request':
      return fromProcessorError(err);
    case 'idempotency':
      return invalid(undefined, `The payment processor refused the request: ${err.message}`, 'processor_idempotency_error');
    case 'unsendable':
      return invalid(undefined, err.message, 'processor_request_unsendable');
    case 'other': {
      const status = err.status;
      if (status === undefined || status < 400 || status >= 500 || [401, 403, 409, 429].includes(status)) return undefined;
      return invalid(err.param || undefined, err.message, knownCode(400, err.code, 'processor_invalid_request'));
    }
    default:
      return undefined;
  }
}

/** The processor's error code, when the error is a processor failure. */
export function processorErrorCode(err: unknown): string | undefined {
  return err instanceof ProcessorFailure ? err.code : undefined;
}

/**
 * The answer for a processor failure that reached the edge unhandled: its mapped error where it has
 * one, a retryable 502 otherwise, never a 500.
 */
export function answerForFailure(err: ProcessorFailure): ApiError {
  return permanentProcessorRefusal(err) ?? (['rate_limit', 'connection', 'api', 'credentials'].includes(err.kind) ? fromProcessorError(err) : unavailable());
}

function unavailable(): ApiError {
  return upstreamFailure('processor_unavailable', 'The payment processor is unavailable; the request is safe to retry');
}

/**
 * Thrown by a handler that cannot apply an event yet because what it is about is still being made
 * (a create waiting on the processor's answer): the event is refused with a 503, and the processor
 * delivers it again (Stripe and the simulator retry with backoff), by when it applies.
 */
export class EventNotYetApplicable extends Error {
  override readonly name = 'EventNotYetApplicable';
}
