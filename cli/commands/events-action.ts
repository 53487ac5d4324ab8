import { loadClientConfig } from '../../shared/config.js';
import type { EventDetail } from '../../shared/api/types.js';
import { createApiClient } from '../api.js';
import { usageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { createOutput } from '../output.js';
import type { ApiFlags } from './api-options.js';
import type { EventsListFlags } from './events.js';

function positiveInt(name: string, value: string | undefined, max: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > max) throw usageError(`${name} must be a whole number from 1 to ${max}`);
  return n;
}

function eventId(id: string): string {
  if (!/^evt_[A-Za-z0-9]+$/.test(id)) throw usageError(`not an event id: ${id} (they look like evt_…)`);
  return id;
}

export async function listEventsAction(flags: EventsListFlags, io: CliIo): Promise<void> {
  const page = positiveInt('--page', flags.page ?? '1', 1_000_000_000);
  const size = positiveInt('--size', flags.size ?? '10', 100);
  const api = createApiClient(loadClientConfig(flags, io.env));
  const out = createOutput({ json: Boolean(flags.json) }, io);
  const list = await api.listEvents({ page, size, type: flags.type });
  if (out.json) {
    out.printJson(list);
    return;
  }
  out.table(list.data.map((e) => ({ id: e.id, type: e.type, mode: e.mode, object: String(e.data.reference ?? e.data.id ?? ''), created_at: e.created_at })));
  // Spec §6.6: say what `unknown` means where it shows, since it is not a third mode.
  if (list.data.some((e) => e.mode === 'unknown')) out.line('mode unknown: stored without is_test (before 2026-08-31); never sent to live endpoints.');
  out.line(`page ${list.page} of ${list.lastPage} (${list.totalCount} events)`);
}

function printDetail(event: EventDetail, out: ReturnType<typeof createOutput>): void {
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

export async function getEventAction(id: string, flags: ApiFlags & { json?: boolean }, io: CliIo): Promise<void> {
  const api = createApiClient(loadClientConfig(flags, io.env));
  const out = createOutput({ json: Boolean(flags.json) }, io);
  const { data } = await api.getEvent(eventId(id));
  if (out.json) out.printJson({ data });
  else printDetail(data, out);
}

export async function resendEventAction(id: string, flags: ApiFlags & { endpoint: string; json?: boolean }, io: CliIo): Promise<void> {
  const api = createApiClient(loadClientConfig(flags, io.env));
  const out = createOutput({ json: Boolean(flags.json) }, io);
  const { data } = await api.resendEvent(eventId(id), { endpoint_id: flags.endpoint });
  if (out.json) out.printJson({ data });
  else out.line(`Queued ${data.type} ${data.id} for ${flags.endpoint}: see \`pos events get ${data.id}\` for the attempt.`);
}
