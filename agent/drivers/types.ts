import type { Logger } from 'pino';
import type { PosApi } from '../../shared/api/client.js';
import type { DriverKind, ReaderBook } from '../readers.js';
import type { AgentState } from '../state.js';
import type { SerialBinding } from '../ports.js';

export interface DriverContext {
  book: ReaderBook;
  api: PosApi;
  state: AgentState;
  logger: Logger;
  serial: SerialBinding;
}

export interface PaymentOnReader {
  transaction_id: string;
  amount: number;
  currency: string;
}

/**
 * One kind of reader the agent follows. A driver finds its readers, keeps their presence and
 * activity in the book, and is told when the agent acts on one of them.
 */
export interface ReaderDriver {
  readonly kind: DriverKind;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Whether this driver follows the reader with this key. */
  handles(key: string): boolean;
  /** The agent just acted on this reader (sent a payment, a tap, a cancel): follow it closely. */
  watch(key: string): void;
  /** A payment was sent to this reader through the processor (serial readers also show it). */
  paymentStarted(key: string, payment: PaymentOnReader): void;
}
