import { qrText } from '../qr.js';
import { Box, Text } from 'ink';
import { ago, cardOf, money } from '../../format.js';
import { parseChargeAmount } from '../../amount.js';
import { inFlight, selectedReader, splitBalance, type CounterReader, type CounterState } from '../state.js';
import type { Theme } from '../theme.js';
import { CartView } from './CartView.js';

/** A reader's presence as far as the counter knows it: nothing is known while the connection is lost. */
export function presence(state: CounterState, r: CounterReader, theme: Theme): { text: string; color: string | undefined } {
  if (state.connection === 'lost') return { text: '? unknown (no connection)', color: theme.warn };
  return r.status === 'online' ? { text: '● online', color: theme.ok } : { text: '○ offline', color: theme.bad };
}

/** The last amount as the prompt shows it; it was formatted from minor units, so it parses back. */
function parseLast(text: string, currency: string): number {
  try {
    return parseChargeAmount(text, currency);
  } catch {
    return 0;
  }
}

const ACTIVITY_WORDS: Record<string, string> = { waiting_for_card: 'waiting for a card', processing: 'reading a card', canceled_on_reader: 'canceled on the reader' };

/** A sale being paid in parts: its total, the parts paid and, in bold, what is still due. */
function SplitLines({ state, theme }: { state: CounterState; theme: Theme }) {
  const split = state.split;
  if (!split) return null;
  const m = (n: number) => money(n, state.currency);
  const parts = split.parts.map((p) => `${m(p.amount)} ${p.method}`).join(' + ');
  const due = splitBalance(split);
  return (
    <Box flexDirection="column">
      <Text>{`Sale ${split.order}  ${m(split.total)}${parts ? `  paid ${parts}` : ''}`}</Text>
      <Text bold color={due > 0 ? theme.warn : theme.ok}>{due > 0 ? `STILL DUE ${m(due)}` : 'PAID IN FULL'}</Text>
    </Box>
  );
}

