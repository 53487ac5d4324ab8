import type { Logger } from 'pino';
import { RATE_LIMIT_COOL_OFF_MS, ServerDownMessageSchema, UPSTREAM_CLOSE, UPSTREAM_PATH, type AgentUpMessage, type ServerDownMessage } from '../shared/agent-upstream.js';
import type { UpstreamSocket, UpstreamTransport } from './ports.js';

/**
 * Reconnection backoff: the first retry after about 250 ms (a server restart is back within a
 * second or two), doubling to 10 s so a long outage costs a few attempts a minute. Each wait is
 * "equal jitter" (half fixed, half random) so a shop's agents don't reconnect in lockstep after a
 * server restart.
 */
export const BACKOFF_BASE_MS = 250;
export const BACKOFF_CAP_MS = 10_000;

export function backoffDelay(attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** Math.min(attempt, 20));
  return ceiling / 2 + random() * (ceiling / 2);
}

/**
 * After the server refused this agent because its key has as many agents as it may have, the
 * agent tries again this much later: nothing changes until someone frees a place or gives the PC a
 * key of its own, and five minutes is soon enough after they do.
 */
export const AGENT_LIMIT_RETRY_MS = 5 * 60_000;

export interface ReconnectPlan {
  delayMs: number;
  /** Why the server closed the connection, in words for the log; absent for an ordinary drop. */
  why?: string;
}

/**
 * How long to wait before reconnecting after a close with `code` (the server's close code, or 4000 +
 * the HTTP status of a refused upgrade). A close for a limit waits far longer than the backoff: the
 * server would refuse an early try, and a loop of them is what the limit is there to stop.
 */
export function reconnectPlan(code: number, attempt: number, random: () => number = Math.random): ReconnectPlan {
  const backoff = backoffDelay(attempt, random);
  if (code === UPSTREAM_CLOSE.rateLimited) {
    return {
      delayMs: RATE_LIMIT_COOL_OFF_MS + backoff,
      why: 'the server refuses this agent for a while: it sent more messages than the server allows (or its key opened too many connections); see docs/agent-protocol.md, "Limits"',
    };
  }
  if (code === UPSTREAM_CLOSE.agentLimit) {
    return {
      delayMs: AGENT_LIMIT_RETRY_MS + backoff,
      why: 'the server refuses this agent: its API key already has as many agents as the server allows. Give this PC its own counter key (pos keys create --preset counter), or start it with the data dir of the PC it replaces',
    };
  }
  return { delayMs: backoff };
}

export interface UpstreamHandlers {
  /** The link is up; send hello now. */
  hello(): AgentUpMessage;
  message(message: ServerDownMessage): void;
  status(status: 'connected' | 'disconnected'): void;
}

export interface UpstreamOptions {
  serverUrl: string;
  apiKey: string;
}

/** The agent's one websocket to the server, kept open: reconnects with backoff and jitter. */
export class UpstreamLink {
  #socket: UpstreamSocket | undefined;
  #ready = false;
  #attempt = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(
    private readonly transport: UpstreamTransport,
    private readonly options: UpstreamOptions,
    private readonly handlers: UpstreamHandlers,
    private readonly logger: Logger,
  ) {}

  get connected(): boolean {
    return this.#ready;
  }

  start(): void {
    this.#connect();
  }

  #connect(): void {
    if (this.#stopped) return;
    const url = this.options.serverUrl.replace(/^http/, 'ws') + UPSTREAM_PATH;
    const socket = this.transport.connect(url, { authorization: `Bearer ${this.options.apiKey}` });
    this.#socket = socket;
    socket.onOpen(() => socket.send(JSON.stringify(this.handlers.hello())));
    socket.onMessage((text) => {
      let parsed: ServerDownMessage;
      try {
        const result = ServerDownMessageSchema.safeParse(JSON.parse(text));
        if (!result.success) throw new Error(result.error.issues[0]?.message ?? 'invalid');
        parsed = result.data;
      } catch (err) {
        this.logger.warn({ err: err instanceof Error ? err.message : err }, 'invalid message from the server; ignored');
        return;
      }
      if (parsed.type === 'welcome') {
        this.#ready = true;
        this.#attempt = 0;
        this.handlers.status('connected');
      }
      this.handlers.message(parsed);
    });
    socket.onClose((code, reason) => {
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      const wasReady = this.#ready;
      this.#ready = false;
      if (wasReady) this.handlers.status('disconnected');
      if (this.#stopped) return;
      const plan = reconnectPlan(code, this.#attempt);
      const delay = plan.delayMs;
      this.#attempt += 1;
      const log = code >= 4400 && code < 4500 ? 'error' : 'info';
      const words = plan.why ? `upstream connection closed: ${plan.why}; reconnecting in ${Math.round(delay / 1000)} s` : 'upstream connection closed; reconnecting';
      this.logger[log]({ code, reason, retry_in_ms: Math.round(delay) }, words);
      this.#timer = setTimeout(() => this.#connect(), delay);
    });
  }

  /** Sends when the link is up (after welcome); false when it is not. */
  send(message: AgentUpMessage): boolean {
    if (!this.#ready || !this.#socket) return false;
    this.#socket.send(JSON.stringify(message));
    return true;
  }

  async stop(goodbye: boolean): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    const socket = this.#socket;
    if (!socket) return;
    if (goodbye && this.#ready) {
      const closed = new Promise<void>((resolve) => socket.onClose(() => resolve()));
      socket.send(JSON.stringify({ type: 'goodbye' }));
      // The server closes after it has marked the readers offline; don't wait on it forever.
      await Promise.race([closed, new Promise((r) => setTimeout(r, 1_000))]);
    }
    socket.close(1000, 'agent stopping');
  }
}
