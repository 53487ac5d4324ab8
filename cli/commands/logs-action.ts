import type { RequestLogEntry } from '../../shared/contract/request-log.js';
import { paint } from '../color.js';
import type { CliContext } from '../context.js';
import { usageError } from '../errors.js';
import { followStream } from '../follow-stream.js';

interface TailOptions {
  status?: string;
  method?: string;
  path?: string;
}

function list(value: string | undefined): string[] | undefined {
  const items = value
    ?.split(',')
    .map((v) => v.trim())
    .filter(Boolean);
  return items?.length ? items : undefined;
}

/** Which entries to show: each given filter must match. `4xx` matches 400 to 499. */
function filterOf(options: TailOptions): (entry: RequestLogEntry) => boolean {
  const statuses = list(options.status);
  for (const s of statuses ?? []) if (!/^[1-5](\d\d|xx)$/i.test(s)) throw usageError(`--status takes codes such as 200, 4xx or 5xx, not "${s}"`);
  const methods = list(options.method)?.map((m) => m.toUpperCase());
  return (entry) =>
    (!statuses || statuses.some((s) => (/xx$/i.test(s) ? String(entry.status)[0] === s[0] : Number(s) === entry.status))) &&
    (!methods || methods.includes(entry.method)) &&
    (!options.path || entry.path.startsWith(options.path));
}

function line(ctx: CliContext, e: RequestLogEntry): string {
  const status = paint(ctx.out.color, e.status >= 400 ? 'red' : 'green', String(e.status));
  return `${e.created_at}  ${status} ${e.method.padEnd(6)} ${e.path}  ${e.duration_ms} ms  ${e.request_id}  ${e.key_type === 'secret' ? 'sk' : e.key_type === 'restricted' ? 'rk' : 'pk'}_…${e.key_last4}${e.idempotency_key ? `  idempotency ${e.idempotency_key}` : ''}`;
}

export async function tailLogs(_args: [], options: TailOptions, ctx: CliContext): Promise<void> {
  const show = filterOf(options);
  await followStream(
    ctx.out,
    (receive, signal) => ctx.api.streamRequestLog(receive, { signal }),
    (mode) => ctx.out.error(`Ready! Tailing ${mode}-mode requests (^C to quit)`),
    (message) => {
      const entry = JSON.parse(message.data) as RequestLogEntry;
      if (!show(entry)) return;
      if (ctx.out.json) ctx.out.printJson(entry);
      else ctx.out.line(line(ctx, entry));
    },
  );
}
