import { setImmediate as nextTurn } from 'node:timers/promises';
import { RATE_LIMIT_COOL_OFF_MS } from '../../shared/agent-upstream.js';

/**
 * What one agent connection may ask of the server, and what one key's connections may: a message
 * rate per connection, a bound on what waits to be handled, and per key a bound on open connections
 * and on how fast they are opened. All in this process's memory: they protect this process, and a
 * key's connections spread over several instances are bounded on each. Written down in
 * docs/agent-protocol.md ("Limits").
 */

/**
 * Messages per second one connection may send, sustained. A real agent sends a heartbeat every 5 s
 * and its device list only after a change has settled for 200 ms (an agent older than reader views
 * also its reports, at most every 50 ms): well under one a second at a quiet counter, about 45 at the
 * fastest settings the protocol allows (50 ms heartbeats) with readers changing all the time.
 * 50 leaves every real agent room and holds a runaway one to what the server handles with ease.
 */
export const MESSAGES_PER_SECOND = 50;

/**
 * Messages one connection may send at once. On connecting an agent sends hello, a heartbeat and its
 * devices; an agent older than reader views also its whole unacknowledged report queue (10,000 at
 * most, in messages of 500: 20), so 23 at most; 100 is four times that.
 */
export const MESSAGE_BURST = 100;

/**
 * A connection whose refused messages outnumber the refill by this many is closed (4429): it kept
 * sending through 100 refusals, so it is not going to slow down.
 */
export const MAX_REFUSED = 100;

/**
 * Received messages waiting to be handled (the one being handled included) at which the server stops
 * reading the socket, so TCP makes the sender wait. A burst that the rate allows (100) never reaches
 * it; a sender within the rate whose messages take longer to handle than they take to arrive does.
 * 8 MB bounds the memory one connection's backlog holds (a message is at most 1 MB).
 */
export const PAUSE_AT_MESSAGES = 128;
export const PAUSE_AT_BYTES = 8 * 1024 * 1024;

/**
 * Past these the connection is closed (4429). Once reading stops, only what the socket had already
 * read can still arrive (tens of KB); reaching four times the pause point means it did not stop.
 */
export const MAX_WAITING_MESSAGES = 4 * PAUSE_AT_MESSAGES;
export const MAX_WAITING_BYTES = 4 * PAUSE_AT_BYTES;

/**
 * Open agent connections per key on one server process. A key may have 50 agents
 * (server/terminal/agent-limits.ts), and an agent that reconnected after its network dropped may
 * still have its dead connection open beside the new one until the silence timer ends it.
 */
export const MAX_CONNECTIONS_PER_KEY = 100;

/**
 * Connection attempts per key: 100 at once (a restarted server sees all of a key's 50 agents
 * reconnect together, some twice), then two a second. A real agent reconnects with a backoff of up
 * to 10 s; a loop that reconnects as soon as it is refused is held to two tries a second.
 */
export const CONNECT_BURST = 100;
export const CONNECTS_PER_SECOND = 2;

export type Take = 'accepted' | 'refused' | 'exhausted';

/**
 * A token bucket that keeps count of refusals: a message takes a token; with none left it is
 * refused and the bucket goes into debt, so a sender that keeps going gets no token back until it
 * has paid for what was refused. `exhausted` once the debt would pass `maxDebt` (with `maxDebt` 0,
 * every refusal, and refusals cost nothing).
 */
export class TokenBucket {
  #tokens: number;
  #at: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly maxDebt: number,
    now: number,
  ) {
    this.#tokens = burst;
    this.#at = now;
  }

  take(now: number): Take {
    this.#refill(now);
    if (this.#tokens - 1 < -this.maxDebt) return 'exhausted';
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 'accepted' : 'refused';
  }

  /** Whether the bucket is back to its full burst (nothing to remember about its sender). */
  full(now: number): boolean {
    this.#refill(now);
    return this.#tokens >= this.burst;
  }

  #refill(now: number): void {
    // A clock that stepped back refills nothing rather than taking tokens away.
    const elapsed = Math.max(0, now - this.#at);
    this.#at = Math.max(this.#at, now);
    this.#tokens = Math.min(this.burst, this.#tokens + (elapsed * this.perSecond) / 1000);
  }
}

