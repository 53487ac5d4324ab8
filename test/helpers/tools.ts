import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * Programs some tests drive (Debian's chromium, tmux, socat, systemd-analyze). On a machine without one, its tests
 * are skipped with one line saying what to install, so `npm test` passes on a newcomer's machine;
 * CI sets POS_TEST_REQUIRE_TOOLS=1 (.ci/run installs them), and there a missing one fails the run.
 */
export function haveTool(name: string, probe: () => boolean, install: string): boolean {
  if (probe()) return true;
  const line = `${name} is not installed: its tests are skipped (install it with \`${install}\`)`;
  if (process.env.POS_TEST_REQUIRE_TOOLS === '1') throw new Error(`${line}; POS_TEST_REQUIRE_TOOLS=1 requires it`);
  console.warn(line);
  return false;
}

export const onPath = (command: string) => (): boolean => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;

export const CHROMIUM_PATH = '/usr/bin/chromium';
export const haveChromium = (): boolean => haveTool('chromium', () => existsSync(CHROMIUM_PATH), 'apt-get install -y chromium');
export const haveTmux = (): boolean => haveTool('tmux', onPath('tmux'), 'apt-get install -y tmux');
export const haveSocat = (): boolean => haveTool('socat', onPath('socat'), 'apt-get install -y socat');
export const haveSystemdAnalyze = (): boolean =>
  haveTool('systemd-analyze', () => spawnSync('systemd-analyze', ['--version']).status === 0, 'apt-get install -y systemd');
/** util-linux `script`: a pty that records every byte a program writes to its terminal. */
export const haveScript = (): boolean => haveTool('script', onPath('script'), 'apt-get install -y bsdutils');
/** The fish shell, to load `pos completion fish` in. */
export const haveFish = (): boolean => haveTool('fish', onPath('fish'), 'apt-get install -y fish');
