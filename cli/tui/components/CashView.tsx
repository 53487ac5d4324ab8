import { Box, Text } from 'ink';
import { money } from '../../format.js';
import { splitBalance, type CounterState } from '../state.js';
import type { Theme } from '../theme.js';

/** A cash sale: the cash handed over is typed, then the change due is what staff read off. */
export function CashView({ state, theme }: { state: CounterState; theme: Theme }) {
  const cash = state.cash;
  if (!cash) return null;
  const m = (n: number) => money(n, state.currency);
  if (cash.phase === 'done' && cash.result) {
    const t = cash.result.transaction;
    const off = cash.result.offline;
    const amount = t?.amount ?? off?.amount ?? cash.amount;
    return (
      <Box flexDirection="column">
        <Text bold color={theme.ok}>{`CASH SALE ${m(amount)} PAID`}</Text>
        <Text>{`Cash handed over  ${m(t ? (t.amount_tendered ?? t.amount) : (off?.amount_tendered ?? amount))}`}</Text>
        <Text bold>{`CHANGE DUE        ${m(t ? (t.change_due ?? 0) : (off?.change_due ?? 0))}`}</Text>
        {off ? <Text color={theme.warn}>{`Not yet synced: kept on this till as ${off.local_reference} (${off.waiting} waiting to sync).`}</Text> : null}
        <Text>{cash.result.drawer_opened ? 'Drawer opened.' : 'Drawer not opened.'}</Text>
        {cash.result.receipt === 'queued' ? <Text>Receipt printing.</Text> : null}
        {cash.result.receipt === 'ask' && cash.askReceipt ? <Text bold>Print receipt? y/n</Text> : null}
        {cash.result.receipt === 'not_printed' ? <Text>No receipt printed.</Text> : null}
        {cash.result.warning ? <Text color={theme.warn}>{cash.result.warning}</Text> : null}
        <Text dimColor={theme.dim}>{`${t?.reference ?? off?.local_reference ?? ''}${state.split ? `  sale ${state.split.order}` : ''}`}</Text>
        {state.split && splitBalance(state.split) > 0 ? <Text bold color={theme.warn}>{`STILL DUE ${m(splitBalance(state.split))}: Enter, then a card or more cash.`}</Text> : null}
      </Box>
    );
  }
  return (
    <Box flexDirection="column">
      <Text bold>{`CASH SALE  ${m(cash.amount)} due`}</Text>
      <Text>
        {'Cash handed over  '}
        <Text bold>{`${cash.tenderedText}_`}</Text>
        <Text dimColor={theme.dim}>{cash.tenderedText === '' ? `  Enter alone: exact cash (${m(cash.amount)})` : ''}</Text>
      </Text>
      <Text dimColor={theme.dim}>/ instead of Enter: less than due pays part of the sale, the rest on a card.</Text>
      {cash.phase === 'sending' ? <Text>Recording the sale…</Text> : null}
      {cash.error ? <Text color={theme.bad}>{cash.error}</Text> : null}
    </Box>
  );
}
