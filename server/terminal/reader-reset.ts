import type { Logger } from 'pino';
import type { ReaderPayment, ReaderReset, ReaderResetter } from '../payments/transactions.js';
import { conflict, type ApiError } from '../errors.js';
import { processorErrorCode } from '../processor/errors.js';
import type { TerminalPort } from '../processor/port.js';


/** A card presented and being authorised: nothing on the reader may be canceled now. */
export function authorizing(): ApiError {
  return conflict('authorization_in_progress', 'The customer already presented a card and it is being authorised; wait for the result (poll the transaction)');
}

/**
 * The reader reset that comes before canceling a terminal payment (spec §4.2): true = the
 * screen was cleared (or showed another payment), false = the reader was unreachable, null = no
 * reader was ever attributed. A card mid-authorisation is a 409: nothing is canceled.
 */
export class ReaderResets implements ReaderResetter {
  constructor(
    private readonly processor: TerminalPort,
    private readonly logger: Logger,
  ) {}

  async resetFor(payment: ReaderPayment): Promise<ReaderReset> {
    if (!payment.reader_id) return { reset: null };
    try {
      const reader = await this.processor.retrieveReader({ mode: payment.mode }, payment.reader_id);
      const action = reader?.action ?? null;
      if (!action || action.status !== 'in_progress' || action.paymentIntentId !== payment.processor_payment_intent_id) return { reset: true };
      await this.processor.cancelReaderAction({ mode: payment.mode }, payment.reader_id);
      return { reset: true };
    } catch (err) {
      if (processorErrorCode(err) === 'terminal_reader_busy') throw authorizing();
      if (!(err instanceof Error)) throw err;
      this.logger.warn({ err, reader: payment.reader_id }, 'reader reset failed; canceling the payment anyway');
      return {
        reset: false,
        warning: `The reader ${payment.reader_id} could not be reset (${err.message}); the payment is canceled, a card presented now is declined and the screen clears by its own timeout`,
      };
    }
  }
}
