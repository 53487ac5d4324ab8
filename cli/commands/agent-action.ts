import { loadAgentConfig, type AgentFlags } from '../../shared/config.js';

export async function runAgent(flags: AgentFlags): Promise<void> {
  const config = loadAgentConfig(flags);
  const { startAgent } = await import('../../agent/agent.js');
  const agent = await startAgent(config);
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
