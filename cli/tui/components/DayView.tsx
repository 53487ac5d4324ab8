import { Box, Text } from 'ink';
import { money } from '../../format.js';
import { type Bucket, businessDayWords, shopLines, tenderLines, withDrawer } from '../../report.js';
import type { CounterState } from '../state.js';
import type { Theme } from '../theme.js';

function line(b: Bucket, currency: string): string {
  const m = (n: number) => money(n, currency);
  return `${b.name.slice(0, 18).padEnd(19)}${`${b.succeeded.count}`.padStart(4)} ${m(b.succeeded.amount).padStart(11)}${`${b.failed.count}`.padStart(5)}${`${b.canceled.count}`.padStart(5)}${`${b.refunded.count}`.padStart(4)} ${m(b.refunded.amount).padStart(9)}${m(b.tips).padStart(9)}${m(b.net).padStart(11)}`;
}

export function DayView({ state, theme = {} }: { state: CounterState; theme?: Theme }) {
  if (state.reportError) return <Text>{`No report: ${state.reportError}`}</Text>;
  const loaded = state.report;
  if (!loaded) return <Text>Loading today's close-out…</Text>;
  const { float, counted, entry } = state.drawer;
  const r = float || counted !== null ? withDrawer(loaded, float, counted) : loaded;
  const day = businessDayWords(r);
  return (
    <Box flexDirection="column">
      <Text bold>{`Close-out ${r.date} · fees ${money(r.total.fees, r.currency)} · pending ${r.total.pending.count}`}</Text>
      <Text dimColor={theme.dim}>{`${day[0]!.toUpperCase()}${day.slice(1)} · a sale paid in parts counts once`}</Text>
      <Text bold>{`${''.padEnd(19)}${'PAID'.padStart(4)} ${''.padStart(11)}${'FAIL'.padStart(5)}${'CANC'.padStart(5)}${'REFUNDED'.padStart(14)}${'TIPS'.padStart(9)}${'NET'.padStart(11)}`}</Text>
      <Text>{line(r.total, r.currency)}</Text>
      {r.locations.length ? <Text bold>By location</Text> : null}
      {r.locations.map((b) => (
        <Text key={`l-${b.name}`}>{line(b, r.currency)}</Text>
      ))}
      {r.readers.length ? <Text bold>By reader</Text> : null}
      {r.readers.map((b) => (
        <Text key={`r-${b.name}`}>{line(b, r.currency)}</Text>
      ))}
      {r.other_currency_count ? <Text>{`${r.other_currency_count} payment(s) in other currencies not included.`}</Text> : null}
      {tenderLines(r).map((text) => (
        <Text key={text}>{text}</Text>
      ))}
      {entry ? (
        <Text>
          {entry.step === 'float' ? 'Opening float  ' : 'Counted cash  '}
          <Text bold>{`${entry.text}_`}</Text>
        </Text>
      ) : null}
      {entry?.error ? <Text color={theme.bad}>{entry.error}</Text> : null}
      {shopLines(r).map((text) => (
        <Text key={text}>{text}</Text>
      ))}
    </Box>
  );
}
