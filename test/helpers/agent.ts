import { type ChildProcess, spawn } from 'node:child_process';
import WebSocket from 'ws';
import { AgentMessageSchema, type AgentMessage, type ReaderState } from '../../shared/agent-protocol.js';
import { POS_BIN, THROWAWAY_CONFIG_DIR } from './cli.js';
import { eventually } from './tmp.js';

export interface AgentProcess {
  child: ChildProcess;
  url: string;
  agentId: string;
  logs: string[];
  /** Resolves once a log line with this message has been printed (now or later). */
  logged(msg: string, timeoutMs?: number): Promise<{ time: number } & Record<string, unknown>>;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `pos agent` as a real child process; the local websocket URL comes from its JSON log. */
export async function spawnAgent(args: string[], env: Record<string, string> = {}): Promise<AgentProcess> {
  const child = spawn(process.execPath, [POS_BIN, 'agent', '--listen', '127.0.0.1:0', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, POS_CONFIG_DIR: THROWAWAY_CONFIG_DIR, ...env },
  });
  const logs: string[] = [];
  const entries: Record<string, unknown>[] = [];
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let buffer = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf('\n');
    while (newline >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      logs.push(line);
      try {
        entries.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // not a log line
      }
      newline = buffer.indexOf('\n');
    }
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => logs.push(chunk));
  let dead = false;
  void exited.then(() => (dead = true));
  const logged = (msg: string, timeoutMs = 15_000) =>
    eventually(() => {
      if (dead) throw new Error(`agent exited: ${logs.join('\n')}`);
      return entries.find((e) => e.msg === msg) as ({ time: number } & Record<string, unknown>) | undefined;
    }, timeoutMs).catch((err: unknown) => {
      throw new Error(`${String(err)}\n${logs.join('\n')}`);
    });
  const listening = await logged('pos agent listening');
  return {
    child,
    url: String(listening.url),
    agentId: String(listening.agent_id),
    logs,
    logged,
    exited,
    async stop(signal = 'SIGTERM') {
      if (!dead) child.kill(signal);
      return exited;
    },
  };
}

/** A counter on the agent's local websocket: every message validated and kept in order. */
export class CounterClient {
  readonly messages: AgentMessage[] = [];
  #ws: WebSocket;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on('message', (data) => {
      this.messages.push(AgentMessageSchema.parse(JSON.parse(data.toString())));
    });
  }

  static async connect(url: string): Promise<CounterClient> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    return new CounterClient(ws);
  }

  send(message: unknown): void {
    this.#ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  get closed(): boolean {
    return this.#ws.readyState !== WebSocket.OPEN;
  }

  next<T extends AgentMessage['type']>(type: T, where: (m: Extract<AgentMessage, { type: T }>) => boolean = () => true, timeoutMs = 10_000, from = 0): Promise<Extract<AgentMessage, { type: T }>> {
    return eventually(() => this.messages.slice(from).find((m): m is Extract<AgentMessage, { type: T }> => m.type === type && where(m as Extract<AgentMessage, { type: T }>)), timeoutMs);
  }

  /** Sends a command and waits for its result. */
  async command(message: { type: string; request_id: string } & Record<string, unknown>, timeoutMs = 15_000) {
    const from = this.messages.length;
    this.send(message);
    return this.next('result', (m) => m.request_id === message.request_id, timeoutMs, from);
  }

  /** The reader as the latest `readers` or `reader` message shows it. */
  latest(readerId: string): ReaderState | undefined {
    for (let i = this.messages.length - 1; i >= 0; i -= 1) {
      const m = this.messages[i]!;
      if (m.type === 'reader' && (m.reader.processor_terminal_id === readerId || m.reader.id === readerId)) return m.reader;
      if (m.type === 'readers') {
        const found = m.readers.find((r) => r.processor_terminal_id === readerId || r.id === readerId);
        if (found) return found;
      }
    }
    return undefined;
  }

  /** The activities one reader went through, consecutive repeats folded. */
  activities(readerId: string, from = 0): ReaderState['activity'][] {
    const seen: ReaderState['activity'][] = [];
    for (const m of this.messages.slice(from)) {
      if (m.type !== 'reader' || (m.reader.processor_terminal_id !== readerId && m.reader.id !== readerId)) continue;
      if (seen[seen.length - 1] !== m.reader.activity) seen.push(m.reader.activity);
    }
    return seen;
  }

  close(): void {
    this.#ws.close();
  }
}
