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
  /** Aborted when the process is told to stop (SIGTERM, SIGHUP): the counter closes as on quit. */
  stop?: AbortSignal | undefined;
}

const SHOW_CURSOR = '\u001B[?25h';

/** Opens the counter on the terminal and resolves when staff quit it. */
export async function runTui(options: TuiOptions): Promise<void> {
  const source: CounterSource = options.agentUrl ? new AgentSource(options.agentUrl, options.api) : new PollingSource(options.api);
  const app = render(<App source={source} api={options.api} color={options.color} notice={options.notice} intro={options.intro} quitWarning={options.quitWarning} />);
  // Unmounting is what quitting does: Ink shows the cursor again and gives the terminal back.
  const close = () => app.unmount();
  options.stop?.addEventListener('abort', close, { once: true });
  if (options.stop?.aborted) close();
  try {
    await app.waitUntilExit();
  } finally {
    options.stop?.removeEventListener('abort', close);
    source.stop();
    // Ink's last frame does not always show the cursor again; a counter left with none is broken.
    if (process.stdout.isTTY && process.stdout.writable) process.stdout.write(SHOW_CURSOR);
  }
}
