import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POS_BIN } from './helpers/cli.js';
import { eventually, tempDir } from './helpers/tmp.js';
import { haveTmux } from './helpers/tools.js';

/**
 * The newcomer's path, for real: `pos up` in an 80×24 pseudo-terminal (tmux, on a private socket),
 * driven by key presses. With POS_WRITE_SCREENS=1 the captured screens are written to docs/screens/.
 */
const hasTmux = haveTmux();
const SOCKET = `pos-e2e-${process.pid}`;
const SCREENS = fileURLToPath(new URL('../docs/screens/', import.meta.url));
const dir = tempDir('pos-e2e-');

const tmux = (...args: string[]) => execFileSync('tmux', ['-L', SOCKET, ...args], { encoding: 'utf8' });
/** One tmux session per test process, so two runs on one machine never share a screen. */
const SESSION = `pos-up-${process.pid}`;
const screen = () => tmux('capture-pane', '-p', '-t', SESSION);
const keys = (...k: string[]) => tmux('send-keys', '-t', SESSION, ...k);

/** The TUI part of the screen: from the header line down, without the keys printed before it. */
function tuiPart(text: string): string {
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith('Demo Shop'));
  return `${lines.slice(start < 0 ? 0 : start).join('\n').trimEnd()}\n`;
}

function waitFor(text: string | RegExp, timeoutMs = 15_000): Promise<string> {
  return eventually(
    () => {
      const s = screen();
      if (typeof text === 'string' ? s.includes(text) : text.test(s)) return s;
      throw new Error(`screen never showed ${String(text)}:\n${s}`);
    },
    timeoutMs,
    100,
  );
}

function save(name: string, text: string): void {
  if (process.env.POS_WRITE_SCREENS) writeFileSync(join(SCREENS, `${name}.txt`), tuiPart(text));
}

