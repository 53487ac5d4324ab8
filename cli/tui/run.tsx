import { render } from 'ink';
import type { PosApi } from '../../shared/api/client.js';
import { AgentSource } from './agent-source.js';
import { App } from './components/App.js';
import { PollingSource, type CounterSource } from './source.js';

export interface TuiOptions {
  api: PosApi;
  /** The agent's websocket; without one the counter polls the API. */
  agentUrl?: string | undefined;
  color: boolean;
  notice?: string | undefined;
  /** Shown on a screen of its own until a key is pressed. */
  intro?: string[] | undefined;
  /** What quitting stops ("the server and the agent"): q then asks first. */
  quitWarning?: string | undefined;
}

/** Opens the counter on the terminal and resolves when staff quit it. */
export async function runTui(options: TuiOptions): Promise<void> {
  const source: CounterSource = options.agentUrl ? new AgentSource(options.agentUrl, options.api) : new PollingSource(options.api);
  const app = render(<App source={source} api={options.api} color={options.color} notice={options.notice} intro={options.intro} quitWarning={options.quitWarning} />);
  try {
    await app.waitUntilExit();
  } finally {
    source.stop();
  }
}
