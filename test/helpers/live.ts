import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { UPSTREAM_PATH, UPSTREAM_PROTOCOL_VERSION } from '../../shared/agent-upstream.js';
import { Transport } from '../../shared/api/transport.js';
import type { Json } from './api.js';
import { eventually } from './tmp.js';

/**
 * The server's two long-lived connections as a test holds them: an event stream read through the
 * shared client's transport (as `pos listen` reads it), and a bare agent upstream websocket that
 * says only what the test tells it to.
 */

export interface StreamedEvent {
  type: string;
  data: Json;
  /** performance.now() when it arrived. */
  at: number;
}

export interface EventStreamClient {
  readonly events: StreamedEvent[];
  /** The first event whose `data.id` is `id`, once it has arrived. */
  event(id: string, timeoutMs?: number): Promise<StreamedEvent>;
  close(): void;
}

/** `GET /v1/events/stream`, resolved once the server said `ready`. */
export async function openEventStream(url: string, key: string): Promise<EventStreamClient> {
  const events: StreamedEvent[] = [];
  const abort = new AbortController();
  let ready = false;
  const done = new Transport({ baseUrl: url, apiKey: key, timeoutMs: null }).stream(
    '/v1/events/stream',
    (message) => {
      if (message.event === 'ready') ready = true;
      else events.push({ type: message.event, data: (JSON.parse(message.data) as { data: Json }).data, at: performance.now() });
    },
    { signal: abort.signal },
  );
  done.catch(() => undefined);
  await eventually(() => (ready ? true : undefined));
  return {
    events,
    event: (id, timeoutMs = 5_000) => eventually(() => events.find((e) => e.data.id === id), timeoutMs, 5),
    close: () => abort.abort(),
  };
}

export interface UpstreamAgent {
  readonly messages: Json[];
  send(message: Json): void;
  /** The first message of `type` after the first `after` messages that `match` accepts, once it has arrived. */
  next(type: string, match?: (message: Json) => boolean, after?: number, timeoutMs?: number): Promise<Json>;
  close(): void;
}

/** An agent upstream connection that has said hello (declaring `heartbeatMs`) and been welcomed. */
export async function connectUpstreamAgent(url: string, key: string, heartbeatMs: number): Promise<UpstreamAgent> {
  const ws = new WebSocket(url.replace(/^http/, 'ws') + UPSTREAM_PATH, { headers: { authorization: `Bearer ${key}` } });
  const messages: Json[] = [];
  ws.on('message', (data: WebSocket.RawData) => messages.push(JSON.parse(data.toString()) as Json));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ type: 'hello', protocol: UPSTREAM_PROTOCOL_VERSION, agent_id: randomUUID(), name: 'Test agent', version: 'test', heartbeat_ms: heartbeatMs, cursor: null }));
  const next: UpstreamAgent['next'] = (type, match = () => true, after = 0, timeoutMs = 5_000) =>
    eventually(() => messages.slice(after).find((m) => m.type === type && match(m)), timeoutMs, 5);
  await next('welcome');
  return { messages, send: (message) => ws.send(JSON.stringify(message)), next, close: () => ws.terminate() };
}
