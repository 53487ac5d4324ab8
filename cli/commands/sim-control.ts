import type { CliContext } from '../context.js';
import type { Reader } from '../../shared/api/types.js';
import { CliError, usageError } from '../errors.js';

/**
 * The simulator's control API (`/_sim`), where the customer at the reader is played: its tip
 * screen and cancel button have no counterpart in Stripe's API, so these commands need the
 * simulator.
 */
export async function simulator(ctx: CliContext, path: string, init: { method: 'GET' | 'POST'; body?: unknown } = { method: 'GET' }): Promise<unknown> {
  const { processor } = (await ctx.api.merchant()).data;
  if (processor.name !== 'stripe-simulator' || !processor.api_base) {
    throw usageError("the reader's screen is the simulator's: this server runs on Stripe (use `pos simulate tap --tip AMOUNT` there)");
  }
  const res = await fetch(`${processor.api_base.replace(/\/+$/, '')}/_sim${path}`, {
    method: init.method,
    ...(init.body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(init.body) } : {}),
  });
  const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
  if (!res.ok) throw new CliError(`the simulated reader refused: ${body.error?.message ?? `HTTP ${res.status}`}`);
  return body;
}

export interface Screen {
  screen: string;
  lines: string[];
}

export async function chooseTipOnScreen(ctx: CliContext, reader: Reader, option: number): Promise<void> {
  await simulator(ctx, `/readers/${encodeURIComponent(reader.processor_terminal_id)}/tip`, { method: 'POST', body: { option } });
}

