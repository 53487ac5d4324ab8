import { execFileSync, spawnSync } from 'node:child_process';
import { eventually } from './tmp.js';

/**
 * A terminal for the TUI's end-to-end tests: tmux on a private socket (so two runs on one machine
 * never share a screen), one session per screen, driven by key presses and read back as text.
 */
export class Tmux {
  private readonly socket = `pos-e2e-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  run(...args: string[]): string {
    return execFileSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  /**
   * Starts `command` in a new session of the given size. Ink renders only the last frame when it
   * thinks it runs in CI (CI=true on our CI machines): a shop PC never sets it, nor does this terminal.
   */
  start(session: string, command: string[], size: { columns: number; rows: number } = { columns: 80, rows: 24 }): void {
    const full = ['env', '-u', 'CI', '-u', 'CONTINUOUS_INTEGRATION', 'NO_COLOR=1', ...command];
    this.run('new-session', '-d', '-s', session, '-x', String(size.columns), '-y', String(size.rows), full.map((c) => `'${c}'`).join(' '));
    // Keep the pane after the program ends, so its exit status (and any last words) can be read.
    this.run('set-option', '-t', session, 'remain-on-exit', 'on');
  }

  screen(session: string): string {
    return this.run('capture-pane', '-p', '-t', session);
  }

  /** Named keys (Enter, Escape, C-u) as tmux knows them. */
  keys(session: string, ...keys: string[]): void {
    this.run('send-keys', '-t', session, ...keys);
  }

  /** Text sent in one write, as a paste, a keypad or a barcode scanner delivers it. */
  burst(session: string, text: string): void {
    this.run('send-keys', '-t', session, '-l', text);
  }

  waitFor(session: string, text: string | RegExp, timeoutMs = 15_000): Promise<string> {
    return eventually(
      () => {
        const s = this.screen(session);
        if (typeof text === 'string' ? s.includes(text) : text.test(s)) return s;
        throw new Error(`screen never showed ${String(text)}:\n${s}`);
      },
      timeoutMs,
      100,
    );
  }

  waitWithout(session: string, text: string | RegExp, timeoutMs = 15_000): Promise<string> {
    return eventually(
      () => {
        const s = this.screen(session);
        if (!(typeof text === 'string' ? s.includes(text) : text.test(s))) return s;
        throw new Error(`screen kept showing ${String(text)}:\n${s}`);
      },
      timeoutMs,
      100,
    );
  }

  /** The pane's process: `env` execs the program, so this is the program itself. */
  pid(session: string): number {
    return Number(this.run('display-message', '-p', '-t', session, '#{pane_pid}').trim());
  }

  /** [dead, exit status] of the pane's program. */
  status(session: string): { dead: boolean; status: string } {
    const [dead, status = ''] = this.run('display-message', '-p', '-t', session, '#{pane_dead} #{pane_dead_status}').trim().split(' ');
    return { dead: dead === '1', status };
  }

  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
  }
}
