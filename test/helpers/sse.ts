import { randomUUID } from 'node:crypto';
import { request, type IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { UPSTREAM_PATH, UPSTREAM_PROTOCOL_VERSION } from '../../shared/agent-upstream.js';
import type { Json } from './api.js';
import { eventually } from './tmp.js';

/**
 * A key's long-lived connections as an attacker holding it would keep them: the raw event stream
 * (every SSE message as sent, the `error` before the end included) and a bare agent socket, each
 * saying when and how the server ended it.
 */

export interface SseMessage {
  event: string;
  id: string | undefined;
  data: Json;
}

export interface RawStream {
  readonly messages: SseMessage[];
  /** Date.now() when the server ended the response; undefined while it is open. */
  endedAt(): number | undefined;
  /** Resolves once the server has ended the stream. */
  ended: Promise<void>;
  close(): void;
}

/** `GET /v1/events/stream` with `key`, resolved once the server said `ready`. */
export async function openRawStream(url: string, key: string, lastEventId?: string, path = '/v1/events/stream'): Promise<RawStream> {
  const messages: SseMessage[] = [];
  let endedAt: number | undefined;
  let response: IncomingMessage | undefined;
  const req = request(`${url}${path}`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) } });
  const ended = new Promise<void>((resolve, reject) => {
    req.once('error', reject);
    req.once('response', (res) => {
      response = res;
      if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let gap = buffer.indexOf('\n\n');
        while (gap >= 0) {
          const block = buffer.slice(0, gap);
          buffer = buffer.slice(gap + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(':');
            if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
          }
          const data = fields.get('data');
          if (data !== undefined) messages.push({ event: fields.get('event') ?? 'message', id: fields.get('id'), data: JSON.parse(data) as Json });
          gap = buffer.indexOf('\n\n');
        }
      });
      res.once('end', () => {
        endedAt = Date.now();
        resolve();
      });
      res.once('error', reject);
    });
  });
  req.end();
  ended.catch(() => undefined);
  await eventually(() => (messages.some((m) => m.event === 'ready') ? true : undefined), 10_000);
  return {
    messages,
    endedAt: () => endedAt,
    ended,
    close: () => {
      response?.destroy();
      req.destroy();
    },
  };
}

export interface RawAgent {
  readonly messages: Json[];
  /** The close code and reason once the server closed the socket, and when (Date.now()). */
  closed(): { code: number; reason: string; at: number } | undefined;
  close(): void;
}

/** An agent upstream socket with `key` that has said hello and been welcomed. */
export async function connectRawAgent(url: string, key: string): Promise<RawAgent> {
  const ws = new WebSocket(url.replace(/^http/, 'ws') + UPSTREAM_PATH, { headers: { authorization: `Bearer ${key}` } });
  const messages: Json[] = [];
  let closed: { code: number; reason: string; at: number } | undefined;
  ws.on('message', (data: WebSocket.RawData) => messages.push(JSON.parse(data.toString()) as Json));
  ws.on('close', (code, reason) => {
    closed = { code, reason: reason.toString(), at: Date.now() };
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  // A long heartbeat: nothing the agent sends may be what ends the socket.
  ws.send(JSON.stringify({ type: 'hello', protocol: UPSTREAM_PROTOCOL_VERSION, agent_id: randomUUID(), name: 'Kept agent', version: 'test', heartbeat_ms: 60_000, cursor: null }));
  await eventually(() => messages.find((m) => m.type === 'welcome'), 10_000);
  return { messages, closed: () => closed, close: () => ws.terminate() };
}
