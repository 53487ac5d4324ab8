import type { CliContext } from '../context.js';
import { resolveReader } from './payments-action.js';
import { type Screen, simulator } from './sim-control.js';

export async function simulateCancel([readerName]: [string], _options: object, ctx: CliContext): Promise<void> {
  const reader = await resolveReader(ctx, readerName);
  const result = await simulator(ctx, `/readers/${encodeURIComponent(reader.processor_terminal_id)}/customer_cancel`, { method: 'POST' });
  if (ctx.out.json) ctx.out.printJson({ data: result });
  else ctx.out.line(`The customer pressed cancel on ${reader.name}`);
}

export async function simulateScreen([readerName]: [string], _options: object, ctx: CliContext): Promise<void> {
  const reader = await resolveReader(ctx, readerName);
  const screen = (await simulator(ctx, `/readers/${encodeURIComponent(reader.processor_terminal_id)}/display`)) as Screen;
  if (ctx.out.json) ctx.out.printJson({ data: screen });
  else for (const line of [`${reader.name}: ${screen.screen}`, ...screen.lines.map((l) => `  ${l}`)]) ctx.out.line(line);
}
