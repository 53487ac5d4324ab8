import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { ConfigError, type ServerConfig } from '../shared/config.js';
import { privateDir, warnLooseFiles } from '../shared/files.js';
import { type Clock, systemClock } from '../shared/time.js';
import type { ProcessorConnection } from '../server/processor/connection.js';
import type { AccountPolicy } from '../server/processor/port.js';
import type { ProcessorEventHandler } from '../server/processor/events-route.js';
import { startServer, type RunningServer } from '../server/main.js';
import type { RunningSimulator, SimulatorOptions } from '../simulator/index.js';
import type { SimulatorLaunch, SimulatorProcess } from '../simulator/process.js';
import { Keyring } from '../shared/crypto/keyring.js';
import { keySourceOf } from '../shared/crypto/key-source.js';
import { openStoreWithKeys } from '../server/db/encryption.js';

/**
 * Composes what `pos server` runs: the API server and, on the default processor, the simulator it
 * talks to over HTTP. The server itself never imports the simulator.
 */
export interface Stack {
  server: RunningServer;
  /** The embedded simulator when it runs in this process (its control surface reachable directly). */
  simulator?: RunningSimulator;
  /** The embedded simulator when it runs in a child process of its own (`simulatorProcess`). */
  simulatorProcess?: SimulatorProcess;
  close(): Promise<void>;
}

export interface StackOptions {
  logger?: Logger;
  clock?: Clock;
  simulator?: Partial<Omit<SimulatorOptions, 'dataDir'>>;
  processorEventHandlers?: readonly ProcessorEventHandler[];
  /**
   * Runs the embedded simulator in a child process of its own, as `pos server` and `pos up` do: the
   * processor's work then uses another core instead of the server's event loop. In process (the
   * default here) a test reaches its control surface directly; the child runs built code (dist/).
   * A child already forked (`launchSimulatorProcess`) is started, or ended if the stack fails first.
   */
  simulatorProcess?: boolean | SimulatorLaunch;
}

export function stripeConnection(config: ServerConfig): ProcessorConnection {
  const s = config.stripe;
  if (!s.secretKeyTest && !s.secretKeyLive) {
    throw new ConfigError('--processor stripe needs STRIPE_SECRET_KEY_TEST and/or STRIPE_SECRET_KEY_LIVE (see docs/processor.md)');
  }
  if (s.webhookSecrets.length === 0) {
    throw new ConfigError('--processor stripe needs STRIPE_WEBHOOK_SECRET (the signing secret of the endpoint pointed at /processor/webhooks)');
  }
  const base = s.apiBase ? new URL(s.apiBase) : undefined;
  return {
    kind: 'stripe',
    secretKeys: { test: s.secretKeyTest, live: s.secretKeyLive },
    publishableKeys: { test: s.publishableKeyTest, live: s.publishableKeyLive },
    webhookSecrets: [...s.webhookSecrets],
    // A live Stripe key never takes test values: live accounts walk onboarding.
    accounts: { type: config.accountType, prefill: { test: true, live: false } },
    ...(base
      ? {
          endpoint: { host: base.hostname, port: Number(base.port || (base.protocol === 'https:' ? 443 : 80)), protocol: base.protocol === 'https:' ? ('https' as const) : ('http' as const) },
          browserUrl: base.origin,
          // Another base URL is a standalone simulator; Stripe's own API never lifts its limits.
          ...(config.simulatorRateLimits ? {} : { unlimited: true }),
        }
      : {}),
  };
}

export function simulatorConnection(simulator: Omit<RunningSimulator, 'control' | 'close'>, rateLimits = true, accounts?: AccountPolicy): ProcessorConnection {
  return {
    ...(accounts ? { accounts } : {}),
    ...(rateLimits ? {} : { unlimited: true }),
    kind: 'simulator',
    secretKeys: { test: simulator.keys.secretTest, live: simulator.keys.secretLive },
    publishableKeys: { test: simulator.keys.publishableTest, live: simulator.keys.publishableLive },
    webhookSecrets: [],
    endpoint: { host: simulator.host, port: simulator.port, protocol: simulator.protocol },
    browserUrl: simulator.url,
  };
}

