import { Box, Text } from 'ink';
import type { CounterState, View } from '../state.js';
import type { Theme } from '../theme.js';

const TABS: { view: View; label: string }[] = [
  { view: 'charge', label: 'c Charge' },
  { view: 'readers', label: 'r Readers' },
  { view: 'transactions', label: 'h History' },
  { view: 'day', label: 'd Day' },
];

/** The agent sells cash without the server: in words, with what it still has to send. */
export function offlineLine(state: Pick<CounterState, 'cashOnly' | 'offlineSales'>): string | null {
  const { waiting, limit } = state.offlineSales;
  const queued = `${waiting} ${waiting === 1 ? 'sale' : 'sales'} waiting to sync`;
  if (limit) return limit;
  if (state.cashOnly) return `Offline: cash only · ${queued}`;
  return waiting > 0 ? `Syncing: ${queued}` : null;
}

export function Header({ state, theme, width = 80 }: { state: CounterState; theme: Theme; width?: number }) {
  const connection = state.cashOnly
    ? '⚠ OFFLINE: cash only'
    : state.connection === 'connected' ? `● connected (${state.via === 'agent' ? 'agent' : 'polling'})` : state.connection === 'lost' ? '⚠ CONNECTION LOST, retrying' : '… connecting';
  const offline = offlineLine(state);
  return (
    <Box flexDirection="column">
      <Box justifyContent="space-between">
        <Text bold>{state.merchantName ?? 'pos counter'}</Text>
        <Text color={state.connection === 'lost' ? theme.bad : state.connection === 'connected' ? theme.ok : theme.warn}>{connection}</Text>
      </Box>
      {state.mode === 'test' ? (
        <Text color={theme.banner} inverse={Boolean(theme.banner)}>
          {' TEST MODE: simulated cards, no real money moves '}
        </Text>
      ) : null}
      {offline ? <Text bold color={theme.warn}>{`  ${offline.slice(0, width - 4)}`}</Text> : null}
      {state.connection === 'lost' && state.connectionError && !state.cashOnly ? <Text color={theme.bad}>{`  ${state.connectionError.slice(0, width - 4)}`}</Text> : null}
      <Box>
        {TABS.map((t) => (
          <Text key={t.view} bold={t.view === state.view} color={t.view === state.view ? theme.accent : undefined}>
            {t.view === state.view ? `[${t.label}] ` : ` ${t.label}  `}
          </Text>
        ))}
      </Box>
      <Text>{'─'.repeat(width - 2)}</Text>
    </Box>
  );
}
