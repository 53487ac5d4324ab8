import type { EventDetail, WebhookEvent } from '../../shared/api/types.js';
import type { CliContext } from '../context.js';
import { usageError } from '../errors.js';
import type { Output } from '../output.js';
import { printNumbered } from '../pages.js';
import type { ListFlags } from './list-options.js';

function eventId(id: string): string {
  if (!/^evt_[A-Za-z0-9]+$/.test(id)) throw usageError(`not an event id: ${id} (they look like evt_…)`);
  return id;
}

export async function listEvents(_args: [], options: { type?: string } & ListFlags, ctx: CliContext): Promise<void> {
  const row = (e: WebhookEvent) => ({ id: e.id, type: e.type, mode: e.mode, object: String(e.data.reference ?? e.data.id ?? ''), created_at: e.created_at });
  let unknownMode = false;
  await printNumbered(
    ctx,
    options,
    async (page, size) => {
      const list = await ctx.api.listEvents({ page, size, type: options.type });
      unknownMode ||= list.data.some((e) => e.mode === 'unknown');
      return list;
    },
    row,
    'events',
  );
  // Spec §6.6: say what `unknown` means where it shows, since it is not a third mode.
  if (unknownMode && !ctx.out.json) ctx.out.line('mode unknown: stored without is_test (before 2026-08-31); never sent to live endpoints.');
}

function printDetail(event: EventDetail, out: Output): void {
  out.line(`${event.id}  ${event.type}  ${event.created_at}  mode ${event.mode}${event.mode === 'unknown' ? ' (stored without is_test; never sent to live endpoints)' : ''}`);
  out.line(JSON.stringify(event.data, null, 2));
  if (event.deliveries.length === 0) {
    out.line('No webhook deliveries.');
    return;
  }
  for (const d of event.deliveries) {
    out.line(`delivery to ${d.endpoint_url} (${d.endpoint_id})${d.manual ? ' [resend]' : ''}: ${d.status}${d.next_attempt_at ? `, next attempt ${d.next_attempt_at}` : ''}`);
    out.table(
      d.attempts.map((a) => ({ attempted_at: a.attempted_at, status: a.status_code ?? '-', latency_ms: a.latency_ms, error: a.error ?? '' })),
      ['attempted_at', 'status', 'latency_ms', 'error'],
    );
  }
}

export async function getEvent([id]: [string], _options: object, ctx: CliContext): Promise<void> {
  const { data } = await ctx.api.getEvent(eventId(id));
  if (ctx.out.json) ctx.out.printJson({ data });
  else printDetail(data, ctx.out);
}

export async function resendEvent([id]: [string], options: { endpoint: string }, ctx: CliContext): Promise<void> {
  const { data } = await ctx.api.resendEvent(eventId(id), { endpoint_id: options.endpoint });
  if (ctx.out.json) ctx.out.printJson({ data });
  else ctx.out.line(`Queued ${data.type} ${data.id} for ${options.endpoint}: see \`pos events get ${data.id}\` for the attempt.`);
}
