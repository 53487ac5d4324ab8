import type { Request, Response } from 'express';
import type { Principal } from '../accounts/api-keys.js';
import type { KeyEnd, KeyWatch } from '../accounts/key-watch.js';
import { unauthenticated } from '../errors.js';
import type { EventStreams } from '../webhooks/events.js';

/** A comment line this often keeps proxies and NAT tables from dropping an idle stream. */
const HEARTBEAT_MS = 15_000;

/** What a stream says before it ends because its key stopped working: the 401 a new request with the key gets. */
const KEY_ENDED: Record<KeyEnd, string> = {
  revoked: 'The API key this stream was opened with was revoked',
  expired: 'The API key this stream was opened with expired (it was rolled and its grace period ended)',
};

/** An open Server-Sent Events answer. */
export interface EventStream {
  /** Writes one event, unless the stream has ended. */
  send(event: string, data: unknown, id?: string): void;
  /** Ends the stream; what `onClose` was given runs once. */
  close(): void;
  /** Runs when the stream ends, however it ends: the client leaving, its key ending, the server stopping. */
  onClose(cleanup: () => void): void;
}

/**
 * Answers a request with a Server-Sent Events stream of the key's: a `ready` event, a heartbeat,
 * closed with the server's other streams at shutdown, and ended the moment its key stops working
 * (revoked or expired, on whichever instance), saying why, as a new request with the key would be
 * refused. A HEAD gets the head alone (undefined): Node sends a head only with the body's first byte
 * or its end, so a HEAD kept open would never be answered.
 */
export function openEventStream(req: Request, res: Response, deps: { streams: EventStreams; keyWatch: KeyWatch; principal: Principal }): EventStream | undefined {
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
  if (req.method === 'HEAD') {
    res.end();
    return undefined;
  }
  let closed = false;
  const cleanups: (() => void)[] = [];
  const write = (event: string, data: unknown, id?: string) => {
    if (!closed) res.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS);
  const close = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    for (const cleanup of cleanups) cleanup();
    forget();
    release();
    res.end();
  };
  let release = (): void => {};
  const forget = deps.streams.add(close);
  res.on('close', close);
  release = deps.keyWatch.hold(deps.principal, (why) => {
    write('error', unauthenticated(KEY_ENDED[why]).toBody());
    close();
  });
  write('ready', { mode: deps.principal.mode });
  return { send: write, close, onClose: (cleanup) => (closed ? cleanup() : void cleanups.push(cleanup)) };
}