export async function startStack(config: ServerConfig, options: StackOptions = {}): Promise<Stack> {
  // One logger for both, so the embedded simulator's warnings (a loose data dir) are not lost.
  const logger = options.logger ?? pino({ level: config.logLevel });
  let simulator: RunningSimulator | undefined;
  let child: SimulatorProcess | undefined;
  // Set once the server runs: the child's crash and restart reach its readiness at once.
  let started: RunningServer | undefined;
  let connection: ProcessorConnection;
  // The database's main key decides first (and a new data dir's key file is made by it); one
  // keyring for both in process, so a key the server learns in a rotation is the simulator's too
  // (a simulator process reads the same key source, and again when it meets a key it lacks).
  const launched = typeof options.simulatorProcess === 'object' ? options.simulatorProcess : undefined;
  let keyring: Keyring;
  let opened: Awaited<ReturnType<typeof openStoreWithKeys>>;
  try {
    keyring = new Keyring(keySourceOf(config));
    opened = await openStoreWithKeys(config, keyring, { now: (options.clock ?? systemClock).now(), logger }, { onLooseFile: warnLooseFiles(logger) });
  } catch (err) {
    launched?.discard();
    throw err;
  }
  try {
    if (config.processor === 'simulator') {
      const rateLimits = options.simulator?.rateLimits ?? config.simulatorRateLimits;
      // The data dir holds the simulator's store whichever database holds the ledger.
      privateDir(config.dataDir, warnLooseFiles(logger));
      const dataDir = join(config.dataDir, 'simulator');
      let embedded: Omit<RunningSimulator, 'control' | 'close'>;
      if (options.simulatorProcess) {
        const { startSimulatorProcess } = await import('../simulator/process.js');
        const s = options.simulator ?? {};
        // Plain values only cross to the child; it makes its own keyring from the same source.
        const settings = {
          ...(s.host !== undefined ? { host: s.host } : {}),
          ...(s.port !== undefined ? { port: s.port } : {}),
          ...(s.authorizationDelayMs !== undefined ? { authorizationDelayMs: s.authorizationDelayMs } : {}),
          ...(s.achSettlementDelayMs !== undefined ? { achSettlementDelayMs: s.achSettlementDelayMs } : {}),
          ...(s.disputeDelayMs !== undefined ? { disputeDelayMs: s.disputeDelayMs } : {}),
          ...(s.verificationDelayMs !== undefined ? { verificationDelayMs: s.verificationDelayMs } : {}),
          ...(s.accountLinkTtlMs !== undefined ? { accountLinkTtlMs: s.accountLinkTtlMs } : {}),
        };
        child = await startSimulatorProcess({
          ...(launched ? { launched } : {}),
          settings: { ...settings, dataDir, rateLimits, keySource: keyring.source },
          logger,
          onLooseFile: warnLooseFiles(logger),
          onAvailability: () => void started?.readiness.refreshProcessor(),
        });
        embedded = child;
      } else {
        const { startSimulator } = await import('../simulator/index.js');
        simulator = await startSimulator({ dataDir, onLooseFile: warnLooseFiles(logger), ...options.simulator, rateLimits, keyring });
        embedded = simulator;
      }
      connection = simulatorConnection(embedded, rateLimits, {
        type: config.accountType,
        prefill: { test: true, live: config.simulateLive && config.simulatedLiveAccounts === 'ready' },
      });
    } else {
      launched?.discard();
      connection = stripeConnection(config);
    }
  } catch (err) {
    launched?.discard();
    await opened.store.close();
    throw err;
  }
  let server: RunningServer;
  try {
    server = started = await startServer(config, {
      processor: connection,
      opened,
      logger,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.processorEventHandlers ? { processorEventHandlers: options.processorEventHandlers } : {}),
    });
  } catch (err) {
    await simulator?.close();
    await child?.close();
    // The server closes the store it was given once it started; before that it is the stack's.
    await opened.store.close().catch(() => undefined);
    throw err;
  }
  return {
    server,
    ...(simulator ? { simulator } : {}),
    ...(child ? { simulatorProcess: child } : {}),
    async close() {
      await server.close();
      await simulator?.close();
      await child?.close();
    },
  };
}
