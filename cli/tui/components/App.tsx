import { Box, Text, useApp, useInput, useStdout } from 'ink';
import { useEffect, useState } from 'react';
import type { PosApi } from '../../../shared/api/client.js';
import { useCounter } from '../hooks/useCounter.js';
import { fitHints, hintsFor } from '../keys.js';
import type { CounterSource } from '../source.js';
import { theme as makeTheme } from '../theme.js';
import { CashView } from './CashView.js';
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
  /** Shown on a screen of its own until a key is pressed (a first run's demo keys). */
  intro?: string[] | undefined;
  /** What quitting stops, when it stops anything: q then asks before quitting. */
  quitWarning?: string | undefined;
}

/** The narrowest layout the views are written for; a wider terminal gets wider columns. */
export const MIN_WIDTH = 80;

/** The terminal's width, following resizes. */
function useColumns(): number {
  const { stdout } = useStdout();
  const [columns, setColumns] = useState(stdout.columns || MIN_WIDTH);
  useEffect(() => {
    const onResize = () => setColumns(stdout.columns || MIN_WIDTH);
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return Math.max(MIN_WIDTH, columns);
}

export function App({ source, api, color, notice, intro, quitWarning }: AppProps) {
  const { exit } = useApp();
  const { state, press } = useCounter(source, api, { notice, intro, quitWarning, onQuit: exit });
  const theme = makeTheme(color);
  const width = useColumns();
  useInput(press);
  if (state.intro) {
    return (
      <Box flexDirection="column" width={width}>
        {state.intro.map((line, i) => (
          <Text key={i}>{line}</Text>
        ))}
        <Text> </Text>
        <Text bold>{fitHints(hintsFor(state), width)}</Text>
      </Box>
    );
  }
  const notices = state.confirmQuit ? `Quit? This stops ${state.quitWarning ?? 'the counter'}. y quits, any other key stays.` : (state.notice ?? ' ');
  return (
    <Box flexDirection="column" width={width}>
      <Header state={state} theme={theme} width={width} />
      <Box flexDirection="column" minHeight={14}>
        {state.cash ? <CashView state={state} theme={theme} /> : null}
        {state.view === 'charge' && !state.cash ? <ChargeView state={state} theme={theme} /> : null}
        {state.view === 'readers' && !state.cash ? <ReadersView state={state} theme={theme} /> : null}
        {state.view === 'transactions' && !state.cash ? <TransactionsView state={state} theme={theme} width={width} /> : null}
        {state.view === 'day' && !state.cash ? <DayView state={state} theme={theme} /> : null}
      </Box>
      <Text color={theme.warn}>{notices}</Text>
      <Text dimColor={theme.dim}>{fitHints(hintsFor(state), width)}</Text>
    </Box>
  );
}