describe.skipIf(!hasTmux)('pos up in a terminal (tmux, 80×24)', () => {
  let umask: number;
  beforeAll(() => {
    // The usual umask, which the private tmux server and `pos up` inherit: the last test checks
    // that what `pos up` writes stays owner-only under it.
    umask = process.umask(0o022);
    const command = [
      'env',
      // Ink renders only the last frame when it thinks it runs in CI (CI=true on our CI machines):
      // a shop PC never sets it, and neither does this terminal.
      '-u',
      'CI',
      '-u',
      'CONTINUOUS_INTEGRATION',
      'NO_COLOR=1',
      `POS_CONFIG_DIR=${join(dir.path, 'config')}`,
      process.execPath,
      POS_BIN,
      'up',
      '--port',
      '0',
      '--data-dir',
      join(dir.path, 'data'),
    ];
    tmux('new-session', '-d', '-s', SESSION, '-x', '80', '-y', '24', command.map((c) => `'${c}'`).join(' '));
    // Keep the pane after `pos up` ends, so its exit status (and any last words) can be read.
    tmux('set-option', '-t', SESSION, 'remain-on-exit', 'on');
  });
  afterAll(() => {
    spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
    process.umask(umask);
    dir.cleanup();
  });

  it('shows the demo keys on a screen of their own, then opens the counter', async () => {
    const intro = await waitFor('Press any key to open the counter', 25_000);
    expect(intro).toMatch(/sk_test +sk_test_\w+/);
    keys('Space');
    await waitFor('Press Enter to charge.');
    const first = await waitFor(/TEST MODE: simulated cards, no real money moves[\s\S]*● online/);
    expect(first).toContain('Amount  _  USD  Enter alone asks to charge 10.00');
    save('charge-entry', first);
  });

  it('takes the first charge from key presses to "approved"', async () => {
    keys('Enter');
    await waitFor('Charge $10.00 again? y/n');
    keys('y');
    save('charge-waiting', await waitFor('WAITING FOR CARD on Till 1: $10.00'));
    keys('s');
    const approved = await waitFor('✔ APPROVED  $10.00');
    expect(approved).toMatch(/visa ••4242 · no tip · txn_\w+/);
    expect(approved).toMatch(/Receipt: http:\/\/127\.0\.0\.1:\d+\/receipts\/\w+/);
    save('charge-approved', approved);
  });

  it('cancels the next one with one key', async () => {
    keys('Enter');
    await waitFor('Press Enter to charge.');
    keys('Enter');
    keys('y');
    await waitFor('WAITING FOR CARD');
    keys('x');
    const canceled = await waitFor('✘ CANCELED  $10.00');
    expect(canceled).toContain('Nothing was charged (canceled by staff).');
    save('charge-canceled', canceled);
  });

  it('shows readers, history and the day’s close-out', async () => {
    keys('Enter');
    await waitFor('Press Enter to charge.');
    keys('r');
    save('readers', await waitFor(/› Till 1\s+● online/));
    keys('h');
    await waitFor(/canceled/);
    const history = await waitFor('Page 1 of 1 (2 payments) · all payments');
    expect(history).toContain('Canceled by staff');
    expect(history).toMatch(/\$10\.00\s+succeeded\s+counter\s+visa ••4242/);
    save('history', history);
    // m asks the server for one channel: both payments were taken on the reader.
    keys('m');
    await waitFor('Page 1 of 1 (2 payments) · counter payments');
    keys('m');
    await waitFor('No online payments yet.');
    keys('m');
    await waitFor('Page 1 of 1 (2 payments) · all payments');
    keys('d');
    const day = await waitFor(/All\s+1\s+\$10\.00\s+0\s+1/);
    expect(day).toMatch(/Till 1\s+1\s+\$10\.00/);
    save('day', day);
  });

  it('asks for a refund from the history with f, then y, and says the counter key cannot refund', async () => {
    keys('h');
    await waitFor(/›.*canceled/);
    keys('Down');
    await waitFor(/› \S+\s+\$10\.00\s+succeeded/);
    keys('f');
    await waitFor('Refund $10.00 of txn_');
    keys('y');
    // `pos up` runs the counter on a restricted key with the counter preset: refunds are the owner's.
    const refused = await waitFor("This counter's key can't refund: the shop owner refunds with the secret key.");
    expect(refused).toMatch(/\$10\.00\s+succeeded\s+counter\s+visa ••4242/);
  });

  it('quits with q, after saying what quitting stops', async () => {
    keys('c');
    await waitFor('Press Enter to charge.');
    keys('q');
    expect(await waitFor('Quit? This stops the server, the simulator and the agent.')).toContain('y quit');
    // A key sent while the previous screen is still settling is sometimes lost between tmux and
    // Ink; staff would press again, and so does the test (at most three times).
    const end = Date.now() + 15_000;
    let presses = 0;
    let nextPress = 0;
    // Dead with status 0; tmux sometimes reports a dead pane before it has the status (empty then).
    const exited = () => {
      const [dead, status = ''] = tmux('display-message', '-p', '-t', SESSION, '#{pane_dead} #{pane_dead_status}').trim().split(' ');
      return dead === '1' && (status === '' || status === '0');
    };
    while (!exited()) {
      if (Date.now() > end) {
        const log = join(dir.path, 'data', 'pos-up.log');
        const tail = existsSync(log) ? readFileSync(log, 'utf8').split('\n').slice(-8).join('\n') : '(no log)';
        const pane = tmux('display-message', '-p', '-t', SESSION, '#{pane_dead} status=#{pane_dead_status} signal=#{pane_dead_signal}').trim();
        throw new Error(`pos up did not exit cleanly after ${presses} presses of y (pane dead/status: ${pane}):\n${screen()}\nlog:\n${tail}`);
      }
      if (Date.now() >= nextPress && presses < 3) {
        keys('y');
        presses += 1;
        nextPress = Date.now() + 4_000;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it('leaves its data dir, log, agent state and profile readable by their owner only', () => {
    const modes: Record<string, number> = {};
    const walk = (path: string): void => {
      const stats = lstatSync(path);
      modes[relative(dir.path, path)] = stats.mode & 0o777;
      if (stats.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
    };
    walk(join(dir.path, 'data'));
    walk(join(dir.path, 'config'));
    expect(Object.keys(modes)).toEqual(expect.arrayContaining(['data/pos-up.log', 'data/pos.db', 'data/simulator/simulator.db', 'data/agent/agent.db', 'config/config.json']));
    expect(Object.entries(modes).filter(([, mode]) => (mode & 0o077) !== 0)).toEqual([]);
  });
});
