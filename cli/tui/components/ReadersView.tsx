import { Box, Text } from 'ink';
import { ago } from '../../format.js';
import type { CounterState } from '../state.js';
import type { Theme } from '../theme.js';
import { presence } from './ChargeView.js';
import { DevicesView } from './DevicesView.js';

const ACTIVITY: Record<string, string> = {
  idle: 'idle',
  waiting_for_card: 'waiting for card',
  processing: 'processing',
  approved: 'approved',
  declined: 'declined',
  canceled_on_reader: 'canceled on reader',
};

export function ReadersView({ state, theme, now }: { state: CounterState; theme: Theme; now?: number }) {
  if (state.readers.length === 0) {
    return (
      <Box flexDirection="column">
        <Text>No readers yet. Register one: pos readers register --name "Till 1" --code simulated-wpe</Text>
        <DevicesView devices={state.devices} theme={theme} {...(now !== undefined ? { now } : {})} />
      </Box>
    );
  }
  return (
    <Box flexDirection="column">
      <Text bold>{`${'  READER'.padEnd(22)}${'PRESENCE'.padEnd(12)}${'LAST SEEN'.padEnd(12)}${'ACTIVITY'.padEnd(20)}ID`}</Text>
      {state.readers.map((r, i) => (
        <Text key={r.id}>
          {`${i === state.selectedReader ? '›' : ' '} ${r.name.slice(0, 19).padEnd(20)}`}
          <Text color={presence(state, r, theme).color}>{(state.connection === 'lost' ? '? unknown' : presence(state, r, theme).text).padEnd(12)}</Text>
          {`${ago(r.last_seen_at, now).padEnd(12)}${(r.activity && state.connection !== 'lost' ? (ACTIVITY[r.activity] ?? r.activity) : '—').padEnd(20)}${r.processor_terminal_id.slice(0, 14)}`}
        </Text>
      ))}
      <DevicesView devices={state.devices} theme={theme} {...(now !== undefined ? { now } : {})} />
    </Box>
  );
}
