import { join } from 'node:path';
import { loadDataDir, loadSimulatorRateLimits } from '../../shared/config.js';
import { usageError } from '../errors.js';

export async function simulatorAction(options: { port: string; host: string; dataDir?: string }): Promise<void> {
  const port = Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw usageError('--port must be a whole number from 0 to 65535');
  const rateLimits = loadSimulatorRateLimits();
  const { runSimulator } = await import('../../simulator/main.js');
  await runSimulator({ dataDir: join(loadDataDir(options), 'simulator'), port, host: options.host, rateLimits });
}
