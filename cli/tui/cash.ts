import type { DeviceState } from '../../shared/agent-protocol.js';
import type { Transaction } from '../../shared/api/types.js';

/**
 * The counter's cash sale and the till's devices, pure like state.ts: a sale's amount is taken
 * from the charge screen, staff type what the customer handed over (nothing typed: exact cash),
 * and the answer shows the change due, whether the drawer opened and whether the receipt is queued.
 */

export interface CashSaleResult {
  /** Null for a sale the agent keeps offline until the server is back (then `offline` says what it took). */
  transaction: Transaction | null;
  offline?: { local_reference: string; amount: number; amount_tendered: number; change_due: number; waiting: number } | undefined;
  drawer_opened: boolean;
  /** `ask`: the location's receipts are asked for; the counter asks staff before printing. */
  receipt: 'queued' | 'not_printed' | 'ask';
  warning?: string | undefined;
}

export interface CashState {
  phase: 'tendered' | 'sending' | 'done';
  /** Minor units due. */
  amount: number;
  tenderedText: string;
  error: string | null;
  result: CashSaleResult | null;
  /** "Print receipt? y/n" on the done screen, until answered. */
  askReceipt: boolean;
}

export type CashAction =
  | { type: 'cash_start'; amount: number }
  | { type: 'cash_input'; text: string }
  | { type: 'cash_backspace' }
  | { type: 'cash_sending' }
  | { type: 'cash_done'; result: CashSaleResult }
  | { type: 'cash_error'; message: string }
  | { type: 'cash_close' }
  | { type: 'devices'; devices: DeviceState[] }
  | { type: 'device'; device: DeviceState };

export function reduceCash(cash: CashState | null, action: CashAction): CashState | null {
  switch (action.type) {
    case 'cash_start':
      return { phase: 'tendered', amount: action.amount, tenderedText: '', error: null, result: null, askReceipt: false };
    case 'cash_input':
      if (cash?.phase !== 'tendered') return cash;
      return { ...cash, tenderedText: (cash.tenderedText + action.text).replace(/[^0-9.,]/g, '').slice(0, 12), error: null };
    case 'cash_backspace':
      if (cash?.phase !== 'tendered') return cash;
      return { ...cash, tenderedText: cash.tenderedText.slice(0, -1), error: null };
    case 'cash_sending':
      return cash ? { ...cash, phase: 'sending', error: null } : cash;
    case 'cash_done':
      return cash ? { ...cash, phase: 'done', result: action.result, askReceipt: action.result.receipt === 'ask' } : cash;
    case 'cash_error':
      return cash ? { ...cash, phase: 'tendered', error: action.message } : cash;
    case 'cash_close':
      return null;
    default:
      return cash;
  }
}

export function reduceDevices(devices: DeviceState[], action: CashAction): DeviceState[] {
  if (action.type === 'devices') return action.devices;
  if (action.type === 'device') {
    const known = devices.some((d) => d.id === action.device.id);
    return known ? devices.map((d) => (d.id === action.device.id ? action.device : d)) : [...devices, action.device];
  }
  return devices;
}

export const CASH_ACTIONS = new Set<string>(['cash_start', 'cash_input', 'cash_backspace', 'cash_sending', 'cash_done', 'cash_error', 'cash_close', 'devices', 'device']);

export function isCashAction(action: { type: string }): action is CashAction {
  return CASH_ACTIONS.has(action.type);
}
