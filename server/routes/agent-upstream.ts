import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { AgentUpMessageSchema, UPSTREAM_CLOSE, UPSTREAM_PATH, UPSTREAM_PROTOCOLS_ACCEPTED, type AgentUpMessage, type ServerDownMessage, type UpstreamDevice } from '../../shared/agent-upstream.js';
import type { Clock } from '../../shared/time.js';
import { ApiError, forbidden, keyRequired, limitReached, missing, missingScope, unavailable } from '../errors.js';
import type { KeyAuthenticator, Principal } from '../accounts/api-keys.js';
import { shownTo } from '../accounts/visibility.js';
import { missingPermission } from '../accounts/permissions.js';
import { AGENT_CONNECT_SCOPE } from './agent.js';
import type { Services } from '../services.js';
import type { Scope } from '../accounts/scope.js';
import { inputProblem } from '../http/input.js';
import { AgentInbox, KeyGate, Lanes, MESSAGE_BURST, MESSAGES_PER_SECOND, messageBucket, type TokenBucket } from '../http/agent-limits.js';
import { AGENT_LIMIT_REACHED } from '../terminal/agents.js';
import type { ActingKey } from '../audit/origin.js';
import { newReference } from '../../shared/ids.js';
import { POS_VERSION } from '../../shared/version.js';

/**
 * How often connections are checked for silence (in memory, no database). Silence is counted in
 * heartbeats (SILENT_HEARTBEATS of them, 15 s with the default 5 s interval), so a dead connection
 * dropped up to a second later than that changes nothing.
 */
const SILENCE_CHECK_MS = 1_000;

/** A heartbeat carries up to 1,000 readers (~100 KB); 1 MB leaves room and stops a runaway peer. */
const MAX_MESSAGE_BYTES = 1024 * 1024;

/** The agent must say hello this soon after connecting, or the socket is closed. */
const HELLO_TIMEOUT_MS = 10_000;

/** Silence for this many heartbeat intervals means the TCP connection is dead: it is dropped. */
const SILENT_HEARTBEATS = 3;

/** Invalid messages tolerated on one connection before it is closed (a broken peer, not a hiccup). */
const MAX_INVALID_MESSAGES = 20;

/**
 * The close code when the key the agent connected with stops working (revoked, or rolled and its
 * grace over): 4401, HTTP's 401 in the application range, so the agent can tell it from a restart.
 */
export const KEY_ENDED_CLOSE_CODE = 4401;

/**
 * A connection closed for its limits that has not finished the closing handshake this long after is
 * cut: a peer that floods is not waiting to read our close frame.
 */
const LIMIT_CLOSE_GRACE_MS = 2_000;

interface Received {
  data: RawData;
  isBinary: boolean;
}

interface Connection {
  ws: WebSocket;
  scope: Scope;
  /** The key it connected with: pushes show what that key may read. */
  principal: Principal;
  /** Stops watching the key (server/accounts/key-watch.ts), which closes the socket when the key stops working. */
  releaseKey: () => void;
  /** Its message rate (server/http/agent-limits.ts). */
  bucket: TokenBucket;
  /** Its received messages, handled in order; the silence timer counts from the last one handled. */
  inbox: AgentInbox<Received>;
  /** Closed for a limit: what still arrives is dropped. */
  closing: boolean;
  /** The key as the audit trail names what the agent reports (drawer openings). */
  actor: ActingKey;
  agentId?: string;
  /** The upstream protocol its hello named (one of UPSTREAM_PROTOCOLS_ACCEPTED). */
  protocol?: number;
  heartbeatMs: number;
  /** Stops following the merchant's payment events (set once the agent said hello). */
  stopPush?: () => void;
  /** Stops following the merchant's reader states (set once the agent said hello). */
  stopReaders?: () => void;
  /** Stops following the merchant's locations and their receipt policies (set once the agent said hello). */
  stopLocations?: () => void;
  invalid: number;
  /** The agent's last device list on this connection: its heartbeats keep the online ones online. */
  devices: readonly UpstreamDevice[];
}

export interface AgentUpstreamDeps {
  keys: KeyAuthenticator;
  clock: Clock;
  logger: Logger;
  services: Services;
}

export interface AgentUpstream {
  /** Agents connected now (after hello). */
  connected(): number;
  close(): Promise<void>;
}

const STATUS_TEXT: Record<number, string> = { 401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 429: 'Too Many Requests', 503: 'Service Unavailable' };

