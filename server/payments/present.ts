import { toIsoOrNull, toIsoTimestamp } from '../../shared/time.js';
import type { RefundsTable, TransactionStatus, TransactionsTable } from '../db/schema.js';
import type { FieldCipher } from '../db/encryption.js';
import type { Refund, Transaction } from '../../shared/contract/transactions.js';
import { parseTerminalOptions } from './terminal-options.js';

const BADGES: Record<TransactionStatus, string> = {
  pending: 'Pending',
  requires_capture: 'Uncaptured',
  succeeded: 'Succeeded',
  failed: 'Failed',
  canceled: 'Canceled',
  refunded: 'Refunded',
  partially_refunded: 'Partially refunded',
};

/** The wire shape of a transaction (spec §2.1); also the data of its events. Its receipt email is opened. */
/**
 * A payment's cancel reason as shown: a cancel asked for keeps its reason on the row before the
 * processor has canceled (the payments service's cancel), so it shows only once the payment is canceled.
 */
export function shownCancelReason(status: string, reason: string | null): string | null {
  return status === 'canceled' ? reason : null;
}

export function presentTransaction(row: TransactionsTable, cipher: FieldCipher): Transaction {
  return {
    id: row.id,
    object: 'transaction',
    reference: row.reference,
    type: row.type,
    status: row.status,
    status_badge: BADGES[row.status],
    amount: row.amount,
    amount_captured: row.amount_captured,
    amount_refunded: row.amount_refunded,
    currency: row.currency,
    payment_method_type: row.payment_method_type,
    capture_method: row.capture_method,
    description: row.description,
    receipt_email: cipher.open('transactions.receipt_email', row.id, row.receipt_email),
    source: row.source,
    customer_id: row.customer_id,
    is_test: row.mode === 'test',
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    payment_intent_id: row.processor_payment_intent_id,
    card_brand: row.card_brand,
    card_last_four: row.card_last_four,
    platform_fee_cents: row.platform_fee_cents,
    tip_amount: row.tip_amount,
    amount_tendered: row.amount_tendered,
    change_due: row.change_due,
    failure_code: row.failure_code,
    decline_code: row.decline_code,
    failure_message: row.failure_message,
    cancellation_reason: shownCancelReason(row.status, row.cancellation_reason),
    receipt_url: row.receipt_url,
    terminal_id: row.terminal_id,
    reader_id: row.reader_id,
    location_id: row.location_id,
    created_by_key_id: row.created_by_key_id,
    offline_reference: row.offline_reference,
    checkout_session_id: row.checkout_session_id,
    payment_link_id: row.link_id,
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
    captured_at: toIsoOrNull(row.captured_at),
    failed_at: toIsoOrNull(row.failed_at),
    canceled_at: toIsoOrNull(row.canceled_at),
    refunded_at: toIsoOrNull(row.refunded_at),
    disputed_at: toIsoOrNull(row.disputed_at),
    dispute_id: row.dispute_id,
    dispute_status: row.dispute_status,
    cart: cartOf(row.terminal_options),
  };
}

function cartOf(stored: string | null): Transaction['cart'] {
  const options = parseTerminalOptions(stored);
  return options?.line_items ? { line_items: options.line_items, tax: options.tax ?? null } : null;
}

export function presentRefund(row: RefundsTable): Refund {
  return {
    id: row.id,
    object: 'refund',
    reference: row.reference,
    transaction_id: row.transaction_id,
    amount: row.amount,
    currency: row.currency,
    reason: row.reason,
    status: row.status,
    failure_reason: row.failure_reason,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    is_test: row.mode === 'test',
    created_at: toIsoTimestamp(row.created_at),
    updated_at: toIsoTimestamp(row.updated_at),
  };
}
