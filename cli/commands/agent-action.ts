import { loadAgentConfig, type AgentFlags } from '../../shared/config.js';
import type { CliIo } from '../io.js';
import { processLogger } from '../log.js';

export async function runAgent(flags: AgentFlags, io: CliIo): Promise<void> {
  const config = loadAgentConfig(flags, io.env);
  const { startAgent } = await import('../../agent/agent.js');
  const agent = await startAgent(config, { logger: processLogger(config.logLevel, io.stdout, io.env) });
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      agent.logger.info({ signal }, 'stopping');
      agent.close().then(resolve, (err: unknown) => {
        agent.logger.error({ err }, 'shutdown failed');
        process.exitCode = 1;
        resolve();
      });
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
