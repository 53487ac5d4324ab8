import { loadServerConfig, type ServerFlags } from '../../shared/config.js';
import { startStack } from '../stack.js';

export async function runServer(flags: ServerFlags): Promise<void> {
  const config = loadServerConfig(flags);
  const stack = await startStack(config);
  const server = stack.server;
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      server.logger.info({ signal }, 'draining');
      stack.close().then(resolve, (err: unknown) => {
        server.logger.error({ err }, 'shutdown failed');
        process.exitCode = 1;
        resolve();
      });
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
