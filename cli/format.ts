import { formatAmount } from '../shared/money.js';
import type { Device, Reader, Transaction } from '../shared/api/types.js';

/** Human renderings shared by the CLI tables and the TUI: no Ink, no colours. */

export function money(minor: number, currency: string): string {
  return formatAmount(minor, currency);
}

/** "12s ago", "5m ago", "3h ago", "2d ago" (or "never"). */
export function ago(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return 'never';
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (seconds < 60) return `${seconds}s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)}h ago`;
  return `${Math.floor(seconds / 86_400)}d ago`;
}

export function cardOf(t: Pick<Transaction, 'card_brand' | 'card_last_four'>): string {
  if (!t.card_last_four) return '';
  return `${t.card_brand ?? 'card'} ••${t.card_last_four}`;
}

export function transactionRow(t: Transaction) {
  return {
    reference: t.reference,
    status: t.status,
    amount: money(t.amount, t.currency),
    tip: t.tip_amount ? money(t.tip_amount, t.currency) : '',
    refunded: t.amount_refunded ? money(t.amount_refunded, t.currency) : '',
    card: cardOf(t),
    method: t.payment_method_type,
    created_at: t.created_at.slice(0, 19).replace('T', ' '),
  };
}

export function readerRow(r: Reader, now?: number) {
  return { name: r.name, status: r.status, last_seen: ago(r.last_seen_at, now), reader_id: r.processor_terminal_id, id: r.id, model: r.model };
}

/** A receipt printer or customer display, as `pos readers list` shows it below the readers. */
export function deviceRow(d: Device, now?: number) {
  const p = d.printer;
  const yesNo = (open: boolean | null, word: string) => (open === null ? '' : open ? word : 'closed');
  return {
    device: d.kind === 'receipt_printer' ? 'printer' : 'display',
    agent: d.agent_name,
    status: d.status,
    last_seen: ago(d.last_seen_at, now),
    paper: p?.paper?.replace('_', ' ') ?? '',
    cover: p ? yesNo(p.cover_open, 'open') : '',
    drawer: p ? yesNo(p.drawer_open, 'open') : '',
    queued: p ? p.queued : '',
    last_error: d.last_error ?? '',
    target: d.target,
  };
}

/**
 * Staff-facing words for a 403 to the counter's restricted key: what it cannot do, and who can.
 * `scope` is the answer's `required_scope`; undefined for what only the secret key does.
 */
export function permissionWords(scope: string | undefined): string {
  if (scope === 'refunds:write') return "This counter's key can't refund: the shop owner refunds with the secret key.";
  if (scope) return `This counter's key can't do that (it lacks ${scope}): ask the shop owner.`;
  return "Only the shop's secret key can do that: ask the shop owner.";
}

/** Staff-facing words for the API's conflict codes (spec §7 and docs/terminal.md). */
export const CONFLICT_WORDS: Record<string, string> = {
  authorization_in_progress: 'Customer already tapped: wait for the result.',
  already_captured: 'Already paid: refund it instead.',
  reader_busy: 'The reader is busy with another payment: finish or cancel that one first.',
  reader_offline: 'The reader is offline: check its power and network, or take the payment by link.',
  already_refunded: 'Already fully refunded.',
  transaction_not_refundable: 'Only paid payments can be refunded.',
  transaction_not_capturable: 'Nothing to capture: the payment is not waiting for capture.',
  amount_too_large: 'Refund no more than what is left.',
  location_required: 'Create a location first (pos locations create).',
  livemode_not_allowed: 'Simulated taps work in test mode only.',
};