/** A connection's message rate with the limits above. */
export function messageBucket(now: number): TokenBucket {
  return new TokenBucket(MESSAGES_PER_SECOND, MESSAGE_BURST, MAX_REFUSED, now);
}

export interface InboxBounds {
  pauseAtMessages: number;
  pauseAtBytes: number;
  maxMessages: number;
  maxBytes: number;
}

export const INBOX_BOUNDS: InboxBounds = { pauseAtMessages: PAUSE_AT_MESSAGES, pauseAtBytes: PAUSE_AT_BYTES, maxMessages: MAX_WAITING_MESSAGES, maxBytes: MAX_WAITING_BYTES };

/** What the inbox asks of its socket: stop reading and read again. */
export interface InboxFlow {
  pause(): void;
  resume(): void;
}

/**
 * One connection's received messages, handled one at a time in the order they came (a heartbeat
 * never overtakes the hello). Between two messages the event loop gets a turn, so a long backlog
 * on one socket never keeps other sockets and requests waiting for more than one message's work.
 * Past its pause point it stops the socket's reading; past its bound it refuses to grow.
 */
export class AgentInbox<T> {
  readonly #waiting: { item: T; bytes: number }[] = [];
  /** Of the waiting messages and the one being handled. */
  #bytes = 0;
  #running = false;
  #paused = false;
  #closed = false;
  #lastHandledAt: number;

  constructor(
    private readonly handle: (item: T) => Promise<void>,
    private readonly flow: InboxFlow,
    private readonly now: () => number,
    private readonly bounds: InboxBounds = INBOX_BOUNDS,
  ) {
    this.#lastHandledAt = now();
  }

  /** Messages waiting or being handled. */
  get size(): number {
    return this.#waiting.length + (this.#running ? 1 : 0);
  }

  /** Something is waiting or being handled: the peer is not silent, the server is behind. */
  get busy(): boolean {
    return this.#running || this.#waiting.length > 0;
  }

  /** When the last message was done with (handled or refused); the connection's start before any. */
  get lastHandledAt(): number {
    return this.#lastHandledAt;
  }

  /** A message was answered without being queued (refused): it counts as handled. */
  touch(): void {
    this.#lastHandledAt = this.now();
  }

