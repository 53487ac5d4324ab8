import { join } from 'node:path';
import { loadSimulatorKeySettings, loadSimulatorLogLevel, loadSimulatorRateLimits } from '../../shared/config.js';
import { Keyring } from '../../shared/crypto/keyring.js';
import { PROCESSOR_CONNECT_EVENTS, PROCESSOR_EVENTS } from '../../shared/processor-events.js';
import { keySourceOf } from '../../shared/crypto/key-source.js';
import { usageError } from '../errors.js';
import type { CliIo } from '../io.js';

export interface SimulatorFlags {
  port: string;
  host: string;
  dataDir?: string;
  masterKeyFile?: string;
  logLevel?: string;
}

function portOf(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw usageError('--port must be a whole number from 0 to 65535');
  return port;
}

export async function simulatorAction(options: SimulatorFlags): Promise<void> {
  const port = portOf(options.port);
  const rateLimits = loadSimulatorRateLimits();
  const logLevel = loadSimulatorLogLevel(options);
  // The same main key as a server on the same data dir: its key file, unless one is given.
  const keys = loadSimulatorKeySettings(options);
  const keyring = new Keyring(keySourceOf(keys));
  const { runSimulator } = await import('../../simulator/main.js');
  await runSimulator({ dataDir: join(keys.dataDir, 'simulator'), port, host: options.host, rateLimits, keyring, logLevel });
}

/**
 * `pos simulator env`: the environment of the servers that share this simulator, as `KEY=value`
 * lines a shell (`set -a; . FILE`) and systemd (`EnvironmentFile=`) both read. Test mode only: the
 * simulator never stands in for live money. It opens the simulator's state, so it runs while no
 * simulator does (the state's lock says so otherwise); the webhook endpoints it makes for the URL
 * are kept, so running it again prints the same secrets. They subscribe to the events a pos server
 * handles (shared/processor-events.ts), as the embedded simulator's do: no others are sent.
 */
export async function simulatorEnv(options: SimulatorFlags & { webhookUrl: string }, io: CliIo): Promise<void> {
  const port = portOf(options.port);
  let webhookUrl: URL;
  try {
    webhookUrl = new URL(options.webhookUrl);
  } catch {
    throw usageError(`--webhook-url must be a URL, not ${options.webhookUrl}`);
  }
  const keys = loadSimulatorKeySettings(options);
  const { startSimulator } = await import('../../simulator/index.js');
  const sim = await startSimulator({ dataDir: join(keys.dataDir, 'simulator'), port: 0, host: '127.0.0.1', keyring: new Keyring(keySourceOf(keys)), logger: () => undefined });
  try {
    const platform = await sim.control.webhookEndpointFor(webhookUrl.href, false, false, PROCESSOR_EVENTS);
    const connect = await sim.control.webhookEndpointFor(webhookUrl.href, false, true, PROCESSOR_CONNECT_EVENTS);
    const host = options.host.includes(':') ? `[${options.host}]` : options.host;
    io.stdout.write(
      [
        `# pos servers sharing the simulator at http://${host}:${port} (state in ${keys.dataDir}), processor events to ${webhookUrl.href}`,
        'POS_PROCESSOR=stripe',
        `STRIPE_API_BASE=http://${host}:${port}`,
        `STRIPE_SECRET_KEY_TEST=${sim.keys.secretTest}`,
        `STRIPE_PUBLISHABLE_KEY_TEST=${sim.keys.publishableTest}`,
        `STRIPE_WEBHOOK_SECRET_TEST=${platform.secret}`,
        `STRIPE_WEBHOOK_SECRET_CONNECT_TEST=${connect.secret}`,
        '',
      ].join('\n'),
    );
  } finally {
    await sim.close();
  }
}
