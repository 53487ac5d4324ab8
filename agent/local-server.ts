import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { AgentMessageSchema, ClientMessageSchema, type AgentMessage, type ClientMessage, type ErrorInfo } from '../shared/agent-protocol.js';
import { ApiConnectionError, ApiRequestError } from '../shared/api/errors.js';

/**
 * The biggest legitimate client message is a start_payment with a full cart: 100 lines of 5,000
 * characters at up to 3 bytes each in UTF-8 is 1.5 MB; 2 MB leaves room for the rest of it.
 */
const MAX_CLIENT_MESSAGE_BYTES = 2 * 1024 * 1024;

/** Invalid messages tolerated from one client before it is disconnected. */
const MAX_INVALID_MESSAGES = 50;

/** How long local clients get to finish the close handshake when the agent stops. */
const CLOSE_GRACE_MS = 500;

export type Command = Extract<ClientMessage, { type: 'start_payment' | 'process_payment' | 'cancel_payment' | 'simulate_tap' | 'cash_sale' | 'print_receipt' | 'open_drawer' }>;

export type Topic = 'readers' | 'transactions' | 'devices';

export interface LocalHandlers {
  welcome(): Extract<AgentMessage, { type: 'welcome' }>;
  readers(): Extract<AgentMessage, { type: 'readers' }>;
  devices(): Extract<AgentMessage, { type: 'devices' }>;
  /** The offline sales queue, sent after welcome. */
  offline(): AgentMessage;
  command(command: Command): Promise<unknown>;
}

interface Client {
  ws: WebSocket;
  hello: boolean;
  topics: Set<Topic>;
  invalid: number;
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The counter's websocket (docs/agent-protocol.md): hello first (with the token on a LAN bind),
 * then subscriptions and commands. Every message in is validated against shared/agent-protocol.ts
 * and answered with an `error` when it does not fit; every message out is validated too.
 */
export class LocalServer {
  readonly #clients = new Set<Client>();

  private constructor(
    private readonly wss: WebSocketServer,
    readonly url: string,
    private readonly token: string | undefined,
    private readonly handlers: LocalHandlers,
    private readonly logger: Logger,
  ) {
    wss.on('connection', (ws) => this.#accept(ws));
  }

  static async listen(host: string, port: number, token: string | undefined, handlers: LocalHandlers, logger: Logger): Promise<LocalServer> {
    const wss = new WebSocketServer({ host, port, maxPayload: MAX_CLIENT_MESSAGE_BYTES });
    await new Promise<void>((resolve, reject) => {
      wss.once('listening', resolve);
      wss.once('error', reject);
    });
    const address = wss.address() as AddressInfo;
    const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return new LocalServer(wss, `ws://${shown}:${address.port}`, token, handlers, logger);
  }

  get clients(): number {
    return this.#clients.size;
  }

  #send(client: Client, message: AgentMessage): void {
    const checked = AgentMessageSchema.safeParse(message);
    if (!checked.success) {
      this.logger.error({ type: message.type, issue: checked.error.issues[0] }, 'refusing to send an invalid message');
      return;
    }
    if (client.ws.readyState === client.ws.OPEN) client.ws.send(JSON.stringify(message));
  }

  #error(client: Client, message: string, code: string, type = 'invalid_request_error'): void {
    this.#send(client, { type: 'error', error: { type, code, message } });
  }

  /** Sends to every client that said hello and subscribed to the topic. */
  broadcast(topic: Topic | null, message: AgentMessage): void {
    for (const client of this.#clients) {
      if (client.hello && (topic === null || client.topics.has(topic))) this.#send(client, message);
    }
  }

  #accept(ws: WebSocket): void {
    const client: Client = { ws, hello: false, topics: new Set(), invalid: 0 };
    this.#clients.add(client);
    ws.on('message', (data, isBinary) => {
      let message: ClientMessage;
      try {
        if (isBinary) throw new Error('binary frames are not part of the protocol');
        const parsed = ClientMessageSchema.safeParse(JSON.parse(data.toString()));
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw new Error(`${issue?.path.join('.') || 'message'}: ${issue?.message ?? 'invalid'}`);
        }
        message = parsed.data;
      } catch (err) {
        client.invalid += 1;
        this.#error(client, `Invalid message (${err instanceof Error ? err.message : 'unreadable'}); see docs/agent-protocol.md`, 'invalid_message');
        if (client.invalid > MAX_INVALID_MESSAGES) ws.close(1008, 'too many invalid messages');
        return;
      }
      this.#handle(client, message);
    });
    ws.on('close', () => this.#clients.delete(client));
    ws.on('error', (err) => this.logger.debug({ err }, 'local client socket error'));
  }

  #handle(client: Client, message: ClientMessage): void {
    if (message.type === 'ping') return this.#send(client, { type: 'pong' });
    if (message.type === 'hello') {
      if (this.token !== undefined && (message.token === undefined || !sameToken(message.token, this.token))) {
        this.#error(client, 'This agent needs its token in hello', 'invalid_token', 'authentication_error');
        client.ws.close(1008, 'invalid token');
        return;
      }
      client.hello = true;
      this.#send(client, this.handlers.welcome());
      return this.#send(client, this.handlers.offline());
    }
    if (!client.hello) return this.#error(client, 'Say hello first: {"type":"hello","protocol":1}', 'hello_required');
    if (message.type === 'subscribe') {
      for (const topic of message.topics) client.topics.add(topic);
      if (message.topics.includes('readers')) this.#send(client, this.handlers.readers());
      if (message.topics.includes('devices')) this.#send(client, this.handlers.devices());
      return;
    }
    this.handlers.command(message).then(
      (data) => this.#send(client, { type: 'result', request_id: message.request_id, ok: true, data }),
      (err: unknown) => {
        const error = errorInfo(err);
        if (!error) this.logger.error({ err, command: message.type }, 'command failed');
        this.#send(client, { type: 'result', request_id: message.request_id, ok: false, error: error ?? { type: 'api_error', message: err instanceof Error ? err.message : 'The command failed' } });
      },
    );
  }

  async close(): Promise<void> {
    for (const client of this.#clients) client.ws.close(1001, 'agent stopping');
    // A counter that does not answer the close handshake (or is mid-reconnect) must not hold the
    // agent open: half a second is plenty for a local peer, then the sockets are cut.
    const cut = setTimeout(() => {
      for (const client of this.wss.clients) client.terminate();
    }, CLOSE_GRACE_MS);
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
    clearTimeout(cut);
  }
}

/** What the counter is told of a failed command: the API's error as it came, or that the server is out of reach; undefined for a bug. */
function errorInfo(err: unknown): ErrorInfo | undefined {
  if (err instanceof ApiRequestError) return { type: err.error.type, ...(err.error.code ? { code: err.error.code } : {}), message: err.error.message };
  if (err instanceof ApiConnectionError) return { type: 'api_connection_error', code: 'server_unreachable', message: `The server is unreachable: ${err.detail}` };
  return undefined;
}
