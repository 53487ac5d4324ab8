import type { TerminalReadersTable } from '../db/schema.js';
import type { ReaderSchema } from '../../shared/contract/terminal.js';
import type { z } from '../../shared/contract/zod.js';

/** A reader's action as the readers' listing shows it; the push to agents adds its own fields to it. */
export type ReaderActionView = NonNullable<z.infer<typeof ReaderSchema>['action']>;

type ActionRow = Pick<TerminalReadersTable, 'action_type' | 'action_status' | 'action_payment_intent_id' | 'action_failure_code' | 'action_failure_message'>;

/**
 * The reader's current or last action, null when it has had none since registration;
 * `transactionId` is our payment for its payment intent, when there is one.
 */
export function actionOf(row: ActionRow, transactionId: string | null): ReaderActionView | null {
  if (row.action_status === null) return null;
  return {
    type: row.action_type ?? 'process_payment_intent',
    status: row.action_status,
    payment_intent_id: row.action_payment_intent_id,
    transaction_id: transactionId,
    failure_code: row.action_failure_code,
    failure_message: row.action_failure_message,
  };
}

/** How a reader is named to its agents: in the presence answer and in reader-state pushes. */
export function readerIdentity(row: Pick<TerminalReadersTable, 'id' | 'processor_reader_id' | 'serial_number' | 'name'>): {
  id: string;
  processor_terminal_id: string;
  serial_number: string;
  name: string;
} {
  return { id: row.id, processor_terminal_id: row.processor_reader_id, serial_number: row.serial_number, name: row.name };
}
