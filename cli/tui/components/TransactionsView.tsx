import { Box, Text } from 'ink';
import type { ReactNode } from 'react';
import type { Transaction } from '../../../shared/api/types.js';
import { cancelWords, declineWords } from '../../../shared/declines.js';
import { cardOf, money } from '../../format.js';
import { historyRows, historySales, isCounterPayment, RECENT_LIMIT, type CounterState } from '../state.js';
import type { Theme } from '../theme.js';

/** The longest status, `partially_refunded`, is 18 characters. */
const STATUS_WIDTH = 18;
const METHOD_WIDTH = 9;

const FILTER_WORDS = { all: 'all payments', counter: 'counter payments', online: 'online payments' } as const;

/** Why a payment that did not go through did not, in the counter's words. */
export function outcomeWords(t: Transaction): string | null {
  if (t.status === 'failed') return declineWords(t);
  if (t.status === 'canceled') {
    const why = cancelWords(t.cancellation_reason);
    return why ? `${why[0]!.toUpperCase()}${why.slice(1)}` : 'Canceled, no reason given';
  }
  return null;
}

const PAID = new Set(['succeeded', 'partially_refunded', 'refunded']);

/** A line of the list: a payment's (selectable) or a split sale's own. */
interface Line {
  chosen: boolean;
  node: ReactNode;
}

/**
 * A sale paid in parts, in a word: open while a part is under way or its newest part did not pay
 * (a declined card after a cash part: something is still due), paid once its last part paid.
 */
function saleStatus(parts: Transaction[]): string {
  if (parts.some((p) => p.status === 'pending' || p.status === 'requires_capture')) return 'open';
  const paid = parts.some((p) => PAID.has(p.status));
  if (paid && !PAID.has(parts[0]!.status)) return 'open';
  if (paid) return parts.some((p) => p.amount_refunded > 0) ? 'refunds' : 'paid';
  return parts[0]!.status;
}

/** Its paid parts' tenders, oldest first: "cash + visa". */
function tenders(parts: Transaction[]): string {
  return [...parts]
    .reverse()
    .filter((p) => PAID.has(p.status))
    .map((p) => (p.payment_method_type === 'cash' ? 'cash' : (p.card_brand ?? 'card')))
    .join(' + ');
}

export function TransactionsView({ state, theme, width = 80 }: { state: CounterState; theme: Theme; width?: number }) {
  const h = state.history;
  const rows = historyRows(state);
  const where = `Page ${h.page} of ${h.lastPage}${h.totalCount !== null ? ` (${h.totalCount} payments)` : ''} · ${FILTER_WORDS[h.filter]}${h.loading ? ' · loading…' : ''}`;
  if (rows.length === 0) {
    return (
      <Box flexDirection="column">
        <Text>{h.loading ? `Loading ${FILTER_WORDS[h.filter]}…` : h.page === 1 ? `No ${h.filter === 'all' ? 'payments' : FILTER_WORDS[h.filter]} yet.` : 'No payments on this page.'}</Text>
        <Text dimColor={theme.dim}>{where}</Text>
      </Box>
    );
  }
  const confirm = state.confirmRefund ? rows.find((t) => t.id === state.confirmRefund) : undefined;
  const selected = rows[state.selectedTransaction];
  const detail = selected ? outcomeWords(selected) : null;
  // The reference takes what the fixed columns leave of the terminal's width.
  const refWidth = Math.max(12, width - 2 - 9 - 12 - STATUS_WIDTH - METHOD_WIDTH - 14 - 1);
  const row = (t: Transaction, nested: boolean): Line => {
    const color = t.status === 'succeeded' ? theme.ok : t.status === 'failed' ? theme.bad : t.status === 'pending' ? theme.warn : undefined;
    const time = nested ? '  └' : new Date(t.created_at).toTimeString().slice(0, 8);
    const chosen = rows.indexOf(t) === state.selectedTransaction;
    return {
      chosen,
      node: (
        <Text key={t.id}>
          {`${chosen ? '›' : ' '} ${time.padEnd(9)}${money(t.amount, t.currency).padEnd(12)}`}
          <Text color={color}>{t.status.padEnd(STATUS_WIDTH)}</Text>
          {`${(isCounterPayment(t) ? 'counter' : 'online').padEnd(METHOD_WIDTH)}${cardOf(t).padEnd(14)}${t.reference.slice(0, refWidth)}`}
        </Text>
      ),
    };
  };
  const lines = historySales(state).flatMap((sale): Line[] => {
    if (!sale.order) return [row(sale.parts[0]!, false)];
    // One sale paid in parts: a line for the sale under its order, its parts (selectable, to refund one) beneath it.
    const oldest = sale.parts[sale.parts.length - 1]!;
    const paid = sale.parts.filter((p) => PAID.has(p.status)).reduce((sum, p) => sum + (p.amount_captured || p.amount), 0);
    const status = `${saleStatus(sale.parts)}: ${tenders(sale.parts) || 'none paid'}`.slice(0, STATUS_WIDTH - 1);
    // The order takes the card and reference columns: a part's own row has its card.
    const head = `  ${new Date(oldest.created_at).toTimeString().slice(0, 8).padEnd(9)}${money(paid, oldest.currency).padEnd(12)}${status.padEnd(STATUS_WIDTH)}${`${sale.parts.length} parts`.padEnd(METHOD_WIDTH)}`;
    return [
      { chosen: false, node: <Text key={`sale-${sale.order}`} bold>{`${head}${sale.order.slice(0, refWidth + 14)}`}</Text> },
      ...sale.parts.map((t) => row(t, true)),
    ];
  });
  // Sale lines add to a page's rows: the list scrolls to keep the selection on an 80×24 screen.
  const chosenAt = Math.max(0, lines.findIndex((l) => l.chosen));
  const first = Math.max(0, Math.min(chosenAt - (RECENT_LIMIT - 1), lines.length - RECENT_LIMIT));
  const shown = lines.slice(first, first + RECENT_LIMIT);
  const more = [first > 0 ? `${first} above` : '', lines.length > first + RECENT_LIMIT ? `${lines.length - first - RECENT_LIMIT} below` : ''].filter(Boolean).join(', ');
  return (
    <Box flexDirection="column">
      <Text bold>{`  ${'TIME'.padEnd(9)}${'AMOUNT'.padEnd(12)}${'STATUS'.padEnd(STATUS_WIDTH)}${'METHOD'.padEnd(METHOD_WIDTH)}${'CARD'.padEnd(14)}REFERENCE`}</Text>
      {shown.map((l) => l.node)}
      <Text dimColor={theme.dim}>{more ? `${where} · ${more}` : where}</Text>
      {detail && !confirm ? <Text color={theme.warn}>{`${selected?.reference ?? ''}: ${detail}`}</Text> : null}
      {confirm ? <Text bold color={theme.warn}>{`Refund ${money(confirm.amount - confirm.amount_refunded, confirm.currency)} of ${confirm.reference}? y to refund, any other key to keep.`}</Text> : null}
    </Box>
  );
}
