import { DEFAULT_WEBHOOK_TIMEOUT_MS } from '../../shared/config.js';
import { listenSecret, signedHeaders } from '../../shared/webhook-signing.js';
import type { ApiErrorBody, WebhookEvent } from '../../shared/api/types.js';
import { ApiRequestError } from '../../shared/api/errors.js';
import type { CliContext } from '../context.js';
import { usageError } from '../errors.js';
import type { ListenFlags } from './listen.js';

/** After the stream drops (server restart), wait this long before reconnecting: quick, without spinning. */
const RECONNECT_DELAY_MS = 1_000;

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

  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let lastEventId: string | undefined;
  let announced = false;
  let connected = false;
  /** Why the server ended the stream for good (its key was revoked or expired): reconnecting would only be refused. */
  let refused: ApiRequestError | undefined;
  try {
    while (!stop.signal.aborted) {
      const stream = api.streamEvents(
        async (message) => {
          if (message.event === 'error') {
            refused = new ApiRequestError(401, (JSON.parse(message.data) as { error: ApiErrorBody }).error);
            return;
          }
          if (message.event === 'ready') {
            if (announced && !connected) out.error('Reconnected.');
            connected = true;
            if (!announced) {
              const mode = (JSON.parse(message.data) as { mode: string }).mode;
              out.error(`Ready! Listening for ${mode}-mode events. Your webhook signing secret is ${secret} (^C to quit)`);
              announced = true;
            }
            return;
          }
          const event = JSON.parse(message.data) as StreamedEvent;
          lastEventId = event.id;
          const result = flags.forwardTo ? `  ${await forward(flags.forwardTo, secret, event, message.data)}` : '';
          out.line(`${event.created_at}  --> ${event.type} [${event.id}]${result}`);
        },
        { signal: stop.signal, lastEventId, types },
      );
      try {
        await stream;
      } catch (err) {
        // Before the first connection an error is the answer (bad key, wrong URL); after it, the
        // server is restarting and we wait for it.
        if (!announced) throw err;
      }
      if (refused) throw refused;
      if (stop.signal.aborted) break;
      if (connected) out.error('Connection to the server lost; reconnecting…');
      connected = false;
      await new Promise((resolve) => setTimeout(resolve, RECONNECT_DELAY_MS));
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
