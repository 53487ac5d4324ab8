import { DEFAULT_WEBHOOK_TIMEOUT_MS } from '../../shared/config.js';
import { listenSecret, signedHeaders } from '../../shared/webhook-signing.js';
import type { WebhookEvent } from '../../shared/api/types.js';
import type { CliContext } from '../context.js';
import { usageError } from '../errors.js';
import { followStream } from '../follow-stream.js';
import type { ListenFlags } from './listen.js';

/** The fields of a streamed event this command reads; the message body is forwarded untouched. */
type StreamedEvent = Pick<WebhookEvent, 'id' | 'type' | 'created_at'>;

async function forward(url: string, secret: string, event: StreamedEvent, body: string): Promise<string> {
  const started = performance.now();
  try {
    // Signed exactly like a delivery from the server, so the app's verification code runs as in production.
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...signedHeaders([secret], event.id, Date.now(), body), 'content-type': 'application/json', 'user-agent': 'pos-listen/1' },
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(DEFAULT_WEBHOOK_TIMEOUT_MS),
    });
    await res.arrayBuffer().catch(() => undefined);
    return `[${res.status}] POST ${url} (${Math.round(performance.now() - started)} ms)`;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return `[ERROR] POST ${url}: ${cause ?? (err as Error).message}`;
  }
}

export async function listen(_args: [], flags: ListenFlags, ctx: CliContext): Promise<void> {
  const { out, api } = ctx;
  const secret = listenSecret(api.requireKey());
  if (flags.printSecret) {
    out.line(secret);
    return;
  }
  if (flags.forwardTo !== undefined) {
    let target: URL;
    try {
      target = new URL(flags.forwardTo);
    } catch {
      throw usageError(`--forward-to must be a URL, got ${flags.forwardTo}`);
    }
    if (target.protocol !== 'http:' && target.protocol !== 'https:') throw usageError('--forward-to must be an http(s) URL');
  }
  const types = flags.events
    ?.split(',')
    .map((t) => t.trim())
    .filter(Boolean);

  let lastEventId: string | undefined;
  await followStream(
    out,
    // Resumes after the last event shown, so a reconnect neither loses nor repeats one.
    (receive, signal) => api.streamEvents(receive, { signal, lastEventId, types }),
    (mode) => out.error(`Ready! Listening for ${mode}-mode events. Your webhook signing secret is ${secret} (^C to quit)`),
    async (message) => {
      const event = JSON.parse(message.data) as StreamedEvent;
      lastEventId = event.id;
      const result = flags.forwardTo ? `  ${await forward(flags.forwardTo, secret, event, message.data)}` : '';
      out.line(`${event.created_at}  --> ${event.type} [${event.id}]${result}`);
    },
  );
}