  /** Queues a message; false when the backlog would pass its bound (the caller closes the connection). */
  push(item: T, bytes: number): boolean {
    if (this.#closed) return true;
    if (this.size + 1 > this.bounds.maxMessages || this.#bytes + bytes > this.bounds.maxBytes) return false;
    this.#waiting.push({ item, bytes });
    this.#bytes += bytes;
    if (!this.#paused && (this.size >= this.bounds.pauseAtMessages || this.#bytes >= this.bounds.pauseAtBytes)) {
      this.#paused = true;
      this.flow.pause();
    }
    if (!this.#running) void this.#drain();
    return true;
  }

  /** Drops what waits and handles nothing more (the connection is closing or closed). */
  close(): void {
    this.#closed = true;
    this.#waiting.length = 0;
    this.#bytes = 0;
    this.#resume();
  }

  async #drain(): Promise<void> {
    this.#running = true;
    try {
      for (;;) {
        const next = this.#waiting.shift();
        if (!next) break;
        try {
          await this.handle(next.item);
        } catch {
          // The handler answers its own failures; one that throws anyway must not stop the queue.
        }
        this.#lastHandledAt = this.now();
        if (this.#closed) break;
        this.#bytes -= next.bytes;
        if (this.#paused && this.#waiting.length <= this.bounds.pauseAtMessages / 2 && this.#bytes <= this.bounds.pauseAtBytes / 2) this.#resume();
        // Better-sqlite3 answers without I/O, so without this a backlog would run in one turn.
        await nextTurn();
      }
    } finally {
      this.#running = false;
    }
  }

  #resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.flow.resume();
  }
}

/**
 * One lane per merchant and mode: the messages of all its agents' connections are handled one at a
 * time, in the order their connections got to them. A merchant's agents then hold at most one
 * unit of work in the database at a time, however many connections they open, so a flood by one
 * merchant adds at most one message's work to anyone else's wait (on SQLite a group commit runs
 * every unit queued at once, synchronously).
 */
export class Lanes {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(lane: string, work: () => Promise<T>): Promise<T> {
    const before = this.#tails.get(lane) ?? Promise.resolve();
    const result = before.then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(lane, tail);
    // The last one out forgets the lane, so idle merchants cost no memory.
    void tail.then(() => {
      if (this.#tails.get(lane) === tail) this.#tails.delete(lane);
    });
    return result;
  }

  /** Lanes with work now (tests). */
  get size(): number {
    return this.#tails.size;
  }
}

export type Admission = { ok: true } | { ok: false; reason: string; retryAfterSeconds: number };

interface KeyState {
  connections: number;
  connects: TokenBucket;
  coolOffUntil: number;
}

/**
 * Per key, on this process: open connections, the rate of new ones, and the cool-off after a
 * connection was closed for flooding (RATE_LIMIT_COOL_OFF_MS), so a reconnect cannot start a fresh
 * burst at once. Keys with nothing to remember are forgotten by `sweep`.
 */
export class KeyGate {
  readonly #keys = new Map<string, KeyState>();

  constructor(
    private readonly maxConnections = MAX_CONNECTIONS_PER_KEY,
    private readonly connectBurst = CONNECT_BURST,
    private readonly connectsPerSecond = CONNECTS_PER_SECOND,
  ) {}

  /** A new connection of `keyId`: admitted (count it with `opened` once it is open), or refused with why. */
  admit(keyId: string, now: number): Admission {
    let state = this.#keys.get(keyId);
    if (!state) {
      state = { connections: 0, connects: new TokenBucket(this.connectsPerSecond, this.connectBurst, 0, now), coolOffUntil: 0 };
      this.#keys.set(keyId, state);
    }
    if (now < state.coolOffUntil) {
      return { ok: false, reason: 'a connection with this key was closed for sending too many messages: wait before connecting again', retryAfterSeconds: Math.ceil((state.coolOffUntil - now) / 1000) };
    }
    if (state.connections >= this.maxConnections) {
      return { ok: false, reason: `this key already has ${this.maxConnections} agent connections open on this server`, retryAfterSeconds: Math.ceil(RATE_LIMIT_COOL_OFF_MS / 1000) };
    }
    if (state.connects.take(now) !== 'accepted') {
      return { ok: false, reason: `too many connection attempts with this key: at most ${this.connectsPerSecond} a second after a burst of ${this.connectBurst}`, retryAfterSeconds: Math.ceil(RATE_LIMIT_COOL_OFF_MS / 1000) };
    }
    return { ok: true };
  }

  /** A connection of `keyId` is open: it counts until `release`. */
  opened(keyId: string): void {
    const state = this.#keys.get(keyId);
    if (state) state.connections += 1;
  }

  release(keyId: string): void {
    const state = this.#keys.get(keyId);
    if (state) state.connections = Math.max(0, state.connections - 1);
  }

  /** A connection of `keyId` was closed for flooding: its new connections wait out the cool-off. */
  coolOff(keyId: string, now: number): void {
    const state = this.#keys.get(keyId);
    if (state) state.coolOffUntil = now + RATE_LIMIT_COOL_OFF_MS;
  }

  /** Forgets keys with no connection, no cool-off and a full attempt budget. */
  sweep(now: number): void {
    for (const [keyId, state] of this.#keys) {
      if (state.connections === 0 && now >= state.coolOffUntil && state.connects.full(now)) this.#keys.delete(keyId);
    }
  }

  /** Keys remembered now (tests). */
  get size(): number {
    return this.#keys.size;
  }
}
