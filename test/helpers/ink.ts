import { eventually } from './tmp.js';

/** Waits for an ink-testing-library frame to contain `text`: renders are asynchronous and the machine may be busy. */
export function frameWith(ui: { lastFrame(): string | undefined }, text: string, timeoutMs = 3000): Promise<string> {
  return eventually(
    () => {
      const f = ui.lastFrame() ?? '';
      if (f.includes(text)) return f;
      throw new Error(`frame never showed "${text}":\n${f}`);
    },
    timeoutMs,
    10,
  );
}
