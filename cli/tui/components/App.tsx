import { Box, Text, useApp, useInput } from 'ink';
import type { PosApi } from '../../../shared/api/client.js';
import { useCounter } from '../hooks/useCounter.js';
import { hintsFor } from '../keys.js';
import type { CounterSource } from '../source.js';
import { theme as makeTheme } from '../theme.js';
import { ChargeView } from './ChargeView.js';
import { DayView } from './DayView.js';
import { Header } from './Header.js';
import { ReadersView } from './ReadersView.js';
import { TransactionsView } from './TransactionsView.js';

export interface AppProps {
  source: CounterSource;
  api: PosApi;
  color: boolean;
  notice?: string | undefined;
}

export function App({ source, api, color, notice }: AppProps) {
  const { exit } = useApp();
  const { state, press } = useCounter(source, api, { notice, onQuit: exit });
  const theme = makeTheme(color);
  useInput(press);
  return (
    <Box flexDirection="column" width={80}>
      <Header state={state} theme={theme} />
      <Box flexDirection="column" minHeight={14}>
        {state.view === 'charge' ? <ChargeView state={state} theme={theme} /> : null}
        {state.view === 'readers' ? <ReadersView state={state} theme={theme} /> : null}
        {state.view === 'transactions' ? <TransactionsView state={state} theme={theme} /> : null}
        {state.view === 'day' ? <DayView state={state} /> : null}
      </Box>
      <Text color={theme.warn}>{state.notice ?? ' '}</Text>
      <Text dimColor={theme.dim}>{hintsFor(state)}</Text>
    </Box>
  );
}
