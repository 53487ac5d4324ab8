import { qrText } from '../qr.js';
import { Box, Text } from 'ink';
import { ago, cardOf, money } from '../../format.js';
import { selectedReader, type CounterState } from '../state.js';
import type { Theme } from '../theme.js';

export function ChargeView({ state, theme }: { state: CounterState; theme: Theme }) {
  const c = state.charge;
  const amount = c.amount !== null ? money(c.amount, state.currency) : '';
  switch (c.phase) {
    case 'entry': {
      const reader = selectedReader(state);
      return (
        <Box flexDirection="column">
          <Text>
            {'Amount  '}
            <Text bold>{`${c.amountText}_`}</Text>
            <Text dimColor={theme.dim}>{`  ${state.currency.toUpperCase()} (47.50, or 4750c in cents)`}</Text>
          </Text>
          <Text>
            {'Reader  '}
            {reader ? (
              <>
                <Text bold>{`‹ ${reader.name} ›`}</Text>
                <Text color={reader.status === 'online' ? theme.ok : theme.bad}>{`  ${reader.status === 'online' ? '● online' : '○ offline'}`}</Text>
                {state.readers.length > 1 ? <Text dimColor={theme.dim}>{`  (${state.selectedReader + 1} of ${state.readers.length}, ←→)`}</Text> : null}
              </>
            ) : (
              <Text color={theme.warn}>none registered</Text>
            )}
          </Text>
          {c.error ? <Text color={theme.bad}>{c.error}</Text> : null}
          <Text> </Text>
          <Text>Press Enter to charge.</Text>
        </Box>
      );
    }
    case 'starting':
      return <Text>{`Sending ${amount} to ${c.readerName ?? 'the reader'}…`}</Text>;
    case 'waiting':
      return (
        <Box flexDirection="column">
          <Text bold>{`WAITING FOR CARD on ${c.readerName ?? 'the reader'}: ${amount}`}</Text>
          <Text>{c.canceling ? 'Canceling…' : 'Ask the customer to tap, insert or swipe.'}</Text>
        </Box>
      );
    case 'processing':
      return (
        <Box flexDirection="column">
          <Text bold>{`PROCESSING ${amount} on ${c.readerName ?? 'the reader'}…`}</Text>
          <Text>Card read: waiting for the bank.</Text>
        </Box>
      );
    case 'canceled_on_reader':
      return (
        <Box flexDirection="column">
          <Text bold color={theme.warn}>{`CANCELED ON THE READER: ${amount}`}</Text>
          <Text>The customer pressed cancel. The payment is still open: press x to cancel it.</Text>
        </Box>
      );
    case 'approved': {
      const t = c.result;
      return (
        <Box flexDirection="column">
          <Text bold color={theme.ok}>{`✔ APPROVED  ${t ? money(t.amount, t.currency) : amount}`}</Text>
          {t ? <Text>{`${cardOf(t) || 'card'}${t.tip_amount ? ` · tip ${money(t.tip_amount, t.currency)}` : ' · no tip'} · ${t.reference}`}</Text> : null}
          {t?.receipt_url ? <Text>{`Receipt: ${t.receipt_url}`}</Text> : null}
        </Box>
      );
    }
    case 'declined':
      return (
        <Box flexDirection="column">
          <Text bold color={theme.bad}>{`✘ DECLINED  ${amount}`}</Text>
          <Text>{`${c.reason ?? 'Declined'}. Ask for another card, then charge again.`}</Text>
        </Box>
      );
    case 'canceled':
      return (
        <Box flexDirection="column">
          <Text bold color={theme.warn}>{`✘ CANCELED  ${amount}`}</Text>
          <Text>{`Nothing was charged${c.reason ? ` (${c.reason})` : ''}.`}</Text>
        </Box>
      );
    case 'offline': {
      const reader = state.readers.find((r) => r.name === c.readerName);
      return (
        <Box flexDirection="column">
          <Text bold color={theme.bad}>{`${c.readerName ?? 'The reader'} is offline${reader ? ` (last seen ${ago(reader.last_seen_at)})` : ''}.`}</Text>
          <Text>{`Press l to take ${amount} by payment link instead: the customer pays on their phone.`}</Text>
        </Box>
      );
    }
    case 'link':
      return (
        <Box flexDirection="column">
          <Text>{`Payment link for ${amount} (${c.link?.reference ?? ''}): the customer scans it and pays on their phone`}</Text>
          {c.link?.url ? <Text>{qrText(c.link.url)}</Text> : null}
          <Text bold>{c.link?.url ?? ''}</Text>
        </Box>
      );
  }
}
