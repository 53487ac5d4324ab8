import { loadServerConfig, type ServerConfig, type ServerFlags } from '../../shared/config.js';
import { DataDirLock } from '../data-dir-lock.js';
import type { CliIo } from '../io.js';
import { processLogger } from '../log.js';

const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** `pos server`, configured from its flags and the environment of its run, logging to its output (cli/io.ts). */
export async function runServer(flags: ServerFlags, io: CliIo): Promise<void> {
  const config = loadServerConfig(flags, io.env);
  // The data dir is this server's alone when it holds the SQLite ledger or the embedded simulator.
  // Instances on one PostgreSQL database with Stripe share only the main key there, read-only.
  const lock = !config.databaseUrl || config.processor === 'simulator' ? DataDirLock.acquire(config.dataDir, 'pos server') : undefined;
  try {
    await serve(config, lock, io);
  } finally {
    lock?.release();
  }
}

async function serve(config: ServerConfig, lock: DataDirLock | undefined, io: CliIo): Promise<void> {
  // The embedded simulator's process is forked before the server's code is loaded: the two
  // start-ups overlap instead of adding up.
  const launched = config.processor === 'simulator' ? (await import('../../simulator/process.js')).launchSimulatorProcess() : undefined;
  const { startStack } = await import('../stack.js');
  const stack = await startStack(config, { logger: processLogger(config.logLevel, io.stdout, io.env), simulatorProcess: launched ?? true });
  const server = stack.server;
  lock?.listening(server.port);
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      server.logger.info({ signal }, 'draining');
      stack.close().then(resolve, (err: unknown) => {
        server.logger.error({ err }, 'shutdown failed');
        process.exitCode = 1;
        resolve();
      });
    };
    // A server has no configuration to reload, so SIGHUP (its terminal or SSH session closing) stops
    // it as SIGTERM does: drained and logged, exit 0, never killed mid-request.
    for (const signal of STOP_SIGNALS) process.once(signal, stop);
  });
}
