import { join } from 'node:path';
import { loadSimulatorKeySettings, loadSimulatorRateLimits } from '../../shared/config.js';
import { Keyring } from '../../shared/crypto/keyring.js';
import { keySourceOf } from '../../shared/crypto/key-source.js';
import { usageError } from '../errors.js';

export async function simulatorAction(options: { port: string; host: string; dataDir?: string; masterKeyFile?: string }): Promise<void> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw usageError('--port must be a whole number from 0 to 65535');
  const rateLimits = loadSimulatorRateLimits();
  // The same main key as a server on the same data dir: its key file, unless one is given.
  const keys = loadSimulatorKeySettings(options);
  const keyring = new Keyring(keySourceOf(keys));
  const { runSimulator } = await import('../../simulator/main.js');
  await runSimulator({ dataDir: join(keys.dataDir, 'simulator'), port, host: options.host, rateLimits, keyring });
}
