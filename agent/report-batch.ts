import { MAX_REPORTS_PER_MESSAGE, type AgentUpMessage, type Report } from '../shared/agent-upstream.js';

/**
 * Reports made within this long of each other go upstream in one message: a shop whose readers all
 * change at once sends one message every 50 ms at most, however many readers it has, which keeps
 * every agent far below the server's message rate (docs/agent-protocol.md, "Limits"). A counter
 * does not notice 50 ms; the local websocket shows each change at once.
 */
export const REPORT_FLUSH_MS = 50;

/**
 * Collects reader-activity reports and sends them together. A report is already in the agent's
 * queue on disk when it gets here: one that does not reach the server now is replayed after the
 * next welcome.
 */
export class ReportBatch {
  #pending: Report[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly send: (message: AgentUpMessage & { type: 'reports' }) => void) {}

  add(report: Report): void {
    this.#pending.push(report);
    this.#timer ??= setTimeout(() => this.flush(), REPORT_FLUSH_MS);
  }

  /** Sends what is pending now. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const pending = this.#pending;
    this.#pending = [];
    for (let i = 0; i < pending.length; i += MAX_REPORTS_PER_MESSAGE) this.send({ type: 'reports', reports: pending.slice(i, i + MAX_REPORTS_PER_MESSAGE) });
  }
}