function rejectUpgrade(socket: Duplex, error: ApiError, retryAfterSeconds?: number): void {
  const body = JSON.stringify(error.toBody());
  const reason = STATUS_TEXT[error.status] ?? 'Bad Request';
  const retry = retryAfterSeconds !== undefined ? `Retry-After: ${retryAfterSeconds}\r\n` : '';
  socket.end(`HTTP/1.1 ${error.status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retry}Connection: close\r\n\r\n${body}`);
}

function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, chunk) => sum + chunk.length, 0);
  return data.byteLength;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The upstream side of the agent protocol on the API server's own HTTP server: `GET
 * /v1/agent/connect` upgraded to a websocket, authenticated with the merchant's secret key.
 */
export function attachAgentUpstream(server: Server, deps: AgentUpstreamDeps): AgentUpstream {
  const { keys, clock, logger, services } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  const connections = new Set<Connection>();
  const gate = new KeyGate();
  const lanes = new Lanes();
  let closed = false;

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== UPSTREAM_PATH) {
      // Another feature may own other upgrade paths; answer only when nobody else listens.
      if (server.listenerCount('upgrade') === 1) rejectUpgrade(socket, missing(`No websocket at ${path}`));
      return;
    }
    socket.on('error', () => socket.destroy());
    void (async () => {
      if (closed) return rejectUpgrade(socket, unavailable('The server is shutting down'));
      const key = BEARER.exec(req.headers.authorization ?? '')?.[1];
      const principal = key ? await keys.authenticate(key, clock.now()) : null;
      if (!principal) return rejectUpgrade(socket, keyRequired(key ? 'Invalid API key provided' : 'No API key provided: send `Authorization: Bearer sk_…`'));
      if (principal.kind === 'publishable') return rejectUpgrade(socket, forbidden('secret_key_required', 'The agent needs a secret key (sk_…) or a restricted key (rk_…)'));
      const missing = principal.kind === 'restricted' ? missingPermission(principal.permissions, AGENT_CONNECT_SCOPE) : undefined;
      if (missing) return rejectUpgrade(socket, missingScope(missing));
      const admission = gate.admit(principal.keyId, clock.now());
      if (!admission.ok) {
        logger.warn({ merchant_id: principal.merchantId, key_id: principal.keyId, reason: admission.reason }, 'agent connection refused');
        return rejectUpgrade(socket, limitReached('rate_limited', `Agent connection refused: ${admission.reason}; see docs/agent-protocol.md, "Limits"`), admission.retryAfterSeconds);
      }
      wss.handleUpgrade(req, socket, head, (ws) => accept(ws, principal));
    })().catch((err: unknown) => {
      logger.error({ err }, 'agent upgrade failed');
      socket.destroy();
    });
  };
  server.on('upgrade', onUpgrade);

  function send(conn: Connection, message: ServerDownMessage): void {
    if (conn.ws.readyState === conn.ws.OPEN) conn.ws.send(JSON.stringify(message));
  }

  function sendError(conn: Connection, type: string, message: string, code?: string): void {
    send(conn, { type: 'error', error: { type, message, ...(code ? { code } : {}) } });
  }

  /** Ends a connection that asked too much: what still arrives is dropped, and the peer is cut if it does not close. */
  function closeForLimit(conn: Connection, code: number, reason: string): void {
    if (conn.closing) return;
    conn.closing = true;
    conn.inbox.close();
    logger.warn({ agent_id: conn.agentId, merchant_id: conn.scope.merchantId, code, reason }, 'agent connection closed for a limit');
    conn.ws.close(code, reason);
    setTimeout(() => conn.ws.terminate(), LIMIT_CLOSE_GRACE_MS).unref();
  }

  /** Too many messages, or too many waiting: closed, and the key's new connections wait out the cool-off. */
  function closeRateLimited(conn: Connection, reason: string): void {
    gate.coolOff(conn.principal.keyId, clock.now());
    closeForLimit(conn, UPSTREAM_CLOSE.rateLimited, reason);
  }

  function accept(ws: WebSocket, principal: Principal): void {
    const scope: Scope = { merchantId: principal.merchantId, mode: principal.mode };
    const conn: Connection = {
      ws,
      scope,
      principal,
      actor: { id: principal.keyId, type: principal.kind, last4: principal.last4 },
      releaseKey: () => undefined,
      bucket: messageBucket(clock.now()),
      // Messages are handled one at a time, in order: a heartbeat never overtakes the hello. All
      // the merchant's connections share one lane, so its agents hold one unit of work at a time.
      inbox: new AgentInbox<Received>(
        ({ data, isBinary }) =>
          lanes.run(`${scope.merchantId}:${scope.mode}`, () => handle(conn, data, isBinary)).catch((err: unknown) => {
            logger.warn({ err, agent_id: conn.agentId }, 'agent message failed');
            sendError(conn, err instanceof ApiError ? err.type : 'api_error', err instanceof ApiError ? err.message : 'The server could not handle this message', err instanceof ApiError ? err.code : undefined);
          }),
        { pause: () => ws.pause(), resume: () => ws.resume() },
        () => clock.now(),
      ),
      closing: false,
      heartbeatMs: 5_000,
      invalid: 0,
      devices: [],
    };
    connections.add(conn);
    gate.opened(principal.keyId);
    conn.releaseKey = services.keyWatch.hold(principal, (why) => {
      logger.info({ agent_id: conn.agentId, why }, 'agent key revoked or expired: disconnecting');
      ws.close(KEY_ENDED_CLOSE_CODE, why === 'revoked' ? 'API key revoked' : 'API key expired');
    });
    const helloTimer = setTimeout(() => {
      if (!conn.agentId) ws.close(1008, 'hello expected');
    }, HELLO_TIMEOUT_MS);
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (conn.closing) return;
      // Counted on arrival, before any work: a refused message costs a token check and an answer.
      const take = conn.bucket.take(clock.now());
      if (take !== 'accepted') {
        conn.inbox.touch();
        sendError(conn, 'rate_limit_error', `Too many messages: at most ${MESSAGES_PER_SECOND} a second after a burst of ${MESSAGE_BURST}; this one was not handled (see docs/agent-protocol.md, "Limits")`, 'rate_limited');
        if (take === 'exhausted') closeRateLimited(conn, 'too many messages');
        return;
      }
      if (!conn.inbox.push({ data, isBinary }, byteLength(data))) closeRateLimited(conn, 'too many messages waiting to be handled');
    });
    ws.on('close', () => {
      clearTimeout(helloTimer);
      conn.releaseKey();
      conn.inbox.close();
      gate.release(conn.principal.keyId);
      conn.stopPush?.();
      conn.stopReaders?.();
      conn.stopLocations?.();
      connections.delete(conn);
      if (conn.agentId) logger.info({ agent_id: conn.agentId }, 'agent disconnected');
    });
    ws.on('error', (err) => logger.debug({ err }, 'agent socket error'));
  }

  async function handle(conn: Connection, data: RawData, isBinary: boolean): Promise<void> {
    let message: AgentUpMessage;
    try {
      if (isBinary) throw new Error('binary');
      const raw: unknown = JSON.parse(data.toString());
      const problem = inputProblem(raw, 'message');
      if (problem) throw new Error(problem.message);
      const parsed = AgentUpMessageSchema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new Error(`${issue?.path.join('.') || 'message'}: ${issue?.message ?? 'invalid'}`);
      }
      message = parsed.data;
    } catch (err) {
      conn.invalid += 1;
      sendError(conn, 'invalid_request_error', `Invalid message (${err instanceof Error ? err.message : 'unreadable'}); see docs/agent-protocol.md`, 'invalid_message');
      if (conn.invalid > MAX_INVALID_MESSAGES) conn.ws.close(1008, 'too many invalid messages');
      return;
    }
    if (message.type === 'hello') {
      if (!UPSTREAM_PROTOCOLS_ACCEPTED.includes(message.protocol)) {
        const accepted = UPSTREAM_PROTOCOLS_ACCEPTED.join(' and ');
        sendError(conn, 'invalid_request_error', `This server (pos ${POS_VERSION}) speaks agent protocols ${accepted}, not ${message.protocol}: run an agent of a version that speaks one of them (docs/agent-protocol.md, "Versions")`, 'protocol_unsupported');
        conn.ws.close(1008, 'protocol unsupported');
        return;
      }
      let connected: Awaited<ReturnType<typeof services.agents.connect>>;
      try {
        connected = await services.agents.connect(conn.scope, message, conn.principal.keyId);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === AGENT_LIMIT_REACHED)) throw err;
        sendError(conn, err.type, err.message, err.code);
        closeForLimit(conn, UPSTREAM_CLOSE.agentLimit, 'agent limit reached for this key');
        return;
      }
      const { agent, cursor } = connected;
      const merchant = await services.merchants.identity(conn.scope);
      conn.agentId = agent.id;
      conn.protocol = message.protocol;
      conn.heartbeatMs = message.heartbeat_ms;
      const welcome = { type: 'welcome', agent_id: agent.id, mode: conn.scope.mode, merchant, presence_ttl_ms: services.agents.ttlFor(message.heartbeat_ms), cursor } as const;
      send(
        conn,
        message.protocol === 1
          ? // No report is stored (the `reports` case below): a protocol-1 agent may drop its whole queue.
            { ...welcome, last_report_seq: Number.MAX_SAFE_INTEGER }
          : { ...welcome, protocol: message.protocol, server_version: POS_VERSION },
      );
      logger.info({ agent_id: agent.id, merchant_id: conn.scope.merchantId, mode: conn.scope.mode, protocol: message.protocol, version: message.version }, 'agent connected');
      // Payment events are pushed as their commits announce them; an idle agent costs no reads. A
      // socket that closed while the hello was handled has nobody left to stop a follower.
      conn.stopPush?.();
      conn.stopReaders?.();
      conn.stopLocations?.();
      if (conn.ws.readyState !== conn.ws.OPEN) return;
      // Locations first: a reader's push names its location, whose receipt policy the agent then knows.
      conn.stopLocations = services.terminal.followLocations(
        conn.scope,
        (locations) => send(conn, { type: 'locations', locations }),
        (err) => logger.warn({ err, agent_id: conn.agentId }, 'pushing locations failed; trying again shortly'),
      );
      // Readers with their payments: every reader once, then each change of a reader's action or
      // of its payment as its commit announces it (nothing here asks the processor).
      conn.stopReaders = services.readerViews.follow(
        conn.scope,
        (readers) => send(conn, { type: 'reader_states', readers }),
        (reader) => send(conn, { type: 'reader_state', reader }),
        (err) => logger.warn({ err, agent_id: conn.agentId }, 'pushing reader states failed; trying again shortly'),
      );
      conn.stopPush = services.agents.followTransactionEvents(
        conn.scope,
        cursor,
        (events) => {
          for (const event of events) send(conn, { type: 'transaction', seq: event.seq, event: event.type, transaction: shownTo(conn.principal, event.data) });
        },
        (err) => logger.warn({ err, agent_id: conn.agentId }, 'pushing transaction events failed; trying again shortly'),
      );
      return;
    }
    const agentId = conn.agentId;
    if (!agentId) {
      sendError(conn, 'invalid_request_error', 'Say hello first', 'hello_required');
      return;
    }
    switch (message.type) {
      case 'heartbeat': {
        const view = await services.agents.heartbeat(conn.scope, agentId, conn.heartbeatMs, message.readers);
        await services.devices.renew(conn.scope, agentId, services.agents.ttlFor(conn.heartbeatMs), conn.devices);
        send(conn, { type: 'presence', readers: view.readers, unknown: view.unknown });
        return;
      }
      case 'devices': {
        // Kept only once stored: a report the database refused is not renewed by heartbeats.
        await services.devices.report(conn.scope, agentId, services.agents.ttlFor(conn.heartbeatMs), message.devices);
        conn.devices = message.devices;
        return;
      }
      case 'reports':
        if (conn.protocol !== 1) {
          sendError(conn, 'invalid_request_error', 'Invalid message (reports are not part of agent protocol 2); see docs/agent-protocol.md', 'invalid_message');
          return;
        }
        // Agents that predate reader views report what they derived from them; the server pushed
        // those views itself and nothing reads reports back. Acknowledged so their queue drains,
        // stored nowhere.
        send(conn, { type: 'reports_ack', seq: Math.max(...message.reports.map((r) => r.seq)) });
        return;
      case 'drawer_opened': {
        // Each message is a request of its own to the trail; the openings' ids keep a resend to one entry each.
        const ids = await services.audit.drawerOpened(conn.scope, conn.actor, agentId, message.openings, newReference('request'));
        send(conn, { type: 'drawer_ack', ids });
        return;
      }
      case 'goodbye':
        await services.agents.goodbye(agentId);
        conn.ws.close(1000, 'goodbye');
        return;
    }
  }

  const silenceTimer = setInterval(() => {
    const now = clock.now();
    for (const conn of connections) {
      // Silence counts from the last message handled: an agent whose messages wait behind its own
      // backlog is not silent, the server is behind.
      if (conn.agentId && !conn.inbox.busy && now - conn.inbox.lastHandledAt > SILENT_HEARTBEATS * conn.heartbeatMs) conn.ws.terminate();
    }
    gate.sweep(now);
  }, SILENCE_CHECK_MS);
  silenceTimer.unref();

  return {
    connected: () => [...connections].filter((c) => c.agentId).length,
    async close() {
      closed = true;
      clearInterval(silenceTimer);
      server.off('upgrade', onUpgrade);
      // 1012 "service restart": agents reconnect with backoff and keep their readers' presence.
      for (const conn of connections) conn.ws.close(1012, 'server restarting');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      const deadline = Date.now() + 1_000;
      while (connections.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      for (const conn of connections) conn.ws.terminate();
    },
  };
}