export function ChargeView({ state, theme }: { state: CounterState; theme: Theme }) {
  const c = state.charge;
  const amount = c.amount !== null ? money(c.amount, state.currency) : 'amount being read…';
  const lost = state.connection === 'lost' ? <Text color={theme.bad}>Connection lost: this screen shows the payment as last known, and catches up when it is back.</Text> : null;
  switch (c.phase) {
    case 'entry': {
      const reader = selectedReader(state);
      const p = reader ? presence(state, reader, theme) : null;
      const due = state.split ? splitBalance(state.split) : null;
      const shortcut = due !== null ? (c.amountText === '' ? `  Enter alone: ${money(due, state.currency)} on card` : '') : c.amountText === '' && state.lastAmount ? `  Enter alone asks to charge ${state.lastAmount}` : '';
      const hasCart = c.cart.lines.length > 0 || c.cart.draft !== null;
      return (
        <Box flexDirection="column">
          <SplitLines state={state} theme={theme} />
          {hasCart ? (
            <CartView cart={c.cart} currency={state.currency} theme={theme} />
          ) : (
            <Text>
              {'Amount  '}
              <Text bold>{`${c.amountText}_`}</Text>
              <Text dimColor={theme.dim}>{`  ${state.currency.toUpperCase()}${shortcut}`}</Text>
            </Text>
          )}
          <Text>
            {'Reader  '}
            {reader && p ? (
              <>
                <Text bold>{`‹ ${reader.name} ›`}</Text>
                <Text color={p.color}>{`  ${p.text}`}</Text>
                {state.readers.length > 1 ? <Text dimColor={theme.dim}>{`  (${state.selectedReader + 1} of ${state.readers.length}, ←→)`}</Text> : null}
              </>
            ) : (
              <Text color={theme.warn}>none registered</Text>
            )}
          </Text>
          {reader && inFlight(reader) && c.errorCause !== 'reader_busy' ? (
            <Text color={theme.warn}>{`${reader.name} has a payment${` of ${money(reader.payment.amount, reader.payment.currency)}`} ${ACTIVITY_WORDS[reader.activity ?? ''] ?? 'under way'}: x cancels it.`}</Text>
          ) : null}
          {c.error ? <Text color={theme.bad}>{c.error}</Text> : null}
          {c.confirmRepeat && state.lastAmount ? <Text bold>{`Charge ${money(parseLast(state.lastAmount, state.currency), state.currency)} again? y/n`}</Text> : <Text> </Text>}
          <Text>
            {state.split
              ? 'Type a part or not: Enter puts it on a card, $ takes it in cash.'
              : c.cart.draft
                ? 'Press Enter after each part of the line.'
                : hasCart
                  ? 'Press Enter to charge the cart.'
                  : 'Press Enter to charge.'}
          </Text>
        </Box>
      );
    }
    case 'starting':
      return <Text>{`Sending ${amount} to ${c.readerName ?? 'the reader'}…`}</Text>;
    case 'waiting':
      return (
        <Box flexDirection="column">
          <Text bold>{`WAITING FOR CARD on ${c.readerName ?? 'the reader'}: ${amount}`}</Text>
          {c.adopted ? <Text>This payment was already on the reader when the counter started.</Text> : null}
          <Text>{c.canceling ? 'Canceling…' : c.tapSent ? 'Simulated tap sent: waiting for the reader to read it.' : 'Ask the customer to tap, insert or swipe.'}</Text>
          {lost}
        </Box>
      );
    case 'processing':
      return (
        <Box flexDirection="column">
          <Text bold>{`PROCESSING ${amount} on ${c.readerName ?? 'the reader'}…`}</Text>
          <Text>Card read: waiting for the bank.</Text>
          {lost}
        </Box>
      );
    case 'canceled_on_reader':
      return (
        <Box flexDirection="column">
          <Text bold color={theme.warn}>{`CUSTOMER CANCELED ON THE READER: ${amount}`}</Text>
          <Text>The customer pressed cancel. The payment is still open:</Text>
          <Text>press a to send it to the reader again, or x to cancel it.</Text>
          {lost}
        </Box>
      );
    case 'approved': {
      const t = c.result;
      const printer = state.devices.find((d) => d.kind === 'receipt_printer');
      const receiptTrouble = printer && (printer.status === 'offline' || printer.last_error) ? (printer.last_error ?? 'Printer offline: check the cable') : null;
      return (
        <Box flexDirection="column">
          <Text bold color={theme.ok}>{`✔ APPROVED  ${t ? money(t.amount, t.currency) : amount}`}</Text>
          {t ? <Text>{`${cardOf(t) || 'card'}${t.tip_amount ? ` · tip ${money(t.tip_amount, t.currency)}` : ' · no tip'} · ${t.reference}`}</Text> : null}
          {t?.receipt_url ? <Text>{`Receipt: ${t.receipt_url}`}</Text> : null}
          {c.receiptPrompt ? <Text bold>Print receipt? y/n</Text> : null}
          <SplitLines state={state} theme={theme} />
          {receiptTrouble ? <Text color={theme.bad}>{`Receipt not printed: ${receiptTrouble}.`}</Text> : null}
          {receiptTrouble ? <Text>It prints when the printer is back; R prints it again.</Text> : null}
        </Box>
      );
    }
    case 'declined':
      return (
        <Box flexDirection="column">
          <Text bold color={theme.bad}>{`✘ DECLINED  ${amount}`}</Text>
          <Text>{`${c.reason ?? 'Declined: ask for another card'}.`}</Text>
          {state.split ? <Text>{`The sale stays open with its paid parts kept: Enter, then another card or $ for cash.`}</Text> : null}
          <SplitLines state={state} theme={theme} />
          {c.transactionId ? <Text>Press a to send it to the reader again, or Enter for a new sale.</Text> : null}
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
