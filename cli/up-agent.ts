import { join } from 'node:path';
import type { Logger } from 'pino';
import { DEFAULT_AGENT_LISTEN, loadAgentConfig } from '../shared/config.js';
import type { Stack } from './stack.js';

/**
 * `pos up` starts the on-premise agent in process beside the demo reader: its processor driver
 * follows the simulated "Till 1" registered at the demo location, and the TUI speaks the agent's
 * local websocket (shared/agent-protocol.ts) rather than polling /v1.
 */
export interface LocalAgent {
  /** ws:// URL of the agent's local websocket. */
  url: string;
  close(): Promise<void>;
}

/** The till's printer and display (`pos up --printer/--display`): as `pos agent` takes them. */
export interface LocalDevices {
  printer?: string | undefined;
  display?: string | undefined;
}

export async function startLocalAgent(deps: { stack: Stack; apiKey: string; dataDir: string; logger: Logger; listen?: string | undefined; devices?: LocalDevices }): Promise<LocalAgent> {
  const { startAgent } = await import('../agent/agent.js');
  const settings = { server: deps.stack.server.url, apiKey: deps.apiKey, dataDir: join(deps.dataDir, 'agent'), printer: deps.devices?.printer, display: deps.devices?.display };
  // A chosen address is kept or refused, never swapped for another: the caller reports it in use.
  if (deps.listen !== undefined) return startAgent(loadAgentConfig({ ...settings, listen: deps.listen }, {}), { logger: deps.logger });
  try {
    // The rest of the agent's environment is not consulted: this agent belongs to this `pos up` and its demo shop.
    return await startAgent(loadAgentConfig({ ...settings, listen: DEFAULT_AGENT_LISTEN }, {}), { logger: deps.logger });
  } catch (err) {
    // Another agent (or another pos up) has the usual port: take any free one.
    if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    return startAgent(loadAgentConfig({ ...settings, listen: '127.0.0.1:0' }, {}), { logger: deps.logger });
  }
}
