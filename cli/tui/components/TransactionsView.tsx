import { Box, Text } from 'ink';
import { cardOf, money } from '../../format.js';
import type { CounterState } from '../state.js';
import type { Theme } from '../theme.js';

/** The longest status, `partially_refunded`, is 18 characters. */
const STATUS_WIDTH = 18;

export function TransactionsView({ state, theme }: { state: CounterState; theme: Theme }) {
  if (state.transactions.length === 0) return <Text>No payments yet.</Text>;
  const confirm = state.confirmRefund ? state.transactions.find((t) => t.id === state.confirmRefund) : undefined;
  return (
    <Box flexDirection="column">
      <Text bold>{`  ${'TIME'.padEnd(9)}${'AMOUNT'.padEnd(12)}${'STATUS'.padEnd(STATUS_WIDTH)}${'CARD'.padEnd(14)}REFERENCE`}</Text>
      {state.transactions.map((t, i) => {
        const color = t.status === 'succeeded' ? theme.ok : t.status === 'failed' ? theme.bad : t.status === 'pending' ? theme.warn : undefined;
        return (
          <Text key={t.id}>
            {`${i === state.selectedTransaction ? '›' : ' '} ${new Date(t.created_at).toTimeString().slice(0, 8).padEnd(9)}${money(t.amount, t.currency).padEnd(12)}`}
            <Text color={color}>{t.status.padEnd(STATUS_WIDTH)}</Text>
            {`${cardOf(t).padEnd(14)}${t.reference.slice(0, 24)}`}
          </Text>
        );
      })}
      {confirm ? <Text bold color={theme.warn}>{`Refund ${money(confirm.amount - confirm.amount_refunded, confirm.currency)} of ${confirm.reference}? y to refund, any other key to keep.`}</Text> : null}
    </Box>
  );
}
