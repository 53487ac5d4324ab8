import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Stripe from 'stripe';
import { type RunningSimulator, type SimulatorOptions, startSimulator } from '../index.js';

/**
 * Test support: a simulator on port 0 over a throwaway data directory, SDK clients pointed at it
 * exactly as an application would point them, a real webhook receiver, and a deadline-bound poll.
 */

export interface TestSimulator {
  sim: RunningSimulator;
  dataDir: string;
  /** Test-mode secret key client. */
  stripe: Stripe;
  /** Live-mode secret key client. */
  live: Stripe;
  /** A client with any key (publishable keys, bogus keys). */
  client(key: string): Stripe;
  /** Stops and starts again on the same data directory (a new port). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The simulator enforces Stripe's rate limits, and a test client, like any client of Stripe, keeps
 * under them: 20 requests in any second per mode, a fifth below test mode's 25 so that requests
 * sent a second apart that arrive closer together (the simulator's event loop is busy) still fit.
 */
const PACED_PER_SECOND = 20;
const SECOND_MS = 1_000;
/** Sends of one request before a 429 is given to the test: waits of 1, 2, 3 and 4 s clear any window. */
const RATE_LIMITED_ATTEMPTS = 5;

/** Sends at most PACED_PER_SECOND requests in any second, in the order they were asked for. */
class Pacer {
  readonly #sends: number[] = [];
  #turn: Promise<void> = Promise.resolve();

  slot(): Promise<void> {
    const turn = this.#turn.then(() => this.#wait());
    this.#turn = turn;
    return turn;
  }

  async #wait(): Promise<void> {
    for (;;) {
      const now = Date.now();
      while (this.#sends.length > 0 && this.#sends[0]! <= now - SECOND_MS) this.#sends.shift();
      if (this.#sends.length < PACED_PER_SECOND) {
        this.#sends.push(now);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, this.#sends[0]! + SECOND_MS - now));
    }
  }
}

/** One pacer per simulator and mode: its limits count per platform account and mode. */
const pacers = new WeakMap<RunningSimulator, Record<'test' | 'live', Pacer>>();

function pacedHttpClient(sim: RunningSimulator, key: string): Stripe.HttpClient {
  let byMode = pacers.get(sim);
  if (!byMode) {
    byMode = { test: new Pacer(), live: new Pacer() };
    pacers.set(sim, byMode);
  }
  const pacer = byMode[/_live_/.test(key) ? 'live' : 'test'];
  const inner = Stripe.createNodeHttpClient();
  return {
    getClientName: () => inner.getClientName(),
    makeRequest: async (...args) => {
      // A 429 can still come when paced sends arrive bunched on a busy machine: back off and send
      // again, as Stripe asks its clients to, rather than fail the test on the machine's load.
      for (let attempt = 1; ; attempt += 1) {
        await pacer.slot();
        const response = await inner.makeRequest(...args);
        if (response.getStatusCode() !== 429 || attempt >= RATE_LIMITED_ATTEMPTS) return response;
        await response.toJSON().catch(() => undefined);
        await new Promise((resolve) => setTimeout(resolve, SECOND_MS * attempt));
      }
    },
  };
}

/** An SDK client on the simulator, paced under its rate limits unless `paced: false` (to exceed them on purpose). */
export function makeClient(sim: RunningSimulator, key: string, options: { paced?: boolean } = {}): Stripe {
  return new Stripe(key, {
    host: sim.host,
    port: sim.port,
    protocol: 'http',
    maxNetworkRetries: 0,
    telemetry: false,
    ...(options.paced === false ? {} : { httpClient: pacedHttpClient(sim, key) }),
  });
}

export async function startTestSimulator(options: Partial<SimulatorOptions> = {}): Promise<TestSimulator> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'pos-sim-'));
  const start = (): Promise<RunningSimulator> =>
    startSimulator({ authorizationDelayMs: 100, achSettlementDelayMs: 100, ...options, dataDir });
  const harness: TestSimulator = {
    sim: await start(),
    dataDir,
    stripe: undefined as unknown as Stripe,
    live: undefined as unknown as Stripe,
    client: (key) => makeClient(harness.sim, key),
    async restart() {
      await harness.sim.close();
      harness.sim = await start();
      bind();
    },
    async close() {
      await harness.sim.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
  const bind = (): void => {
    harness.stripe = makeClient(harness.sim, harness.sim.keys.secretTest);
    harness.live = makeClient(harness.sim, harness.sim.keys.secretLive);
  };
  bind();
  return harness;
}

/** Polls `probe` until it returns a value other than undefined, or fails after the deadline. */
export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, timeoutMs = 3_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
}

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  raw: string;
  event: { id: string; type: string; account?: string; data: { object: { id: string; [key: string]: unknown } } };
}

/** A real HTTP server standing in for the merchant's webhook endpoint. */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** Answer this many requests with 500 before accepting again. */
  failNext = 0;
  private server: Server | null = null;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (this.failNext > 0) {
          this.failNext--;
          res.writeHead(500).end('nope');
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        this.received.push({ headers: req.headers, raw, event: JSON.parse(raw) as ReceivedWebhook['event'] });
        res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"received":true}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/webhooks`;
    return this;
  }

  types(): string[] {
    return this.received.map((w) => w.event.type);
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

/**
 * The error the SDK rejected a call with, for the test to look at; a call that succeeded, or failed
 * with anything but a StripeError, fails the test.
 */
export async function rejected(promise: Promise<unknown>): Promise<Stripe.errors.StripeError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof Stripe.errors.StripeError)) throw new Error(`expected the call to be refused with a StripeError, got ${error === undefined ? 'a success' : String(error)}`);
  return error;
}

/** Narrows a retrieve that may answer a deleted stub (readers, locations) to the live object. */
export function notDeleted<T extends object>(value: T | { deleted: true }): T {
  if ((value as { deleted?: unknown }).deleted === true) throw new Error('object was deleted');
  return value as T;
}
