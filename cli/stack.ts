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
import { Keyring } from '../shared/crypto/keyring.js';
import { keySourceOf } from '../shared/crypto/key-source.js';
import { openStoreWithKeys } from '../server/db/encryption.js';

/**
 * Composes what `pos server` runs: the API server and, on the default processor, the simulator it
 * talks to over HTTP. The server itself never imports the simulator.
 */
export interface Stack {
  server: RunningServer;
  simulator?: RunningSimulator;
  close(): Promise<void>;
}

export interface StackOptions {
  logger?: Logger;
  clock?: Clock;
  simulator?: Partial<Omit<SimulatorOptions, 'dataDir'>>;
  processorEventHandlers?: readonly ProcessorEventHandler[];
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

export function simulatorConnection(simulator: RunningSimulator, rateLimits = true, accounts?: AccountPolicy): ProcessorConnection {
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
  let connection: ProcessorConnection;
  // The database's main key decides first (and a new data dir's key file is made by it); one
  // keyring for both, so a key the server learns in a rotation is the simulator's too.
  const keyring = new Keyring(keySourceOf(config));
  const opened = await openStoreWithKeys(config, keyring, { now: (options.clock ?? systemClock).now(), logger }, { onLooseFile: warnLooseFiles(logger) });
  try {
    if (config.processor === 'simulator') {
      const { startSimulator } = await import('../simulator/index.js');
      const rateLimits = options.simulator?.rateLimits ?? config.simulatorRateLimits;
      // The data dir holds the simulator's store whichever database holds the ledger.
      privateDir(config.dataDir, warnLooseFiles(logger));
      simulator = await startSimulator({ dataDir: join(config.dataDir, 'simulator'), onLooseFile: warnLooseFiles(logger), ...options.simulator, rateLimits, keyring });
      connection = simulatorConnection(simulator, rateLimits, {
        type: config.accountType,
        prefill: { test: true, live: config.simulateLive && config.simulatedLiveAccounts === 'ready' },
      });
    } else {
      connection = stripeConnection(config);
    }
  } catch (err) {
    await opened.store.close();
    throw err;
  }
  let server: RunningServer;
  try {
    server = await startServer(config, {
      processor: connection,
      opened,
      logger,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.processorEventHandlers ? { processorEventHandlers: options.processorEventHandlers } : {}),
    });
  } catch (err) {
    await simulator?.close();
    // The server closes the store it was given once it started; before that it is the stack's.
    await opened.store.close().catch(() => undefined);
    throw err;
  }
  return {
    server,
    ...(simulator ? { simulator } : {}),
    async close() {
      await server.close();
      await simulator?.close();
    },
  };
}
