import { Box, Text } from 'ink';
import type { DeviceState } from '../../../shared/agent-protocol.js';
import { ago } from '../../format.js';
import type { Theme } from '../theme.js';

const KIND: Record<DeviceState['kind'], string> = { receipt_printer: 'Receipt printer', customer_display: 'Customer display' };

/** What the printer's own status adds: paper, cover, drawer and receipts waiting. */
function detail(d: DeviceState): string {
  const parts: string[] = [];
  // The row already says which device: "Printer out of paper" reads "out of paper" there.
  if (d.last_error) parts.push(d.last_error.replace(/^Printer /, ''));
  else if (d.paper === 'near_end') parts.push('paper low');
  if (d.drawer_open) parts.push('drawer open');
  if (d.queued) parts.push(`${d.queued} queued`);
  return parts.join(' · ') || 'ready';
}

/** The till's devices beside the readers (docs/counter-hardware.md); nothing when no agent drives any. */
export function DevicesView({ devices, theme, now }: { devices: readonly DeviceState[]; theme: Theme; now?: number }) {
  if (devices.length === 0) return null;
  return (
    <Box flexDirection="column" marginTop={1}>
      <Text bold>{`${'  DEVICE'.padEnd(20)}${'PRESENCE'.padEnd(10)}${'LAST SEEN'.padEnd(12)}STATUS`}</Text>
      {devices.map((d) => (
        <Text key={d.id}>
          {`  ${KIND[d.kind].padEnd(18)}`}
          <Text color={d.status === 'online' ? theme.ok : theme.bad}>{(d.status === 'online' ? '● online' : '○ offline').padEnd(10)}</Text>
          {`${ago(d.last_seen_at, now).padEnd(12)}`}
          <Text color={d.last_error ? theme.warn : undefined}>{detail(d)}</Text>
        </Text>
      ))}
    </Box>
  );
}
